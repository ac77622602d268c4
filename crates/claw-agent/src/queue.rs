//! The steering and follow-up queues shared by the facade and a running loop, and the
//! run's intake: whether a run is under way that will still take what is queued.

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

/// How [`Queues::admit`] queued a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// A run under way takes it, in order, before it ends.
    TakenByRun,
    /// It waits behind follow-ups owed a run that has not started yet.
    BehindOwed,
}

/// A queued message.
struct Queued {
    message: Message,
    /// Owed a run of its own: sent to start one while none could take it (see
    /// [`Queues::push_owed`]), or left by a run that stopped before taking it.
    owed: bool,
}

impl Queued {
    fn plain(message: Message) -> Self {
        Self {
            message,
            owed: false,
        }
    }
}

#[derive(Default)]
struct Inner {
    steering: VecDeque<Queued>,
    follow_up: VecDeque<Queued>,
    steering_mode: QueueMode,
    follow_up_mode: QueueMode,
    /// A run is under way and will look at both queues again before it ends.
    intake_open: bool,
}

impl Inner {
    fn queue(&mut self, kind: QueueKind) -> (&mut VecDeque<Queued>, QueueMode) {
        match kind {
            QueueKind::Steering => (&mut self.steering, self.steering_mode),
            QueueKind::FollowUp => (&mut self.follow_up, self.follow_up_mode),
        }
    }

    fn poll(&mut self, kind: QueueKind) -> Vec<Message> {
        let (queue, mode) = self.queue(kind);
        let taken = match mode {
            QueueMode::OneAtATime => queue.pop_front().into_iter().collect(),
            QueueMode::All => queue.drain(..).collect::<Vec<_>>(),
        };
        taken.into_iter().map(|q| q.message).collect()
    }

    fn update_event(&self) -> AgentEvent {
        let texts = |q: &VecDeque<Queued>| q.iter().map(|q| q.message.preview_text()).collect();
        AgentEvent::QueueUpdate {
            steering: texts(&self.steering),
            follow_up: texts(&self.follow_up),
        }
    }
}

