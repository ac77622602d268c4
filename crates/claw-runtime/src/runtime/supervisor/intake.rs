//! The one intake of what the user sends, for every front-end: a prompt, a steering
//! message or a follow-up passes the prompt filter (the user's prompt hooks) and then
//! the supervisor's decision, in the order it was sent. The client, RPC and `-p` all
//! send through [`Supervisor::deliver`], so a new front-end gets the hooks by
//! construction.

use super::delivery::Inner;
use super::{Supervisor, SupervisorOutcome};
use crate::agent::{QueueKind, UserMessage};
use async_trait::async_trait;
use std::future::Future;
use std::sync::{Arc, Weak};
use tokio::sync::{mpsc, oneshot};

/// What the prompt filter decided about a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptDecision {
    /// Send this text (the prompt with any context the hooks added).
    Send(String),
    /// Do not send it, for this reason.
    Block(String),
}

/// Looks at each text the user sends before it reaches the agent (the prompt hooks).
#[async_trait]
pub trait PromptFilter: Send + Sync {
    /// Lets `text` through (perhaps extended) or blocks it.
    async fn filter(&self, text: &str) -> PromptDecision;
}

/// What the user sends to the main agent.
#[derive(Clone, Debug, PartialEq)]
pub enum UserInput {
    /// A message (with its images): starts a run when idle, else waits as a follow-up.
    Submit(UserMessage),
    /// A correction: starts a run when idle, else goes in at the next tool boundary.
    Steer(String),
    /// A message for when the agent would stop; queued even when it is idle.
    FollowUp(String),
}

impl UserInput {
    /// The text the filter sees.
    fn text(&self) -> &str {
        match self {
            UserInput::Submit(message) => &message.content,
            UserInput::Steer(text) | UserInput::FollowUp(text) => text,
        }
    }

    /// The same input with `text` instead (its images kept).
    fn with_text(self, text: String) -> Self {
        match self {
            UserInput::Submit(message) => UserInput::Submit(UserMessage {
                content: text,
                ..message
            }),
            UserInput::Steer(_) => UserInput::Steer(text),
            UserInput::FollowUp(_) => UserInput::FollowUp(text),
        }
    }
}

/// An input the prompt filter kept back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a prompt hook blocked it: {reason}")]
pub struct PromptBlocked {
    /// The text as the user sent it (to give it back).
    pub text: String,
    /// Why, in the hook's words.
    pub reason: String,
}

/// What [`Supervisor::deliver`] answers.
pub type Delivery = Result<SupervisorOutcome, PromptBlocked>;

/// The inputs waiting for the filter, oldest first.
pub(super) type Queue = mpsc::UnboundedSender<(UserInput, oneshot::Sender<Delivery>)>;

impl Supervisor {
    /// Runs `filter` over every input sent with [`Supervisor::deliver`] from now on, one
    /// input at a time in the order they were sent.
    pub fn set_prompt_filter(&self, filter: Arc<dyn PromptFilter>) {
        let (queue, waiting) = mpsc::unbounded_channel();
        // The task holds the supervisor weakly: it ends with it (the queue's sender
        // lives in the supervisor) or when it is stopped.
        let worker = filter_inputs(Arc::downgrade(&self.inner), filter, waiting);
        self.inner.runtime.spawn(worker);
        *self.inner.intake.lock().unwrap_or_else(|p| p.into_inner()) = Some(queue);
    }

    /// Sends what the user typed: through the prompt filter when there is one, then
    /// as [`UserInput`] says. Its place in line is taken now, so inputs keep the order
    /// of the calls; the future says what became of it.
    pub fn deliver(&self, input: UserInput) -> impl Future<Output = Delivery> + Send + 'static {
        let queue = self
            .inner
            .intake
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let waiting = match queue {
            None => Err(admit(&self.inner, input)),
            Some(queue) => {
                let (reply, answer) = oneshot::channel();
                match queue.send((input, reply)) {
                    Ok(()) => Ok(answer),
                    // The filter's task is gone (the runtime is shutting down): the
                    // input cannot be checked, so it is not sent.
                    Err(mpsc::error::SendError((input, _))) => Err(Err(PromptBlocked {
                        text: input.text().to_owned(),
                        reason: "the prompt hooks are no longer running".to_owned(),
                    })),
                }
            }
        };
        async move {
            match waiting {
                Err(done) => done,
                Ok(answer) => answer.await.unwrap_or_else(|_| {
                    Err(PromptBlocked {
                        text: String::new(),
                        reason: "the prompt hooks stopped before deciding".to_owned(),
                    })
                }),
            }
        }
    }
}

/// Filters the waiting inputs one at a time and admits those that pass.
async fn filter_inputs(
    inner: Weak<Inner>,
    filter: Arc<dyn PromptFilter>,
    mut waiting: mpsc::UnboundedReceiver<(UserInput, oneshot::Sender<Delivery>)>,
) {
    while let Some((input, reply)) = waiting.recv().await {
        let delivery = match filter.filter(input.text()).await {
            PromptDecision::Block(reason) => Err(PromptBlocked {
                text: input.text().to_owned(),
                reason,
            }),
            PromptDecision::Send(text) => {
                let Some(inner) = inner.upgrade() else {
                    return;
                };
                admit(&inner, input.with_text(text))
            }
        };
        // The sender may have stopped waiting; the input was handled either way.
        let _ = reply.send(delivery);
    }
}

/// Hands a filtered input to the supervisor's decision.
fn admit(inner: &Inner, input: UserInput) -> Delivery {
    Ok(match input {
        UserInput::Submit(message) => inner.input(message, QueueKind::FollowUp),
        UserInput::Steer(text) => inner.input(UserMessage::new(text), QueueKind::Steering),
        UserInput::FollowUp(text) => {
            inner.agent.follow_up(text);
            SupervisorOutcome::QueuedFollowUp
        }
    })
}
