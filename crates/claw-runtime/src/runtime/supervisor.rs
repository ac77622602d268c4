//! The supervisor: the single owner of the main agent's runs. User input (`Submit`,
//! `Steer`) and system notifications (subagent results, cron fires from the bus's
//! `system` channel) all go through it, and it decides under one lock whether each
//! starts a run or waits, so a keypress never races a run a cron job just started.
//!
//! A notification that arrives while a run is active waits in a pending queue (its size
//! is reported as [`RuntimeEvent::PendingNotifications`]) and is delivered, wrapped as
//! `[SYSTEM NOTIFICATION]`, as soon as the run ends; notifications are never dropped
//! and keep their order. Each keeps its origin `chat_id` (the session that started the
//! work): one addressed to a session that is not the active one is handed to the
//! [`NotificationStore`], which records it in that session for delivery on resume. What
//! another process records for the active session is taken from the store every
//! [`PARKED_POLL`] and delivered the same way.

mod delivery;
mod hold;
mod intake;
mod notifications;
mod store;

pub use hold::SwitchHold;
pub use intake::{Delivery, PromptBlocked, PromptDecision, PromptFilter, UserInput};
pub use notifications::{notifications, to_notification};
pub use store::NotificationStore;

use super::bus::{InboundMessage, MessageBus, SYSTEM_CHANNEL};
use super::event::RuntimeEventSender;
use crate::agent::{Admission, Agent, AgentError, EventKind, Message, QueueKind, UserMessage};
use delivery::{Inner, State, Unrecorded, serve};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

/// How often the active session's inbox is looked at for notifications that another
/// process parked there (a `stat` when nothing is new).
pub const PARKED_POLL: std::time::Duration = std::time::Duration::from_secs(1);

pub use crate::agent::convert::NOTIFICATION_PREFIX;

/// What the UI or RPC asks the main agent to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SupervisorInput {
    /// A message: starts a run when idle, else waits as a follow-up.
    Submit(String),
    /// A correction: starts a run when idle, else is injected at the next tool boundary.
    Steer(String),
}

/// What the supervisor did with an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SupervisorOutcome {
    /// The agent was idle; a run started with the input.
    Started,
    /// A run is active; the input waits as a follow-up.
    QueuedFollowUp,
    /// A run is active; the input waits as steering.
    QueuedSteering,
}

/// Told about each message the bus brings (a subagent finished, a cron job fired).
pub type InboundObserver = Arc<dyn Fn(&InboundMessage) + Send + Sync>;

/// Owns the main agent's runs; cheap to clone. The background task it starts stops
/// when the last clone is dropped or on [`Supervisor::stop`].
#[derive(Clone)]
pub struct Supervisor {
    inner: Arc<Inner>,
    stop: CancellationToken,
    task: Arc<Mutex<Option<JoinHandle<()>>>>,
    _guard: Arc<DropGuard>,
}

