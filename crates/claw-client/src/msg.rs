//! What flows into `App::update` (`Msg`) and what comes out of it (`Effect`), plus the
//! row types the background runtime feeds the dashboard with.

use claw_agent::{
    AgentEvent, ImageData, NoticeLevel, QueueKind, QueueMode, ThinkingLevel, ToolExecution,
    UserMessage,
};

use claw_runtime::runtime::AgentMode;
use claw_tools::exec::{ApprovalDecision, ApprovalRequest};
use claw_tools::message::OutboundMessage;
use crossterm::event::Event;

use std::sync::Arc;
use std::time::SystemTime;

/// Highlighted code: one entry per line, each a list of (style, text) pieces.
pub type HighlightedCode = Arc<Vec<Vec<(ratatui::style::Style, String)>>>;

/// Everything the app reacts to.
#[derive(Clone, Debug)]
pub enum Msg {
    /// The request inspector's answers (see [`crate::inspector`]).
    Inspector(crate::inspector::Msg),
    /// A terminal event: key, paste, resize, mouse, focus.
    Term(Event),
    /// An event of the main agent.
    Agent(AgentEvent),
    /// A shell command the user ran (`!command`; see [`crate::shell`]).
    Shell(crate::shell::Msg),
    /// The subagents' events and rows (see [`crate::subagents`]).
    Subagents(crate::subagents::Msg),
    /// The current cron jobs (replaces the previous list).
    CronJobs(Vec<CronRow>),
    /// Some cron jobs changed (replaced by id, or added at the end) or were removed.
    CronChanges {
        /// The jobs added or changed.
        changed: Vec<CronRow>,
        /// The ids of the jobs removed.
        removed: Vec<String>,
    },
    /// How many system notifications wait to be delivered to the agent.
    PendingNotifications(usize),
    /// An MCP server's state or tools changed (added, or replaced by name).
    McpServer(claw_runtime::mcp::McpServerInfo),
    /// The settings were saved (the keys written), or why not.
    SettingsSaved(Result<Vec<String>, String>),
    /// Something outside the sandbox waits for the user's trust: the workspace's
    /// `.mcp.json` servers, or workspace files hooks and servers run that are new or
    /// changed.
    AskTrust(claw_runtime::trust::TrustRequest),
    /// A result for another session was recorded there (delivered when it is opened).
    Parked {
        /// The session it waits in.
        session_id: String,
        /// What it is, e.g. `Cron job "build" (cron-1) fired`.
        summary: String,
    },
    /// A message the agent sent with the `message` tool.
    Outbound(OutboundMessage),
    /// A tool call waits for the user's approval.
    Approval(ApprovalRequest),
    /// Who is attached to the session now (the session's own terminal, sockets).
    Attached(Vec<crate::attach::ClientInfo>),
    /// Another client attached to the same session answered approval request `id`
    /// first: its dialog goes, and the chat says who answered and how.
    ApprovalAnswered {
        /// The request's id.
        id: String,
        /// The answer.
        decision: ApprovalDecision,
        /// Who gave it, as the chat names them.
        by: String,
    },
    /// Messages taken back out of the queues, to be edited in the composer.
    QueueRestored(Vec<QueuedText>),
    /// A code block was highlighted (`key` identifies language, code and theme).
    Highlighted {
        /// The block's cache key.
        key: u64,
        /// The styled lines.
        lines: HighlightedCode,
    },
    /// The composer history read from the data dir, oldest first.
    HistoryLoaded(Vec<String>),
    /// The workspace's files, relative paths, for `@path` completion.
    WorkspaceFiles(Vec<String>),
    /// The model ids the server offers, for `/model` completion.
    ModelsListed(Vec<String>),
    /// A theme `/theme` asked for was loaded, or why it could not be.
    ThemeLoaded(Result<Box<crate::theme::Theme>, crate::theme::ThemeError>),
    /// The external editor (Ctrl+G) closed: the new text, or why it failed.
    EditorDone(Result<String, EditorError>),
    /// The sessions: switched to, listed, saved or not (see [`crate::sessions`]).
    Sessions(crate::sessions::Msg),
    /// The images a message mentions were read (or one could not be): send it, or give
    /// the text back to the composer.
    ImagesLoaded {
        /// The message text.
        text: String,
        /// The images, or why one could not be attached.
        result: Result<Vec<ImageData>, crate::attach::AttachError>,
    },
    /// The skills a message mentions were read: the message with them attached, or why
    /// one could not be.
    SkillsAttached {
        /// The message as typed.
        text: String,
        /// The message to send, or the reason it was not.
        result: Result<String, claw_runtime::runtime::context::SkillAttachError>,
    },
    /// What `/undo`, `/rewind` or `/diff` did (see [`crate::checkpoints`]).
    Checkpoints(crate::checkpoints::Msg),
    /// Something for the user to read in the chat.
    Notice(NoticeLevel, String),
    /// A dashboard action on the background runtime failed (shown as an error line).
    BackgroundFailed(crate::background::BackgroundFailure),
    /// A prompt hook refused to send `text`, for `reason`.
    PromptBlocked {
        /// The prompt (back to the composer).
        text: String,
        /// Why, from the hook.
        reason: String,
    },
    /// Time passed (spinner frames, elapsed times, hints that expire).
    Tick,
    /// A frame is about to be drawn: bring the layout caches up to date.
    Frame,
}

