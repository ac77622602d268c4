//! The inspector slice's model side (see [`crate::inspector`]): `/inspect` and its
//! key ask the runtime for the log; the log that comes back opens the overlay. A replay
//! opens it the same way at the request that was in flight.

use super::App;
use crate::inspector;
use crate::msg::Effect;
use crate::overlay::{Inspector, Overlay};
use crate::part::Handled;
use claw_runtime::inspect::RequestLog;
use std::sync::Arc;

/// The effect that opens the inspector: at request `open` (a position from 0, in send
/// order; `None`: the list) once the runtime has read the session's log.
pub(crate) fn inspect_requests(open: Option<usize>) -> Effect {
    Effect::Inspector(inspector::Effect::Load { open })
}

impl App {
    /// What the runtime answered: the log opens the inspector, a failure is said.
    pub(super) fn inspector_answered(&mut self, msg: inspector::Msg) -> Handled {
        match msg {
            inspector::Msg::Loaded { log: Ok(log), open } => self.show_inspector(log, open),
            inspector::Msg::Loaded { log: Err(why), .. } => {
                self.chat.notice(claw_agent::NoticeLevel::Warning, why)
            }
        }
    }

    /// Opens the inspector over `log`, at request `open` (a position from 0) or at the
    /// list. No I/O: the log was read by whoever hands it over (the runtime, a replay).
    pub fn show_inspector(&mut self, log: Arc<RequestLog>, open: Option<usize>) -> Handled {
        self.overlays
            .replace(Overlay::Inspect(Box::new(Inspector::new(log, open))))
    }

    /// The inspector open now, if it is the top overlay.
    pub fn inspector(&self) -> Option<&Inspector> {
        match self.overlays.top() {
            Some(Overlay::Inspect(inspector)) => Some(inspector),
            _ => None,
        }
    }
}
