//! Durable sessions: one append-only JSON Lines file per conversation.
//!
//! The first line is a header; then one line per completed message, queue change and
//! setting change. A dedicated writer thread appends lines as they happen and `fsync`s
//! at every turn end, run end and before exit. The answer being streamed goes to a side
//! file a few times a second, so a crash loses nothing that was shown: the next resume
//! records it as an aborted message. A write that fails is reported, retried at the
//! next turn boundary and never leaves a partial line; a damaged file is read line by
//! line, skipping (and reporting) only what is damaged.
//!
//! [`SessionService`] owns the session a process records: the client and the headless
//! modes open, switch, record and close sessions through it.

mod binding;
pub mod event_refs;
pub mod events;
pub mod export;
mod fast;
mod file;
pub mod images;
mod inbox;
mod list;
mod load;
pub mod name;
mod open;
mod preview;
mod record;
mod repair;
mod route;
mod service;
pub mod side_log;
mod sink;
mod streaming;
mod subagent_calls;
mod writer;

pub use binding::{RequestLogStart, SessionBinding, SessionFollower, SideRecorder};
pub use events::{CronChanges, EventRecording, event_json, events_path};
pub use file::{damaged_path, sessions_dir, streaming_path};
pub use list::{
    SessionSummary, find_or_latest, find_session, latest_session, list_sessions, session_path_by_id,
};
pub use load::{RecentMessages, SessionData, load, load_recent};
pub use open::{OpenedSession, SessionChoice, open_session};
pub use preview::LastExchange;
pub use record::{record_events, record_events_with};
pub use route::{SessionRouter, inbox_path, record_undelivered};
pub use service::{Entered, Resume, SaveWatch, SessionService, SessionTarget, SwitchError};
pub use side_log::requests_path;
pub use sink::{FileSink, SaveStatus, SessionSink, SideLogReport};
pub use streaming::{FLUSH_EVERY, STOPPED_BEFORE_ANSWER, STOPPED_WHILE_STREAMING};
pub use subagent_calls::{
    SubagentCall, SubagentCallWriter, SubagentCalls, read_subagent_calls, subagent_calls_path,
};
pub use writer::{SessionAppender, SessionWriter, WrapSink};

use crate::agent::{Compaction, Message};
use crate::runtime::InboundMessage;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The format version this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;

/// Why a session could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// File system trouble.
    #[error("session file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Written by a newer claw-tui.
    #[error(
        "session file {path} has format version {found}, newer than this claw-tui understands \
         (version {FORMAT_VERSION}); upgrade claw-tui to open it"
    )]
    NewerVersion {
        /// The file.
        path: String,
        /// Its version.
        found: u32,
    },
    /// Not a session file.
    #[error("{path} is not a claw-tui session file: {reason}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Another process writes this session.
    #[error(
        "session {path} is open in another claw-tui process; close it there, or pass --fork \
         to continue in a new session that starts from a copy of its history"
    )]
    Locked {
        /// The file.
        path: String,
    },
    /// No session matched.
    #[error("{0}")]
    NotFound(String),
}

impl SessionError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        SessionError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// The first line of a session file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Format version.
    pub version: u32,
    /// Session id.
    pub id: String,
    /// Workspace the session belongs to.
    pub workspace: String,
    /// Provider name at creation.
    pub provider: String,
    /// Model at creation.
    pub model: String,
    /// Creation time, ms since the epoch.
    pub created: u64,
}

/// One line of a session file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// The header (first line only).
    Header(Header),
    /// A completed message.
    Message {
        /// When it was recorded.
        timestamp: u64,
        /// The message.
        message: Message,
    },
    /// The queues changed; the full pending texts.
    Queue {
        /// When.
        timestamp: u64,
        /// Pending steering messages.
        steering: Vec<String>,
        /// Pending follow-up messages.
        follow_up: Vec<String>,
    },
    /// A setting changed (model, thinking level, queue modes...).
    Setting {
        /// When.
        timestamp: u64,
        /// Which setting.
        key: String,
        /// Its new value.
        value: serde_json::Value,
    },
    /// System notifications waiting for delivery (replaces the earlier list): written
    /// when the list is emptied or replaced as a whole.
    PendingNotifications {
        /// When.
        timestamp: u64,
        /// The notifications, oldest first.
        pending: Vec<InboundMessage>,
        /// How much of the session's inbox file the list already includes (bytes).
        #[serde(default)]
        inbox_offset: u64,
    },
    /// Notifications that arrived: they wait behind the list as the lines before left
    /// it. One line per arrival, so what the file gains is what arrived.
    PendingAdded {
        /// When.
        timestamp: u64,
        /// The notifications, oldest first.
        added: Vec<InboundMessage>,
        /// How much of the session's inbox file the list includes now (bytes).
        #[serde(default)]
        inbox_offset: u64,
    },
    /// The history was compacted: the model sees the summary, then the messages from
    /// `first_kept_message` on (the messages stay in the file).
    Compaction(Compaction),
    /// The conversation was taken back (`/rewind`): only the first `messages` messages
    /// recorded before this line remain.
    Rewind {
        /// When.
        timestamp: u64,
        /// How many messages remain.
        messages: usize,
    },
}

/// A fresh random session id (128 bits, hex).
pub fn new_session_id() -> String {
    format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

pub use crate::tools::workspace::workspace_slug;
