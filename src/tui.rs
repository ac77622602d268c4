//! The full-screen terminal client, Elm-style.
//!
//! `App` is the root of the model: it owns one part per piece of the screen (the
//! [`composer`], the [`chat`], the [`tool_tree`], the [`dashboard`], the [`status`],
//! the [`overlay`] stack and the approval prompt), each with its own keys and a pure
//! `draw`. `App::update(Msg) -> Vec<Effect>` changes it without I/O; the pure [`view`]
//! draws it; the runtime (`runtime.rs`) runs one `select!` loop over the terminal, the
//! agent's events and the [`Inbox`], executes effects, and draws at most 60 frames a
//! second, only when a part changed.
//!
//! Entry point: [`launch`] (the client with the whole background runtime, in the session
//! the launcher opened). Other parts of the program talk to the client through an
//! [`Inbox`]: the exec approval asker, and [`Msg`]s such as `Subagents`, `CronJobs`,
//! `Subagent` events and the `message` tool's cards from the background runtime.

pub mod adapt;
mod app;
pub mod approval;
pub mod attach;
pub mod background;
pub mod chat;
pub mod checkpoints;
pub mod composer;
mod control;
pub mod dashboard;
pub mod diff;
pub mod export_file;
pub mod highlight;
pub mod history;
pub mod inspector;
mod launch;
pub mod layout;
pub mod markdown;
pub mod model_list;
pub mod msg;
pub mod overlay;
mod part;
pub mod recorded;
mod runtime;
mod session_host;
pub mod sessions;
pub mod shell;
pub mod slash;
pub mod status;
mod subagent_log;
pub mod subagents;
pub mod terminal;
pub mod tool_tree;
mod widgets;
pub mod wrap;

pub use app::{App, AppConfig, UserFiles, view};
pub use background::{Background, BackgroundAction, BackgroundError, BackgroundFailure};
pub use checkpoints::Rewound;
pub(crate) use launch::app_config;
pub use launch::launch;
pub use msg::{CronRow, CronRunStatus, Effect, Msg};
pub use overlay::{InspectTab, Inspector, Overlay};
pub use subagents::SubagentRow;

use crate::tools::exec::{ApprovalAsker, ApprovalDecision, ApprovalRequest};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;

/// Sends messages into the running client from any thread or task.
pub type MsgSender = UnboundedSender<Msg>;

/// Approval requests waiting for the user, by tool call id.
#[derive(Clone, Default)]
pub struct Approvals {
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>>,
}

impl Approvals {
    fn insert(&self, id: String, tx: oneshot::Sender<ApprovalDecision>) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(id, tx);
        }
    }

    /// Answers the request `id` (ignored when nobody waits for it any more).
    pub fn resolve(&self, id: &str, decision: ApprovalDecision) {
        let sender = self.waiting.lock().ok().and_then(|mut w| w.remove(id));
        if let Some(tx) = sender {
            let _ = tx.send(decision);
        }
    }
}

/// The client's inbox: create it first, hand its senders to the tools and the
/// background runtime, then hand it to the client.
pub struct Inbox {
    tx: MsgSender,
    rx: UnboundedReceiver<Msg>,
    approvals: Approvals,
}

impl Default for Inbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Inbox {
    /// An empty inbox.
    pub fn new() -> Self {
        let (tx, rx) = unbounded_channel();
        Self {
            tx,
            rx,
            approvals: Approvals::default(),
        }
    }

    /// A sender of [`Msg`]s (subagent rows, cron rows, notices...).
    pub fn sender(&self) -> MsgSender {
        self.tx.clone()
    }

    /// Receives the next message (to drive an `App` without the client, e.g. in tests).
    pub async fn recv(&mut self) -> Option<Msg> {
        self.rx.recv().await
    }

    /// The approval requests waiting for an answer.
    pub fn approvals(&self) -> Approvals {
        self.approvals.clone()
    }

    /// Asks the user through the approval overlay (denies when the client is gone);
    /// with `approve_all` (`--yes`) allows every request without asking.
    pub fn approval_asker(&self, approve_all: bool) -> ApprovalAsker {
        let tx = self.tx.clone();
        let approvals = self.approvals.clone();
        Arc::new(move |request: ApprovalRequest| {
            if approve_all {
                return Box::pin(async { ApprovalDecision::Allow });
            }
            let (answer_tx, answer_rx) = oneshot::channel();
            approvals.insert(request.id.clone(), answer_tx);
            let delivered = tx.send(Msg::Approval(request)).is_ok();
            Box::pin(async move {
                if !delivered {
                    return ApprovalDecision::Deny;
                }
                answer_rx.await.unwrap_or(ApprovalDecision::Deny)
            })
        })
    }
}
