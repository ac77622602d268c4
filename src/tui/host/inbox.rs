//! The client's inbox: the one channel through which the runtime, the tools and the
//! background runtime talk to the running client, and the approval requests that wait
//! for the user's answer.

use crate::tools::exec::{ApprovalAsker, ApprovalDecision, ApprovalRequest};
use crate::tui::Msg;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;

/// Sends messages into the running client from any thread or task.
pub type MsgSender = UnboundedSender<Msg>;

/// Who answers for the user when the session is served: the answer goes to the
/// session's shared approvals (the first answer from any client wins).
pub type AnswerElsewhere = Arc<dyn Fn(&str, ApprovalDecision) + Send + Sync>;

/// Approval requests waiting for the user, by tool call id.
#[derive(Clone, Default)]
pub struct Approvals {
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>>,
    elsewhere: Arc<Mutex<Option<AnswerElsewhere>>>,
}

impl Approvals {
    fn insert(&self, id: String, tx: oneshot::Sender<ApprovalDecision>) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(id, tx);
        }
    }

    /// From now on the user's answers go to `answer` (the served session's approvals).
    pub fn answer_through(&self, answer: AnswerElsewhere) {
        if let Ok(mut elsewhere) = self.elsewhere.lock() {
            *elsewhere = Some(answer);
        }
    }

    /// Answers the request `id` (ignored when nobody waits for it any more).
    pub fn resolve(&self, id: &str, decision: ApprovalDecision) {
        let elsewhere = self.elsewhere.lock().ok().and_then(|e| e.clone());
        if let Some(answer) = elsewhere {
            answer(id, decision);
            return;
        }
        let sender = self.waiting.lock().ok().and_then(|mut w| w.remove(id));
        if let Some(tx) = sender {
            let _ = tx.send(decision);
        }
    }
}

/// The client's inbox: create it first, hand its senders to the tools and the
/// background runtime, then hand it to the client.
pub struct Inbox {
    pub(super) tx: MsgSender,
    pub(super) rx: UnboundedReceiver<Msg>,
    pub(super) approvals: Approvals,
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
