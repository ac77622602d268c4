//! The supervisor's delivery engine: the state kept under its one lock (pending
//! notifications, holds, the store) and the background task that turns bus messages,
//! run ends and parked notifications into runs. [`super::Supervisor`] is the public
//! face over it; everything that decides whether a run starts lives here or in
//! `Supervisor::input`, always under [`Inner::lock`].

use super::{InboundObserver, NotificationStore, PARKED_POLL, notifications};
use crate::agent::{Agent, Message, QueueKind};
use crate::runtime::bus::{InboundMessage, MessageBus, SYSTEM_CHANNEL};
use crate::runtime::event::{RuntimeEvent, RuntimeEventSender};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What the supervisor decides on, kept under its one lock.
pub(super) struct State {
    pub(super) pending: VecDeque<InboundMessage>,
    /// The count last reported, so only changes are sent.
    pub(super) reported: usize,
    /// What of `pending` the store has not heard about yet.
    pub(super) unrecorded: Unrecorded,
    /// Set by `abort`: nothing starts on its own until the next input or notification.
    pub(super) held: bool,
    /// How many [`SwitchHold`]s are alive: while any is, nothing is delivered.
    pub(super) switch_holds: usize,
    pub(super) store: Option<Arc<dyn NotificationStore>>,
}

/// The supervisor's shared part: the agent, where events go, and the locked state.
pub(super) struct Inner {
    pub(super) agent: Agent,
    pub(super) events: RuntimeEventSender,
    pub(super) runtime: tokio::runtime::Handle,
    pub(super) state: Mutex<State>,
    pub(super) observer: Mutex<Option<InboundObserver>>,
    /// Where user input waits for the prompt hooks, in order (only with a filter).
    pub(super) intake: Mutex<Option<super::intake::Queue>>,
}

/// What of the pending queue the store has not heard about: it is told only the change,
/// so a burst of n arrivals writes n notifications, not 1 + 2 + ... + n.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unrecorded {
    /// It knows the queue as it is.
    Nothing,
    /// The last `n` of the queue arrived since.
    Added(usize),
    /// The queue was emptied or replaced since: it hears the whole of it.
    Replaced,
}

impl State {
    /// Queues `message` behind the others; the store hears of it at the next report.
    pub(super) fn push_pending(&mut self, message: InboundMessage) {
        self.pending.push_back(message);
        self.unrecorded = match self.unrecorded {
            Unrecorded::Nothing => Unrecorded::Added(1),
            Unrecorded::Added(n) => Unrecorded::Added(n + 1),
            Unrecorded::Replaced => Unrecorded::Replaced,
        };
    }

    /// Empties the queue (it went into a run); the store hears of it at the next report.
    pub(super) fn clear_pending(&mut self) {
        if !self.pending.is_empty() {
            self.pending.clear();
            self.unrecorded = Unrecorded::Replaced;
        }
    }
}

impl Inner {
    /// The state, under the supervisor's one lock.
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // Every change is a push, a clear or a flag; a poisoned state is still valid.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tells the store and the UI what changed in the pending queue, only when it did.
    pub(super) fn report(&self, state: &mut State) {
        if let Some(store) = &state.store {
            match std::mem::replace(&mut state.unrecorded, Unrecorded::Nothing) {
                Unrecorded::Nothing => {}
                Unrecorded::Added(n) => {
                    let from = state.pending.len().saturating_sub(n);
                    let added: Vec<InboundMessage> = state.pending.range(from..).cloned().collect();
                    store.pending_added(&added);
                }
                Unrecorded::Replaced => {
                    let pending: Vec<InboundMessage> = state.pending.iter().cloned().collect();
                    store.pending_changed(&pending);
                }
            }
        }
        let count = state.pending.len();
        if count != state.reported {
            state.reported = count;
            self.events
                .send(RuntimeEvent::PendingNotifications { count });
        }
    }

    /// Takes one notification: parked elsewhere, deferred, or delivered when idle.
    pub(super) fn notify(&self, message: InboundMessage) {
        let _runtime = self.runtime.enter();
        let mut state = self.lock();
        let (session_id, summary) = (message.chat_id.clone(), message.summary());
        let Some(message) = state.route(message) else {
            self.events.send(RuntimeEvent::NotificationParked {
                session_id,
                summary,
            });
            return;
        };
        if message.defer {
            // It waits for the next run; it does not lift a hold or start one.
            state.push_pending(message);
            self.events
                .send(RuntimeEvent::NotificationDeferred { summary });
            self.report(&mut state);
            return;
        }
        state.held = false;
        state.push_pending(message);
        self.pump(&mut state);
    }

