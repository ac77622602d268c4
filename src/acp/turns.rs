//! The prompts of a session waiting for their answer, in the order they were sent. A
//! prompt goes through the supervisor's intake (the prompt hooks may still be looking
//! at it), waits for its place (a prompt sent while a run is active queues as the
//! client's next message, never lost), and runs once its message enters the history
//! (known by its timestamp, unique in the session). A prompt's turn ends when the next
//! prompt's message enters (the agent went on to it) or when the run ends; a cancel
//! ends every prompt not yet answered.

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::PromptResponse;
use std::collections::VecDeque;

/// Where a prompt is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// The prompt hooks have not decided yet.
    Filtering,
    /// Admitted, its message not yet in the history.
    Waiting,
    /// Its message is in the history; the run is answering it.
    Running,
}

/// One prompt waiting for its answer.
struct Entry {
    id: u64,
    /// Its message's timestamp.
    stamp: u64,
    stage: Stage,
    /// Cancelled before the hooks let it through.
    cancelled: bool,
    responder: Responder<PromptResponse>,
}

/// What became of a prompt the hooks decided about.
pub enum Decided {
    /// It is on its way (or ran); nothing to answer yet.
    Admitted,
    /// Cancelled while the hooks looked: the run it started is to be stopped.
    AdmittedAfterCancel,
    /// Answer it now: it was blocked (or cancelled before).
    Answer(Box<Responder<PromptResponse>>),
}

/// The prompts of one session not yet answered.
#[derive(Default)]
pub struct Turns {
    entries: VecDeque<Entry>,
    next_id: u64,
    last_stamp: u64,
}

impl Turns {
    /// The timestamp for the next prompt's message: `now`, or just after the last one
    /// (two prompts in one millisecond stay apart).
    pub fn stamp(&mut self, now: u64) -> u64 {
        self.last_stamp = now.max(self.last_stamp + 1);
        self.last_stamp
    }

    /// A prompt (its message stamped `stamp`) just handed to the intake; its id names it
    /// when the hooks decide.
    pub fn add(&mut self, stamp: u64, responder: Responder<PromptResponse>) -> u64 {
        self.next_id += 1;
        self.entries.push_back(Entry {
            id: self.next_id,
            stamp,
            stage: Stage::Filtering,
            cancelled: false,
            responder,
        });
        self.next_id
    }

    /// A command whose run is under way (a compaction): answered when it ends.
    pub fn add_running(&mut self, responder: Responder<PromptResponse>) {
        self.next_id += 1;
        self.entries.push_back(Entry {
            id: self.next_id,
            // No message of the user's: no timestamp names it.
            stamp: 0,
            stage: Stage::Running,
            cancelled: false,
            responder,
        });
    }

    /// The hooks decided about prompt `id`: `admitted` or not.
    pub fn decided(&mut self, id: u64, admitted: bool) -> Option<Decided> {
        let at = self.entries.iter().position(|e| e.id == id)?;
        let entry = &mut self.entries[at];
        match (admitted, entry.cancelled) {
            (true, false) => {
                entry.stage = Stage::Waiting;
                Some(Decided::Admitted)
            }
            (true, true) => {
                // Its message is in: it runs (and is stopped) like any other.
                entry.stage = Stage::Waiting;
                Some(Decided::AdmittedAfterCancel)
            }
            (false, _) => self
                .entries
                .remove(at)
                .map(|entry| Decided::Answer(Box::new(entry.responder))),
        }
    }

    /// A user message stamped `stamp` entered the history: its prompt now runs, and the
    /// one that ran before it, if any, is done (returned, to answer). A message that is
    /// no waiting prompt's (an answered one, or one left queued in a resumed session)
    /// changes nothing.
    pub fn entered(&mut self, stamp: u64) -> Option<Responder<PromptResponse>> {
        let next = self
            .entries
            .iter()
            .position(|e| e.stamp == stamp && e.stage != Stage::Running)?;
        self.entries[next].stage = Stage::Running;
        let done = self
            .entries
            .iter()
            .take(next)
            .position(|e| e.stage == Stage::Running)?;
        self.entries.remove(done).map(|e| e.responder)
    }

    /// The run ended: the prompts it answered (the one it was on last).
    pub fn run_ended(&mut self) -> Vec<Responder<PromptResponse>> {
        let (done, kept): (Vec<Entry>, Vec<Entry>) = self
            .entries
            .drain(..)
            .partition(|e| e.stage == Stage::Running);
        self.entries = kept.into();
        done.into_iter().map(|e| e.responder).collect()
    }

    /// A cancel: the prompts waiting for their place are answered now (their messages
    /// leave the queue); those the hooks still look at are marked, to stop when they
    /// come through. The running one is answered when its run ends.
    pub fn cancel(&mut self) -> Vec<Responder<PromptResponse>> {
        let (waiting, kept): (Vec<Entry>, Vec<Entry>) = self
            .entries
            .drain(..)
            .partition(|e| e.stage == Stage::Waiting);
        self.entries = kept.into();
        for entry in &mut self.entries {
            if entry.stage == Stage::Filtering {
                entry.cancelled = true;
            }
        }
        waiting.into_iter().map(|e| e.responder).collect()
    }

    /// Whether a prompt is being answered now.
    pub fn running(&self) -> bool {
        self.entries.iter().any(|e| e.stage == Stage::Running)
    }

    /// Every prompt left, to answer as the session closes.
    pub fn drain(&mut self) -> Vec<Responder<PromptResponse>> {
        self.entries.drain(..).map(|e| e.responder).collect()
    }
}
