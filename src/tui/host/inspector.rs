//! The request inspector slice's runner: the session's request log, read on a task of
//! its own and answered as a [`Msg`].

use super::MsgSender;
use crate::llm::RequestTap;
use crate::tui::inspector::{Effect, Msg};
use std::sync::Arc;

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
        let _ = tx.send(crate::tui::Msg::Inspector(Msg::Loaded { log, open }));
    });
}
