//! The client's checkpoints feature as one slice: `/undo`, `/rewind` and `/diff`. Its
//! messages and effects are its own (the root `Msg` and `Effect` carry them as
//! `Checkpoints(..)`), the model's side is `app/checkpoints.rs` (the commands, the
//! answers, the confirmations) and the runtime's side is the host's runner
//! (`host/checkpoints.rs`: the file work, off the UI thread, answered as a [`Msg`]).

use claw_runtime::checkpoint::{CheckpointError, Conflicts, SessionFile, UndoOutcome};

/// What the runtime answers.
#[derive(Clone, Debug)]
pub enum Msg {
    /// What `/undo` did, or the question about files changed since.
    Undone(Result<UndoOutcome, CheckpointError>),
    /// What `/rewind` did, or the question about files changed since.
    Rewound(Box<Result<Rewound, CheckpointError>>),
    /// The session's changes for `/diff`.
    Diff(Result<Vec<SessionFile>, CheckpointError>),
}

/// What the model asks the runtime to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Undo the latest turn's file changes (answered with `Msg::Undone`).
    Undo(Conflicts),
    /// Take files, the conversation or both back to the `turn`th prompt (answered with
    /// `Msg::Rewound`).
    Rewind {
        /// The prompt, from 1.
        turn: usize,
        /// Put the files back.
        files: bool,
        /// Cut the conversation.
        conversation: bool,
        /// What to do with files changed since by someone else.
        conflicts: Conflicts,
    },
    /// Compute the session's diff (answered with `Msg::Diff`).
    Diff,
}

/// What a rewind did.
#[derive(Clone, Debug, PartialEq)]
pub struct Rewound {
    /// The prompt rewound to, from 1.
    pub turn: usize,
    /// Whether the conversation was to be cut too.
    pub conversation_asked: bool,
    /// What happened to the files, when they were rewound.
    pub files: Option<UndoOutcome>,
    /// The conversation now and the prompt for the composer, when it was rewound.
    pub conversation: Option<(std::sync::Arc<[claw_agent::Message]>, String)>,
}

/// A rewind waiting for the answer about files changed since.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingRewind {
    /// The prompt, from 1.
    pub turn: usize,
    /// Whether the conversation is to be cut too.
    pub conversation: bool,
}