    /// Starts a run for whatever waits, if the agent is idle and not held.
    pub(super) fn pump(&self, state: &mut State) {
        if !state.held && state.switch_holds == 0 && !self.agent.state().is_streaming {
            self.deliver(state);
        }
        self.report(state);
    }

    /// The agent is idle: pending notifications and steering go in one run (which
    /// takes the queued follow-ups when it would stop); otherwise one follow-up starts
    /// a run: the oldest owed one (see [`Agent::admit`]), else the oldest (follow-ups
    /// queued while idle). The run takes the others in order as it goes.
    fn deliver(&self, state: &mut State) {
        let agent = &self.agent;
        let steering = agent.clear_queue(Some(QueueKind::Steering));
        // Deferred notifications alone start nothing; they go with whatever does.
        let wakes = !steering.is_empty() || state.pending.iter().any(|m| !m.defer);
        let pending = notifications(state.pending.make_contiguous());
        let mut messages: Vec<Message> = if wakes { pending.clone() } else { Vec::new() };
        messages.extend(steering.iter().cloned());
        let mut first_follow_up = None;
        if messages.is_empty() {
            let taken = match agent.take_owed() {
                Some(m) => Some((m, true)),
                None => agent.take_oldest(QueueKind::FollowUp).map(|m| (m, false)),
            };
            let Some((first, owed)) = taken else {
                return;
            };
            messages = pending;
            messages.push(first.clone());
            first_follow_up = Some((first, owed));
        }
        match agent.prompt_messages(messages) {
            Ok(()) => state.clear_pending(),
            // A run was started behind the supervisor's back: put the queues back as
            // they were; the pending notifications stay pending.
            Err(_) => {
                for m in steering {
                    agent.queue(QueueKind::Steering, m);
                }
                match first_follow_up {
                    Some((first, true)) => agent.requeue_owed(first),
                    Some((first, false)) => agent.requeue_front(QueueKind::FollowUp, first),
                    None => {}
                }
            }
        }
    }

    /// Takes what another process parked for the active session; delivered like any
    /// pending notification (at once when idle and not held).
    fn take_parked(&self) {
        let _runtime = self.runtime.enter();
        let mut state = self.lock();
        if state.switch_holds > 0 {
            return;
        }
        let Some(store) = state.store.clone() else {
            return;
        };
        let parked = store.take_parked();
        if parked.is_empty() {
            return;
        }
        for message in parked {
            state.push_pending(message);
        }
        self.pump(&mut state);
    }

    /// A run ended (or something else changed): deliver what waits.
    fn on_idle(&self) {
        let _runtime = self.runtime.enter();
        let mut state = self.lock();
        self.pump(&mut state);
    }
}

/// Feeds bus messages, run ends and what other processes parked for the active session
/// to the supervisor until stopped.
pub(super) async fn serve(
    inner: Arc<Inner>,
    bus: MessageBus,
    mut inbound: mpsc::UnboundedReceiver<InboundMessage>,
    mut ends: mpsc::UnboundedReceiver<crate::agent::AgentEvent>,
    stop: CancellationToken,
) {
    let mut bus_open = true;
    let mut parked = tokio::time::interval(PARKED_POLL);
    parked.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            () = stop.cancelled() => break,
            message = inbound.recv(), if bus_open => match message {
                Some(message) => {
                    let observer = inner.observer.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    if let Some(observer) = observer {
                        observer(&message);
                    }
                    inner.notify(message);
                }
                // Another consumer took over the channel; runs still need pumping.
                None => bus_open = false,
            },
            end = ends.recv() => match end {
                Some(_) => inner.on_idle(),
                None => break,
            },
            _ = parked.tick() => inner.take_parked(),
        }
    }
    if bus_open {
        bus.unsubscribe(SYSTEM_CHANNEL);
        // Messages already handed to this receiver stay with the supervisor, in order.
        let mut state = inner.lock();
        while let Ok(message) = inbound.try_recv() {
            if let Some(message) = state.route(message) {
                state.push_pending(message);
            }
        }
        inner.report(&mut state);
    }
}
