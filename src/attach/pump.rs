//! One order for every attached client: a single task takes the main agent's events,
//! the runtime's events and the hub's own lines (presence, approvals), writes each as a
//! JSON line once, and hands the same line to every client through one bounded
//! broadcast buffer. A client joins *between* two events: the state it is given folds in
//! exactly the events before its first line, so nothing is missing and nothing doubled.

use crate::agent::{Agent, AgentEvent, AgentState};
use crate::runtime::RuntimeEvent;
use crate::runtime::cron::CronJobInfo;
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// One line of the protocol, as sent (without its newline).
pub type Line = Arc<str>;

/// How many lines a client may fall behind before it is told and resynchronised.
pub const LAG_LIMIT: usize = 8192;
/// How many of the hub's own lines a watcher may fall behind: they are few (presence,
/// approvals asked and answered), but a message's parallel calls can each ask at once.
const SAID_LIMIT: usize = 1024;

/// What a joining client gets: the state up to a point, and every line after it.
pub struct Joined {
    /// The main agent's state, including the answer being streamed.
    pub state: Arc<AgentState>,
    /// The lines after that state, in the order every client gets them.
    pub lines: broadcast::Receiver<Line>,
}

/// What the pump is asked to do besides forwarding events.
pub enum Request {
    /// A client joins (or rejoins after falling behind).
    Join(oneshot::Sender<Joined>),
    /// A line of the hub's own, in the common order.
    Say(Line),
    /// A watcher of the hub's own lines only (presence, approvals answered).
    Watch(oneshot::Sender<broadcast::Receiver<Line>>),
}

/// The handle to a running pump.
#[derive(Clone)]
pub struct PumpHandle {
    requests: mpsc::UnboundedSender<Request>,
}

impl PumpHandle {
    /// Starts the pump for `agent`, the runtime events of `runtime` and the cron jobs
    /// as `cron` publishes them (each new list is a `cron_jobs` line); it runs until
    /// the agent and every handle are gone.
    pub fn start(
        agent: &Agent,
        runtime: mpsc::UnboundedReceiver<RuntimeEvent>,
        cron: Option<watch::Receiver<Vec<CronJobInfo>>>,
    ) -> Self {
        let (requests, received) = mpsc::unbounded_channel();
        let (seen, events) = agent.subscribe_counted();
        let pump = Pump {
            agent: agent.clone(),
            events,
            seen,
            runtime,
            cron,
            out: None,
            said: broadcast::channel(SAID_LIMIT).0,
            requests: received,
        };
        tokio::spawn(pump.run());
        Self { requests }
    }

    /// Joins: the state now and the lines from here on. `None` when the pump stopped.
    pub async fn join(&self) -> Option<Joined> {
        let (reply, joined) = oneshot::channel();
        self.requests.send(Request::Join(reply)).ok()?;
        joined.await.ok()
    }

    /// The hub's own lines from here on (who attached or left, who answered an
    /// approval), without the agent's events: the hosting terminal takes those from
    /// the agent itself, and a watcher of all lines would make the pump write every
    /// event as JSON for nobody. `None` when the pump stopped.
    pub async fn watch(&self) -> Option<broadcast::Receiver<Line>> {
        let (reply, watcher) = oneshot::channel();
        self.requests.send(Request::Watch(reply)).ok()?;
        watcher.await.ok()
    }

    /// Sends `line` to every client, ordered with the events.
    pub fn say(&self, line: Line) {
        let _ = self.requests.send(Request::Say(line));
    }
}

struct Pump {
    agent: Agent,
    events: mpsc::UnboundedReceiver<AgentEvent>,
    /// The agent's events taken off `events` so far, in the agent's own count.
    seen: u64,
    runtime: mpsc::UnboundedReceiver<RuntimeEvent>,
    cron: Option<watch::Receiver<Vec<CronJobInfo>>>,
    /// The buffer every client reads from, made when the first client joins: a session
    /// nobody attaches to (most of them) neither holds its `LAG_LIMIT` slots (0.3 MB)
    /// nor writes its events as JSON for no reader.
    out: Option<broadcast::Sender<Line>>,
    /// The hub's own lines for the watchers of those only.
    said: broadcast::Sender<Line>,
    requests: mpsc::UnboundedReceiver<Request>,
}

impl Pump {
    async fn run(mut self) {
        let mut runtime_open = true;
        loop {
            tokio::select! {
                biased;
                request = self.requests.recv() => match request {
                    Some(Request::Join(reply)) => self.join(reply).await,
                    Some(Request::Say(line)) => {
                        // Nobody watching is not an error.
                        let _ = self.said.send(line.clone());
                        self.send(line);
                    }
                    Some(Request::Watch(reply)) => {
                        let _ = reply.send(self.said.subscribe());
                    }
                    None => return,
                },
                event = self.events.recv() => match event {
                    Some(event) => {
                        self.seen += 1;
                        self.send_json(&event);
                    }
                    None => return,
                },
                event = self.runtime.recv(), if runtime_open => match event {
                    Some(event) => self.send_json(&event),
                    None => runtime_open = false,
                },
                changed = cron_changed(&mut self.cron) => match changed {
                    Some(jobs) => self.send_json(&serde_json::json!({
                        "type": "cron_jobs",
                        "jobs": jobs,
                    })),
                    None => self.cron = None,
                },
            }
        }
    }

    /// Forwards the events the agent dispatched before the state is taken, then
    /// subscribes the client: its first line is the first event the state lacks.
    async fn join(&mut self, reply: oneshot::Sender<Joined>) {
        let (state, count) = self.agent.state_counted();
        // Dispatched under the agent's lock before the snapshot: already in the channel.
        while self.seen < count {
            let Some(event) = self.events.recv().await else {
                break;
            };
            self.seen += 1;
            self.send_json(&event);
        }
        let lines = self
            .out
            .get_or_insert_with(|| broadcast::channel(LAG_LIMIT).0)
            .subscribe();
        let _ = reply.send(Joined { state, lines });
    }

    /// The sender while some client is attached: a line sent with no receiver is
    /// dropped by the channel anyway, so it is not made at all. Once the last client
    /// has left, the buffer goes too (the next join makes a new one).
    fn listened(&mut self) -> Option<&broadcast::Sender<Line>> {
        if self
            .out
            .as_ref()
            .is_some_and(|out| out.receiver_count() == 0)
        {
            self.out = None;
        }
        self.out.as_ref()
    }

    fn send_json(&mut self, value: &impl serde::Serialize) {
        if let Some(out) = self.listened()
            && let Some(line) = crate::session::event_json(value)
        {
            let _ = out.send(Line::from(line));
        }
    }

    fn send(&mut self, line: Line) {
        if let Some(out) = self.listened() {
            let _ = out.send(line);
        }
    }
}

/// The next list of cron jobs (`None`: the service is gone); never without one.
async fn cron_changed(
    cron: &mut Option<watch::Receiver<Vec<CronJobInfo>>>,
) -> Option<Vec<CronJobInfo>> {
    match cron {
        Some(jobs) => match jobs.changed().await {
            Ok(()) => Some(jobs.borrow_and_update().clone()),
            Err(_) => None,
        },
        None => std::future::pending().await,
    }
}