/// What `update` asks the runtime side to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// The request inspector's effects (see [`crate::inspector`]).
    Inspector(crate::inspector::Effect),
    /// Start a run with this prompt (queued as a follow-up if the agent is busy).
    Prompt(String),
    /// Read the mentioned skills' files (name, `SKILL.md`) and attach them to `text`
    /// (answered with `Msg::SkillsAttached`).
    AttachSkills {
        /// The message as typed.
        text: String,
        /// The skills it mentions.
        skills: Vec<(String, std::path::PathBuf)>,
    },
    /// Write the session as one HTML file and say where (`/export`).
    ExportHtml {
        /// The session shown (`None`: sessions are off).
        session: Option<String>,
        /// The syntect theme for its code blocks.
        code_theme: String,
    },
    /// Read the images `paths` mentions (answered with `Msg::ImagesLoaded`).
    LoadImages {
        /// The message text, sent once they are read.
        text: String,
        /// The mentioned paths (relative ones start at the workspace).
        paths: Vec<String>,
    },
    /// Start a run with this message and its images (queued if the agent is busy).
    PromptMessage(UserMessage),
    /// Queue a follow-up message.
    FollowUp(String),
    /// Queue a steering message.
    Steer(String),
    /// Abort the run: stream and tools.
    Abort,
    /// Stop the tool calls running now; the run goes on (queued steering goes in next).
    InterruptTools,
    /// Empty both queues and send their texts back as `Msg::QueueRestored`.
    RestoreQueued,
    /// Exit the app.
    Quit,
    /// Suspend to the shell (Ctrl+Z).
    Suspend,
    /// Edit this text in `$EDITOR`; the result comes back as `Msg::EditorDone`.
    OpenEditor(String),
    /// Append an entry to the persisted composer history.
    SaveHistory(String),
    /// List the workspace's files (answered with `Msg::WorkspaceFiles`).
    ListFiles,
    /// Ask the server for its models (answered with `Msg::ModelsListed`, or not at all
    /// when it offers no list).
    ListModels,
    /// Highlight a code block (answered with `Msg::Highlighted`).
    Highlight(HighlightRequest),
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
    /// Use this model from the next run on.
    SetModel(String),
    /// Use this thinking level from the next run on.
    SetThinking(ThinkingLevel),
    /// Set how many messages a queue delivers at once.
    SetQueueMode(QueueKind, QueueMode),
    /// Run tool calls one after another or together.
    SetToolExecution(ToolExecution),
    /// Run or stop the shell commands the user typed (see [`crate::shell`]).
    Shell(crate::shell::Effect),
    /// Load the theme with this name and use it (answered with `Msg::ThemeLoaded`).
    SetTheme(String),
    /// Compact the history now, keeping what the text says (`/compact [focus]`).
    Compact(Option<String>),
    /// Send the request that failed again (`/retry`).
    Retry,
    /// Save these settings into the config file at `path` (answered with
    /// `Msg::SettingsSaved`).
    SaveSettings {
        /// The config file.
        path: std::path::PathBuf,
        /// What to write.
        settings: Vec<claw_runtime::config::save::SavedSetting>,
    },
    /// Switch, list or open sessions (see [`crate::sessions`]).
    Sessions(crate::sessions::Effect),
    /// Answer an approval request.
    Approve {
        /// The request's id.
        id: String,
        /// The answer.
        decision: ApprovalDecision,
    },
    /// A subagent's controls (see [`crate::subagents`]).
    Subagents(crate::subagents::Effect),
    /// The user's answer to a trust question: `true` trusts exactly what `request`
    /// showed (remembered) and starts what waited for it; `false` declines the project
    /// servers (remembered) and leaves the files untrusted.
    AnswerTrust {
        /// Yes or no.
        trusted: bool,
        /// What was shown.
        request: claw_runtime::trust::TrustRequest,
    },
    /// Pause a cron job.
    PauseCron(String),
    /// Resume a paused cron job.
    ResumeCron(String),
    /// Delete a cron job.
    DeleteCron(String),
    /// Turn mouse capture on or off.
    SetMouseCapture(bool),
    /// Switch the main agent to this mode (a run under way loses its mutating tools at once).
    SetMode(AgentMode),
    /// `/undo`, `/rewind`, `/diff` (see [`crate::checkpoints`]).
    Checkpoints(crate::checkpoints::Effect),
}

