//! Which floating window is open, with what it shows: the value a part asks the root to
//! open (`Intent::Open`) and the overlay stack holds. It sits below both, so the part
//! contract names an overlay without depending on the stack that handles its keys.

use super::inspect::Inspector;
use crate::checkpoints::PendingRewind;
use crate::sessions::SessionRow;
use claw_runtime::checkpoint::{Confirmation, SessionFile};

/// A floating window over the panes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Overlay {
    /// Keys and commands.
    Help {
        /// First row shown.
        scroll: u16,
    },
    /// A tool call's full arguments and result.
    Detail {
        /// The call.
        call_id: String,
        /// First row shown.
        scroll: u16,
    },
    /// "Delete this cron job?"
    ConfirmDelete {
        /// The job.
        id: String,
        /// Its name.
        name: String,
    },
    /// The `/sessions` picker.
    Sessions {
        /// The sessions, most recent first.
        rows: Vec<SessionRow>,
        /// The highlighted row, among those the filter lets through.
        selected: usize,
        /// What was typed to filter them (id, name or prompt).
        query: String,
    },
    /// `/settings`: the settings, where each came from, and `s` to save what changed.
    Settings {
        /// First row shown.
        scroll: u16,
    },
    /// `/mcp`: the MCP servers, their states and tools.
    Mcp {
        /// First row shown.
        scroll: u16,
    },
    /// "Trust what runs outside the sandbox?": the workspace's `.mcp.json` servers,
    /// each entry whole, and the workspace files hooks and servers run.
    Trust {
        /// What is asked.
        request: claw_runtime::trust::TrustRequest,
        /// First row shown.
        scroll: u16,
    },
    /// `/status`: the provider, the model, the context, usage, queues, sandbox, session.
    Status {
        /// First row shown.
        scroll: u16,
    },
    /// "Cancel this subagent?"
    ConfirmCancel {
        /// The subagent.
        id: String,
        /// Its label.
        label: String,
    },
    /// "That session is open elsewhere: continue in a copy?"
    ConfirmFork {
        /// The session file.
        path: std::path::PathBuf,
        /// Its id.
        id: String,
    },
    /// Files an undo or rewind would put back were changed since by someone else.
    ConfirmUndo {
        /// The files, and what else would be restored.
        question: Confirmation,
        /// The rewind this is for (`None`: `/undo`).
        rewind: Option<PendingRewind>,
    },
    /// The `/rewind` picker: the conversation's prompts, oldest first.
    Rewind {
        /// The prompts.
        prompts: Vec<String>,
        /// The highlighted one (from 0).
        selected: usize,
    },
    /// What to take back to the chosen prompt: files, conversation, or both.
    RewindChoice {
        /// The prompt, from 1.
        turn: usize,
        /// Its text.
        prompt: String,
    },
    /// `/diff`: every file the agent changed this session.
    SessionDiff {
        /// The files.
        files: Vec<SessionFile>,
        /// First row shown.
        scroll: u16,
    },
    /// "Implement this plan?" (Enter on an empty composer after a plan).
    ImplementPlan {
        /// The plan.
        plan: String,
    },
    /// `/inspect`, F3: the session's requests.
    Inspect(Box<Inspector>),
}
