//! The facade's side of the run's intake: queueing a message only while a run will
//! still take it, and the follow-ups owed a run of their own because none could.

use super::queue::Admission;
use super::{Agent, Message, QueueKind};

impl Agent {
    /// Queues a message sent to start a run if something already owns its place in
    /// line: a run under way that will still take it, or (with `behind_owed`)
    /// follow-ups owed a run that has not started yet. Gives it back otherwise, when a
    /// run may start with it. See [`Queues::admit`](super::queue::Queues::admit).
    pub fn admit(
        &self,
        kind: QueueKind,
        message: Message,
        behind_owed: bool,
    ) -> Result<Admission, Box<Message>> {
        self.inner
            .queues
            .admit(kind, message, behind_owed, &self.inner.sink)
    }

    /// Queues a follow-up sent to start a run while the last run was ending: no run
    /// will take it, so it is owed one, to start before anything sent after it (see
    /// [`Agent::take_owed`]). A run that starts meanwhile takes it as a follow-up.
    pub fn queue_owed(&self, message: Message) {
        self.inner.queues.push_owed(message, &self.inner.sink);
    }

    /// Takes the oldest follow-up owed a run, to start that run with it.
    pub fn take_owed(&self) -> Option<Message> {
        self.inner.queues.take_owed(&self.inner.sink)
    }

    /// Puts back a follow-up from [`Agent::take_owed`] whose run could not start.
    pub fn requeue_owed(&self, message: Message) {
        self.inner.queues.push_front_owed(message, &self.inner.sink);
    }
}