/// A message taken back out of a queue, with the queue it was in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedText {
    /// The queue (steering or follow-up).
    pub kind: QueueKind,
    /// Its text.
    pub text: String,
}

impl QueuedText {
    /// A steering message.
    pub fn steer(text: impl Into<String>) -> Self {
        Self {
            kind: QueueKind::Steering,
            text: text.into(),
        }
    }

    /// A follow-up message.
    pub fn follow_up(text: impl Into<String>) -> Self {
        Self {
            kind: QueueKind::FollowUp,
            text: text.into(),
        }
    }
}

/// A code block to highlight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HighlightRequest {
    /// Cache key of (theme, language, code).
    pub key: u64,
    /// The fence's language tag (`rust`, `py`, `json`...).
    pub lang: String,
    /// The code.
    pub code: String,
    /// The syntect theme.
    pub theme: String,
}

/// The outcome of a cron job's last run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CronRunStatus {
    /// Has not fired yet.
    Never,
    /// Delivering right now.
    Firing,
    /// Delivered its message.
    Ok,
    /// Not delivered: the app was not running at the time.
    Missed,
    /// Failed to deliver.
    Failed,
}

/// One scheduled job in the dashboard.
#[derive(Clone, Debug, PartialEq)]
pub struct CronRow {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The schedule as the user reads it (`every 30 s`, `0 9 * * 1-5`...).
    pub schedule: String,
    /// When it fires next (`None` once a one-shot job has fired, or while paused).
    pub next_fire: Option<SystemTime>,
    /// Whether it is paused.
    pub paused: bool,
    /// A one-shot job that has fired.
    pub done: bool,
    /// How the last run went.
    pub last_status: CronRunStatus,
}

/// Why the external editor gave no new text (the composer keeps what it had).
#[derive(Clone, Debug, thiserror::Error)]
pub enum EditorError {
    /// The temporary file for the text cannot be made.
    #[error("cannot create a temporary file for the editor: {0}")]
    CreateTemp(#[source] Arc<std::io::Error>),
    /// The text cannot be written to it.
    #[error("cannot write the temporary file for the editor: {0}")]
    WriteTemp(#[source] Arc<std::io::Error>),
    /// The editor's program cannot be started.
    #[error(
        "cannot start the editor \"{editor}\": {source}. Set $EDITOR to an editor that is installed."
    )]
    Start {
        /// `$VISUAL`, `$EDITOR` or `vi`, as set.
        editor: String,
        /// Why it did not start.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// Raw mode and the alternate screen cannot be turned back on.
    #[error("cannot restore the terminal after the editor: {0}")]
    RestoreTerminal(#[source] Arc<std::io::Error>),
    /// The editor exited unsuccessfully.
    #[error("the editor \"{editor}\" exited with {status}; your message was left as it was.")]
    Failed {
        /// The editor as set.
        editor: String,
        /// How it exited.
        status: std::process::ExitStatus,
    },
    /// The edited file cannot be read back.
    #[error("cannot read back the edited message: {0}")]
    ReadBack(#[source] Arc<std::io::Error>),
    /// The thread that runs the editor died (it panicked).
    #[error("the editor could not be run: {0}")]
    NotRun(#[source] Arc<tokio::task::JoinError>),
}
