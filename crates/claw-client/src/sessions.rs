//! The client's sessions as one slice: switching (start-up, `/new`, `/sessions`, a fork
//! of one another process writes), the `/sessions` picker and its completion, and
//! whether saving works. The root `Msg` and `Effect` carry these as `Sessions(..)`; the
//! model side is `app/sessions.rs` (a loaded history rebuilds the chat, the tree and the
//! totals), the runtime side the session host (`host/session_host.rs`, [`Effect`]s through
//! `SessionHost::run`).

use super::msg::QueuedText;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

/// What the runtime tells about the sessions.
#[derive(Clone, Debug)]
pub enum Msg {
    /// Another session replaced the current one (start-up, `/new`, `/sessions`):
    /// rebuild the chat, the tool tree and the usage totals from its history.
    Loaded(Box<LoadedSession>),
    /// The workspace's sessions, most recent first, for the `/sessions` picker.
    List(Vec<SessionRow>),
    /// The workspace's sessions for `/sessions ID` completion: id and description.
    Choices(Vec<(String, String)>),
    /// A switch of sessions failed; the current one goes on. Shared, so the error
    /// (which may hold an I/O error) can travel in a message.
    Failed(Arc<claw_runtime::session::SwitchError>),
    /// The session chosen is written by another claw-tui process: offer a copy.
    Locked {
        /// Its file.
        path: PathBuf,
        /// Its id.
        id: String,
    },
    /// Saving the session failed (the error), or works again (`None`).
    Save(Option<String>),
}

/// What the model asks the runtime to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Start a fresh session (answered with `Msg::Loaded`).
    New,
    /// Switch to the session in this file (answered with `Msg::Loaded`, or
    /// `Msg::Locked` when another process writes it); `fork` continues in a new
    /// session that starts from a copy of its history.
    Open {
        /// The session file.
        path: PathBuf,
        /// Copy instead of resuming.
        fork: bool,
    },
    /// Open the session whose id starts with this (answered like `Open`).
    OpenById(String),
    /// List the workspace's sessions (answered with `Msg::List`).
    List,
    /// List the workspace's sessions for completion (answered with `Msg::Choices`).
    ListChoices,
    /// The chat shows the loaded session: notifications waiting for it may start now.
    Ready,
    /// Name the session in this file (`/name`; an empty name removes it), answered with
    /// a notice.
    Name {
        /// The session file.
        path: PathBuf,
        /// The name.
        name: String,
    },
}

/// A session the client switched to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadedSession {
    /// Its id (`None` when sessions are off: `--no-session`).
    pub id: Option<String>,
    /// Its history: the messages the agent holds, shared (the chat keeps no copy).
    pub messages: std::sync::Arc<[claw_agent::Message]>,
    /// Messages that were queued when it was last written, offered back in the composer.
    pub queued: Vec<QueuedText>,
    /// Its file (`None` when sessions are off).
    pub path: Option<PathBuf>,
    /// Whether it continues an earlier session (rather than starting empty).
    pub resumed: bool,
    /// A fresh session at start-up: nothing to announce.
    pub quiet: bool,
    /// Things to tell the user (a copy was made, a torn line was skipped...).
    pub notes: Vec<String>,
    /// Its subagents' calls, for the tool tree.
    pub nested: Vec<claw_runtime::session::SubagentCall>,
    /// Its compactions, oldest first: the chat marks each after the messages it
    /// summarised.
    pub compactions: Vec<claw_agent::Compaction>,
    /// How full the context window is with its history (the model sees the summary).
    pub context: Option<claw_agent::ContextUsage>,
}

/// One row of the `/sessions` picker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRow {
    /// Session id.
    pub id: String,
    /// Its file.
    pub path: PathBuf,
    /// Creation time.
    pub created: SystemTime,
    /// Last write.
    pub last_activity: SystemTime,
    /// The first user prompt.
    pub first_prompt: Option<String>,
    /// Messages recorded.
    pub message_count: usize,
    /// Results (subagents, cron) waiting to be delivered when it is opened.
    pub waiting: usize,
    /// The name given with `/name`.
    pub name: Option<String>,
    /// Its last prompt and answer, for the picker's preview.
    pub last: claw_runtime::session::LastExchange,
}
