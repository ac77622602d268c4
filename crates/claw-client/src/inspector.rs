//! The client's request inspector as one slice: `/inspect` and its key ask the runtime
//! for the session's request log ([`Effect::Load`]); the log that comes back
//! ([`Msg::Loaded`]) opens the overlay (`app/inspect.rs`); the host reads it off the
//! UI thread (`host/inspector.rs`). The root `Msg` and `Effect` carry these as `Inspector(..)`.

use claw_runtime::inspect::RequestLog;
use std::sync::Arc;

/// What the runtime answers.
#[derive(Clone, Debug)]
pub enum Msg {
    /// The session's request log, read for the inspector (or why it could not be).
    Loaded {
        /// The log.
        log: Result<Arc<RequestLog>, String>,
        /// The request to open (a position from 0), else the list.
        open: Option<usize>,
    },
}

/// What the model asks the runtime to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Read the session's request log (answered with `Msg::Loaded`), to open the
    /// inspector at request `open` (a position from 0) or at its list.
    Load {
        /// The request to open.
        open: Option<usize>,
    },
}
