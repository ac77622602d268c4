//! Why `/undo`, `/rewind` or `/diff` did nothing (or, for a record that failed, why
//! the files were put back but the record was not kept).

use crate::agent::AgentError;
use std::sync::Arc;

/// A checkpoint operation that could not be carried out.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A run is going on; files and history stay as they are.
    #[error("The agent is working: wait for it to finish or interrupt it (Esc) first.")]
    AgentWorking,
    /// No main agent is attached to rewind.
    #[error("no agent to rewind")]
    NoAgent,
    /// `/rewind N` past the prompts there are.
    #[error("there is no turn {turn}: the conversation has {count} prompt(s)")]
    NoSuchTurn {
        /// The turn asked for, from 1.
        turn: usize,
        /// The prompts the conversation has.
        count: usize,
    },
    /// The temp dir that holds a session-less run's checkpoints cannot be made.
    #[error("cannot make a temp dir for checkpoints: {0}")]
    TempDir(#[source] Arc<std::io::Error>),
    /// A session is being switched to and its checkpoints are not open yet.
    #[error("the session's checkpoints are not open")]
    SessionNotOpen,
    /// The checkpoint index of the session is gone (deleted by hand): which turns
    /// changed which files is unknown, so nothing can be put back.
    #[error(
        "The checkpoint index {} is missing (deleted?): the file changes it recorded \
         cannot be undone or shown.",
        path.display()
    )]
    IndexMissing {
        /// Where it should be.
        path: std::path::PathBuf,
    },
    /// The agent refused the shorter history.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The files were put back, but the undo could not be recorded.
    #[error("the files were restored, but recording it failed: {0}")]
    NotRecorded(#[source] Arc<std::io::Error>),
}
