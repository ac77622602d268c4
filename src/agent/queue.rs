//! The steering and follow-up queues shared by the facade and a running loop.

use super::event::{AgentEvent, EventSink};
use super::types::Message;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

/// How many queued messages one poll takes.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum QueueMode {
    /// One message per poll: each gets its own turn.
    #[default]
    #[serde(rename = "one-at-a-time")]
    OneAtATime,
    /// The whole queue in one injection.
    #[serde(rename = "all")]
    All,
}

/// Which of the two queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// Injected at the next tool boundary.
    Steering,
    /// Delivered when the agent would otherwise stop.
    FollowUp,
}

#[derive(Default)]
struct Inner {
    steering: VecDeque<Message>,
    follow_up: VecDeque<Message>,
    steering_mode: QueueMode,
    follow_up_mode: QueueMode,
}

impl Inner {
    fn queue(&mut self, kind: QueueKind) -> (&mut VecDeque<Message>, QueueMode) {
        match kind {
            QueueKind::Steering => (&mut self.steering, self.steering_mode),
            QueueKind::FollowUp => (&mut self.follow_up, self.follow_up_mode),
        }
    }

    fn update_event(&self) -> AgentEvent {
        let texts = |q: &VecDeque<Message>| q.iter().map(Message::preview_text).collect();
        AgentEvent::QueueUpdate {
            steering: texts(&self.steering),
            follow_up: texts(&self.follow_up),
        }
    }
}

/// Both queues behind one lock; every change emits `queue_update` while still locked,
/// so subscribers see the updates in the order the changes happened.
#[derive(Default)]
pub struct Queues {
    inner: Mutex<Inner>,
}

impl Queues {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding this lock cannot leave the deques half-updated.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends a message to a queue.
    pub fn push(&self, kind: QueueKind, message: Message, sink: &EventSink) {
        let mut inner = self.lock();
        inner.queue(kind).0.push_back(message);
        sink.emit(inner.update_event());
    }

    /// Puts messages back at the front of a queue, keeping their order.
    pub fn push_front(&self, kind: QueueKind, messages: Vec<Message>, sink: &EventSink) {
        if messages.is_empty() {
            return;
        }
        let mut inner = self.lock();
        let queue = inner.queue(kind).0;
        for m in messages.into_iter().rev() {
            queue.push_front(m);
        }
        sink.emit(inner.update_event());
    }

    /// Takes the oldest message of a queue, whatever its mode.
    pub fn pop_front(&self, kind: QueueKind, sink: &EventSink) -> Option<Message> {
        let mut inner = self.lock();
        let taken = inner.queue(kind).0.pop_front();
        if taken.is_some() {
            sink.emit(inner.update_event());
        }
        taken
    }

    /// Takes what the queue's mode allows: one message, or all of them.
    pub fn poll(&self, kind: QueueKind, sink: &EventSink) -> Vec<Message> {
        let mut inner = self.lock();
        let (queue, mode) = inner.queue(kind);
        let taken: Vec<Message> = match mode {
            QueueMode::OneAtATime => queue.pop_front().into_iter().collect(),
            QueueMode::All => queue.drain(..).collect(),
        };
        if !taken.is_empty() {
            sink.emit(inner.update_event());
        }
        taken
    }

    /// Empties a queue (or both with `None`) and returns what was removed.
    pub fn clear(&self, kind: Option<QueueKind>, sink: &EventSink) -> Vec<Message> {
        let mut inner = self.lock();
        let mut removed = Vec::new();
        for k in [QueueKind::Steering, QueueKind::FollowUp] {
            if kind.is_none_or(|want| want == k) {
                removed.extend(inner.queue(k).0.drain(..));
            }
        }
        if !removed.is_empty() {
            sink.emit(inner.update_event());
        }
        removed
    }

    /// Number of messages waiting in a queue.
    pub fn len(&self, kind: QueueKind) -> usize {
        self.lock().queue(kind).0.len()
    }

    /// Whether both queues are empty.
    pub fn is_empty(&self) -> bool {
        let inner = self.lock();
        inner.steering.is_empty() && inner.follow_up.is_empty()
    }

    /// Copies of the queued messages, oldest first.
    pub fn snapshot(&self, kind: QueueKind) -> Vec<Message> {
        self.lock().queue(kind).0.iter().cloned().collect()
    }

    /// Sets a queue's mode; takes effect at its next poll.
    pub fn set_mode(&self, kind: QueueKind, mode: QueueMode) {
        let mut inner = self.lock();
        match kind {
            QueueKind::Steering => inner.steering_mode = mode,
            QueueKind::FollowUp => inner.follow_up_mode = mode,
        }
    }

    /// A queue's mode.
    pub fn mode(&self, kind: QueueKind) -> QueueMode {
        self.lock().queue(kind).1
    }
}