impl Supervisor {
    /// Takes charge of `agent`, consumes the bus's `system` channel (its backlog first)
    /// and reports to `events`. Must be called inside a Tokio runtime.
    pub fn start(
        agent: Agent,
        bus: &MessageBus,
        events: RuntimeEventSender,
    ) -> Result<Self, AgentError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| AgentError::NoRuntime)?;
        let ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
        let inbound = bus.subscribe(SYSTEM_CHANNEL);
        let inner = Arc::new(Inner {
            agent,
            events,
            runtime: runtime.clone(),
            state: Mutex::new(State {
                pending: VecDeque::new(),
                reported: 0,
                unrecorded: Unrecorded::Nothing,
                held: false,
                switch_holds: 0,
                store: None,
            }),
            observer: Mutex::new(None),
            intake: Mutex::new(None),
        });
        let stop = CancellationToken::new();
        let task = runtime.spawn(serve(
            inner.clone(),
            bus.clone(),
            inbound,
            ends,
            stop.clone(),
        ));
        Ok(Self {
            inner,
            task: Arc::new(Mutex::new(Some(task))),
            _guard: Arc::new(stop.clone().drop_guard()),
            stop,
        })
    }

    /// The main agent, for subscribing, reading state and changing settings. Start
    /// runs only through the supervisor, or its decisions are no longer atomic.
    pub fn agent(&self) -> &Agent {
        &self.inner.agent
    }

    /// Handles one input atomically; see [`SupervisorInput`].
    pub fn send(&self, input: SupervisorInput) -> SupervisorOutcome {
        match input {
            SupervisorInput::Submit(text) => self.submit(text),
            SupervisorInput::Steer(text) => self.steer(text),
        }
    }

    /// A user message: starts a run when idle, else queues it as a follow-up.
    pub fn submit(&self, text: impl Into<String>) -> SupervisorOutcome {
        self.submit_message(UserMessage::new(text))
    }

    /// A user message with its attachments (images): as [`Supervisor::submit`].
    pub fn submit_message(&self, message: UserMessage) -> SupervisorOutcome {
        self.input(message, QueueKind::FollowUp)
    }

    /// A user correction: starts a run when idle, else queues it as steering.
    pub fn steer(&self, text: impl Into<String>) -> SupervisorOutcome {
        self.input(UserMessage::new(text), QueueKind::Steering)
    }

    /// Whether `message` starts a run or waits, decided under the supervisor's lock.
    fn input(&self, message: UserMessage, kind: QueueKind) -> SupervisorOutcome {
        self.inner.input(message, kind)
    }

    /// Calls `observer` with every message the bus brings from now on, before it is
    /// delivered (the `notify` hooks use this).
    pub fn observe_inbound(&self, observer: InboundObserver) {
        *self
            .inner
            .observer
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(observer);
    }

    /// Compacts the main agent's history now (`/compact`, RPC `compact`), as a run of
    /// its own; what arrives meanwhile waits and is delivered after it. Fails with
    /// `Busy` while a run is active.
    pub fn compact(&self, focus: Option<String>) -> Result<(), AgentError> {
        let inner = &self.inner;
        let _runtime = inner.runtime.enter();
        let mut state = inner.lock();
        inner.agent.compact(focus)?;
        // The user acted: what waits may go once the compaction is over.
        state.held = false;
        Ok(())
    }

    /// Sends the request that failed again (`/retry`): the main agent continues from its
    /// history, which ends in the failed answer (left out of the request). Fails with
    /// `Busy` while a run is active, and when there is nothing to continue.
    pub fn retry(&self) -> Result<(), AgentError> {
        let inner = &self.inner;
        let _runtime = inner.runtime.enter();
        let mut state = inner.lock();
        inner.agent.continue_run()?;
        // The user acted: what waits may go after this run.
        state.held = false;
        Ok(())
    }

    /// Delivers a notification: at once when idle, else after the active run ends.
    pub fn notify(&self, message: InboundMessage) {
        self.inner.notify(message);
    }

    /// Aborts the active run. What is still waiting (notifications, queued messages)
    /// stays until the next input or notification, so the agent does not restart
    /// right after the user stopped it.
    pub fn abort(&self) {
        let mut state = self.inner.lock();
        state.held = true;
        self.inner.agent.abort();
    }

    /// Makes `store`'s session the active one, with `restored` (its own pending
    /// notifications, from its file) first in line. Pending notifications addressed to
    /// the previous session stay on record there (its store hears the final list, so
    /// call this before closing its file); the others move along. Nothing is delivered
    /// before the next input or [`Supervisor::release`] (or the last
    /// [`SwitchHold`]'s drop).
    pub fn attach(&self, store: Arc<dyn NotificationStore>, restored: Vec<InboundMessage>) {
        let _runtime = self.inner.runtime.enter();
        let mut state = self.inner.lock();
        let previous: Vec<InboundMessage> = state.pending.drain(..).collect();
        let (stay, moving): (Vec<_>, Vec<_>) = match &state.store {
            Some(old) => previous
                .into_iter()
                .partition(|m| !m.chat_id.is_empty() && m.chat_id == old.session_id()),
            None => (Vec::new(), previous),
        };
        if let Some(old) = &state.store {
            old.pending_changed(&stay);
        }
        state.pending = restored.into_iter().chain(moving).collect();
        state.store = Some(store);
        state.held = true;
        state.unrecorded = Unrecorded::Replaced;
        self.inner.report(&mut state);
    }

    /// Delivers what waits now if the agent is idle and no [`SwitchHold`] is alive
    /// (after [`Supervisor::attach`], or to lift the hold an abort leaves).
    pub fn release(&self) {
        let _runtime = self.inner.runtime.enter();
        let mut state = self.inner.lock();
        state.held = false;
        self.inner.pump(&mut state);
    }

    /// How many notifications wait for the active run to end.
    pub fn pending_count(&self) -> usize {
        self.inner.lock().pending.len()
    }

    /// The notifications waiting, oldest first (e.g. to keep them when quitting).
    pub fn pending(&self) -> Vec<InboundMessage> {
        self.inner.lock().pending.iter().cloned().collect()
    }

    /// Stops consuming the bus (later messages wait in its backlog) and stops starting
    /// runs on its own; returns once that is done. The agent and any active run are left
    /// as they are; notifications not yet delivered stay in [`Supervisor::pending`].
    pub async fn stop(&self) {
        self.stop.cancel();
        let task = self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(task) = task {
            // The task only ends by returning; a join error would mean it panicked, and
            // there is nothing left to stop either way.
            let _ = task.await;
        }
    }
}

