//! The client's request inspector as one slice: `/inspect` and its key ask the runtime
//! for the session's request log ([`Effect::Load`]); the log that comes back
//! ([`Msg::Loaded`]) opens the overlay (`app/inspect.rs`); the runtime reads it off the
//! UI thread ([`run`]). The root `Msg` and `Effect` carry these as `Inspector(..)`.

use super::MsgSender;
use crate::inspect::RequestLog;
use crate::llm::RequestTap;
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

/// Carries out `effect` with the session's request `tap` (`None`: requests are not
/// recorded); the log is read on a task of its own and comes back through `tx`.
pub(super) fn run(tap: Option<RequestTap>, effect: Effect, tx: &MsgSender) {
    let Effect::Load { open } = effect;
    let tx = tx.clone();
    tokio::spawn(async move {
        let log = match tap {
            Some(tap) => crate::inspect::rpc::load(&tap)
                .await
                .map(Arc::new)
                .map_err(|e| e.to_string()),
            None => Err(
                "requests are not recorded (`[session] record_requests = false`, or no session)"
                    .to_owned(),
            ),
        };
        let _ = tx.send(super::msg::Msg::Inspector(Msg::Loaded { log, open }));
    });
}