/// Both queues behind one lock; every change emits `queue_update` while still locked,
/// so subscribers see the updates in the order the changes happened.
///
/// The same lock guards the run's intake: a run opens it as it starts and closes it
/// in the same step as its last look at the queues finds them empty, so a message
/// queued with [`Queues::push_if_open`] is always taken by the run it was queued for.
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
        inner.queue(kind).0.push_back(Queued::plain(message));
        sink.emit(inner.update_event());
    }

    /// Queues a message sent to start a run, if something already owns its place in
    /// line: a run under way that will still take it, or (with `behind_owed`, for a
    /// follow-up) follow-ups owed a run that has not started yet, which it joins. Gives
    /// it back (boxed) when neither: nothing sent before it waits, and a run may start
    /// with it.
    /// One step under the queues' lock, so a run ending meanwhile changes nothing.
    pub fn admit(
        &self,
        kind: QueueKind,
        message: Message,
        behind_owed: bool,
        sink: &EventSink,
    ) -> Result<Admission, Box<Message>> {
        let mut inner = self.lock();
        let admission = if inner.intake_open {
            Admission::TakenByRun
        } else if behind_owed
            && kind == QueueKind::FollowUp
            && inner.follow_up.iter().any(|q| q.owed)
        {
            Admission::BehindOwed
        } else {
            return Err(Box::new(message));
        };
        let owed = admission == Admission::BehindOwed;
        inner.queue(kind).0.push_back(Queued { message, owed });
        sink.emit(inner.update_event());
        Ok(admission)
    }

    /// Appends a follow-up that was sent to start a run while none could take it (the
    /// last one was ending): it is owed a run of its own, which must start before
    /// anything sent after it. The next run to start takes it like any follow-up.
    pub fn push_owed(&self, message: Message, sink: &EventSink) {
        let mut inner = self.lock();
        inner.follow_up.push_back(Queued {
            message,
            owed: true,
        });
        sink.emit(inner.update_event());
    }

    /// Takes the oldest follow-up owed a run, leaving the others where they are.
    pub fn take_owed(&self, sink: &EventSink) -> Option<Message> {
        let mut inner = self.lock();
        let at = inner.follow_up.iter().position(|q| q.owed)?;
        let taken = inner.follow_up.remove(at).map(|q| q.message);
        sink.emit(inner.update_event());
        taken
    }

    /// Puts back, at the front, a follow-up taken with [`Queues::take_owed`] whose run
    /// could not start.
    pub fn push_front_owed(&self, message: Message, sink: &EventSink) {
        let mut inner = self.lock();
        inner.follow_up.push_front(Queued {
            message,
            owed: true,
        });
        sink.emit(inner.update_event());
    }

    /// A run starts: it will take what is queued now and what is queued until it
    /// closes the intake, so nothing queued is owed a run of its own any more.
    pub(crate) fn open_intake(&self) {
        let mut inner = self.lock();
        inner.intake_open = true;
        for queued in inner.follow_up.iter_mut() {
            queued.owed = false;
        }
    }

    /// The run is ending without another look at the queues (stopped, failed, at its
    /// turn limit): the follow-ups it leaves are owed a run, and what is queued from now
    /// on is no longer its.
    pub(crate) fn close_intake(&self) {
        let mut inner = self.lock();
        if inner.intake_open {
            inner.intake_open = false;
            for queued in inner.follow_up.iter_mut() {
                queued.owed = true;
            }
        }
    }

    /// The run's last look before it ends: queued steering, else follow-ups as the
    /// follow-up mode allows; when both are empty the intake closes in the same step,
    /// and `None` says the run is over.
    pub(crate) fn next_or_close(&self, sink: &EventSink) -> Option<(QueueKind, Vec<Message>)> {
        let mut inner = self.lock();
        for kind in [QueueKind::Steering, QueueKind::FollowUp] {
            let taken = inner.poll(kind);
            if !taken.is_empty() {
                sink.emit(inner.update_event());
                return Some((kind, taken));
            }
        }
        inner.intake_open = false;
        None
    }

    /// Puts messages back at the front of a queue, keeping their order.
    pub fn push_front(&self, kind: QueueKind, messages: Vec<Message>, sink: &EventSink) {
        if messages.is_empty() {
            return;
        }
        let mut inner = self.lock();
        let queue = inner.queue(kind).0;
        for m in messages.into_iter().rev() {
            queue.push_front(Queued::plain(m));
        }
        sink.emit(inner.update_event());
    }

    /// Takes the oldest message of a queue, whatever its mode.
    pub fn pop_front(&self, kind: QueueKind, sink: &EventSink) -> Option<Message> {
        let mut inner = self.lock();
        let taken = inner.queue(kind).0.pop_front().map(|q| q.message);
        if taken.is_some() {
            sink.emit(inner.update_event());
        }
        taken
    }

    /// Takes what the queue's mode allows: one message, or all of them.
    pub fn poll(&self, kind: QueueKind, sink: &EventSink) -> Vec<Message> {
        let mut inner = self.lock();
        let taken = inner.poll(kind);
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
                removed.extend(inner.queue(k).0.drain(..).map(|q| q.message));
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
        self.lock()
            .queue(kind)
            .0
            .iter()
            .map(|q| q.message.clone())
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(queues: &Queues) -> Vec<String> {
        queues
            .snapshot(QueueKind::FollowUp)
            .iter()
            .map(Message::preview_text)
            .collect()
    }

    #[test]
    fn a_run_takes_what_is_admitted_until_its_last_look_closes_the_intake() {
        let (queues, sink) = (Queues::default(), EventSink::new(|_| {}));
        let first = Message::user("first");
        assert!(
            queues
                .admit(QueueKind::FollowUp, first, true, &sink)
                .is_err(),
            "no run: the caller starts one"
        );
        queues.open_intake();
        let admitted = queues.admit(QueueKind::FollowUp, Message::user("a"), true, &sink);
        assert_eq!(admitted, Ok(Admission::TakenByRun));
        let (kind, next) = queues.next_or_close(&sink).unwrap();
        assert_eq!((kind, next.len()), (QueueKind::FollowUp, 1));
        assert!(queues.next_or_close(&sink).is_none());
        // Closed in the same step as the empty look: the run is not there to take it.
        assert!(
            queues
                .admit(QueueKind::FollowUp, Message::user("late"), true, &sink)
                .is_err()
        );
    }

    #[test]
    fn what_waits_for_a_run_that_has_not_started_keeps_the_later_ones_behind_it() {
        let (queues, sink) = (Queues::default(), EventSink::new(|_| {}));
        // A follow-up sent while idle waits for the next prompt; it is not owed a run.
        queues.push(QueueKind::FollowUp, Message::user("idle follow-up"), &sink);
        let idle = queues.admit(QueueKind::FollowUp, Message::user("x"), true, &sink);
        assert!(idle.is_err());
        queues.push_owed(Message::user("owed"), &sink);
        let behind = queues.admit(QueueKind::FollowUp, Message::user("later"), true, &sink);
        assert_eq!(behind, Ok(Admission::BehindOwed));
        // Steering is never held back behind follow-ups.
        let steer = queues.admit(QueueKind::Steering, Message::user("s"), true, &sink);
        assert!(steer.is_err());
        let owed = queues.take_owed(&sink).unwrap();
        assert_eq!(owed.preview_text(), "owed");
        assert_eq!(texts(&queues), ["idle follow-up", "later"]);
    }

    #[test]
    fn a_run_that_stops_early_leaves_its_follow_ups_owed_a_run() {
        let (queues, sink) = (Queues::default(), EventSink::new(|_| {}));
        queues.open_intake();
        for text in ["one", "two"] {
            let taken = queues.admit(QueueKind::FollowUp, Message::user(text), true, &sink);
            assert_eq!(taken, Ok(Admission::TakenByRun));
        }
        queues.close_intake();
        let behind = queues.admit(QueueKind::FollowUp, Message::user("three"), true, &sink);
        assert_eq!(behind, Ok(Admission::BehindOwed));
        let without = queues.admit(QueueKind::FollowUp, Message::user("four"), false, &sink);
        assert!(without.is_err(), "after an abort the next input goes first");
        assert_eq!(queues.take_owed(&sink).unwrap().preview_text(), "one");
        queues.open_intake();
        assert!(queues.take_owed(&sink).is_none());
        assert_eq!(texts(&queues), ["two", "three"]);
    }
}