impl Inner {
    /// The one intake of user input: whether `message` starts a run or waits is
    /// decided here, under the supervisor's lock, against the agent's run intake, so a
    /// message never starts a run while one sent before it still waits for its own.
    pub(super) fn input(&self, message: UserMessage, kind: QueueKind) -> SupervisorOutcome {
        let inner = self;
        let agent = &inner.agent;
        let _runtime = inner.runtime.enter();
        let mut state = inner.lock();
        let message = Message::User(message);
        // What already owns a place in line takes this one behind it: a run under way
        // that will still look at its queues, or follow-ups owed a run that has not
        // started yet (sent while the last run was ending, or left by a run that stopped
        // on its own). Those go first: the oldest starts now if the agent is idle, as it
        // would once the supervisor hears of the run's end. After an abort, the next
        // input goes first instead, and what was left follows it.
        let behind_owed = kind == QueueKind::FollowUp && !state.held;
        let message = match agent.admit(kind, message, behind_owed) {
            Ok(Admission::TakenByRun) => return queued(kind),
            Ok(Admission::BehindOwed) => {
                inner.pump(&mut state);
                return SupervisorOutcome::QueuedFollowUp;
            }
            Err(message) => *message,
        };
        state.held = false;
        // Notifications and steering still waiting arrived first, so they go first in
        // the same run.
        let steering = agent.clear_queue(Some(QueueKind::Steering));
        let mut messages = notifications(state.pending.make_contiguous());
        messages.extend(steering.iter().cloned());
        messages.push(message.clone());
        match agent.prompt_messages(messages) {
            Ok(()) => {
                state.clear_pending();
                inner.report(&mut state);
                SupervisorOutcome::Started
            }
            // Busy: the last run has taken its last look at the queues but has not ended
            // yet. What it leaves waits for its end, when the serve task (or the next
            // input) starts a run for it, before anything sent later.
            Err(_) => {
                for m in steering {
                    agent.queue(QueueKind::Steering, m);
                }
                match kind {
                    QueueKind::FollowUp => agent.queue_owed(message),
                    QueueKind::Steering => agent.queue(kind, message),
                }
                queued(kind)
            }
        }
    }
}

/// The outcome for a message that waits in the queue of `kind`.
fn queued(kind: QueueKind) -> SupervisorOutcome {
    match kind {
        QueueKind::FollowUp => SupervisorOutcome::QueuedFollowUp,
        QueueKind::Steering => SupervisorOutcome::QueuedSteering,
    }
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("pending", &self.pending_count())
            .finish_non_exhaustive()
    }
}
