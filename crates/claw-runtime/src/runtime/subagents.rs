//! Background subagents: each is its own agent loop with no history, the tools the
//! tool policy offers subagents, and a turn limit, started by the `spawn` tool. At most
//! `max_concurrent` run at once; later spawns wait in order. Their events reach the UI
//! wrapped as [`RuntimeEvent::SubagentEvent`], and their results reach the main agent
//! through the bus's `system` channel, which the supervisor delivers when the main agent
//! is free.

mod error;
mod run;
mod types;

/// The `sender_id` of subagent results on the bus (the `source` of their notifications).
pub use error::SubagentError;
pub use run::SENDER as RESULT_SENDER;
pub use types::{
    DEFAULT_MAX_CONCURRENT, DEFAULT_SUBAGENT_MAX_TURNS, SUBAGENT_SYSTEM_PROMPT, SpawnReceipt,
    SubagentConfig, SubagentInfo, SubagentStatus,
};

use super::bus::MessageBus;
use super::event::{RuntimeEvent, RuntimeEventSender};
use crate::llm::Provider;
use crate::tools::message::DEFAULT_CHAT_ID;
use crate::tools::policy::{AgentKind, ToolPolicy};
use crate::tools::spawn::SpawnBackend;
use async_trait::async_trait;
use run::{Job, Outcome};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

struct Record {
    info: SubagentInfo,
    cancel: CancellationToken,
    /// False once the app is quitting: nobody is left to read a notification.
    notify: bool,
    started: Option<Instant>,
    finished: Option<Instant>,
    /// Tools running now as `(call id, name)`, oldest first.
    active_tools: Vec<(String, String)>,
}

impl Record {
    fn snapshot(&self) -> SubagentInfo {
        let elapsed = match (self.started, self.finished) {
            (Some(start), Some(end)) => end - start,
            (Some(start), None) => start.elapsed(),
            _ => std::time::Duration::ZERO,
        };
        SubagentInfo {
            elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            current_tool: self.active_tools.last().map(|(_, name)| name.clone()),
            ..self.info.clone()
        }
    }
}

struct State {
    next_number: u64,
    records: Vec<Record>,
    waiting: VecDeque<String>,
    running: usize,
    origin: String,
    closed: bool,
}

impl State {
    fn record(&mut self, id: &str) -> Option<&mut Record> {
        self.records.iter_mut().find(|r| r.info.id == id)
    }
}

struct Shared {
    provider: Arc<dyn Provider>,
    policy: ToolPolicy,
    bus: MessageBus,
    events: RuntimeEventSender,
    config: SubagentConfig,
    /// Replaces `config.system_prompt` once the tool list changed (MCP servers).
    system_prompt: Mutex<Option<String>>,
    state: Mutex<State>,
    /// Subagents running or waiting; `wait_all` and `shutdown` wait for zero.
    active: watch::Sender<usize>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every change under this lock completes before it is released or leaves the
        // records consistent; a panic elsewhere cannot make them invalid.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Emits the record's state; called under the lock so updates keep their order.
    fn announce(&self, record: &Record) {
        self.events.send(RuntimeEvent::SubagentUpdate {
            info: record.snapshot(),
        });
    }
}

/// Starts, tracks and cancels subagents; cheap to clone, clones share everything. Give
/// it to `SpawnTool::new` as the spawn backend.
#[derive(Clone)]
pub struct SubagentManager {
    shared: Arc<Shared>,
}

impl SubagentManager {
    /// A manager whose subagents use `provider` and the tools `policy` offers
    /// subagents; results go to `bus`, events to `events`.
    pub fn new(
        provider: Arc<dyn Provider>,
        policy: ToolPolicy,
        bus: MessageBus,
        events: RuntimeEventSender,
        config: SubagentConfig,
    ) -> Self {
        let (active, _) = watch::channel(0);
        Self {
            shared: Arc::new(Shared {
                provider,
                policy,
                bus,
                events,
                config,
                system_prompt: Mutex::new(None),
                state: Mutex::new(State {
                    next_number: 0,
                    records: Vec::new(),
                    waiting: VecDeque::new(),
                    running: 0,
                    origin: DEFAULT_CHAT_ID.to_owned(),
                    closed: false,
                }),
                active,
            }),
        }
    }

    /// The names of the tools every subagent gets.
    pub fn tool_names(&self) -> Vec<String> {
        self.shared.policy.names_for(AgentKind::Subagent)
    }

    /// The system prompt subagents started from now on get (it lists their tools, which
    /// change when MCP servers connect).
    pub fn set_system_prompt(&self, prompt: String) {
        *self
            .shared
            .system_prompt
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(prompt);
    }

    /// The system prompt the next subagent gets.
    pub fn system_prompt(&self) -> String {
        self.shared
            .system_prompt
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_else(|| self.shared.config.system_prompt.clone())
    }

    /// Sets the conversation (chat id) that results of later spawns go back to.
    pub fn set_origin(&self, chat_id: impl Into<String>) {
        self.shared.lock().origin = chat_id.into();
    }

    /// Starts a subagent on `task` for the `spawn` call `parent_call_id`, or queues it
    /// when the concurrency limit is reached; returns at once.
    pub fn spawn_task(
        &self,
        parent_call_id: &str,
        task: String,
        label: Option<String>,
    ) -> Result<SpawnReceipt, SubagentError> {
        if task.trim().is_empty() {
            return Err(SubagentError::EmptyTask);
        }
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(SubagentError::NoRuntime);
        }
        let limit = self.shared.config.max_concurrent.max(1);
        let mut state = self.shared.lock();
        if state.closed {
            return Err(SubagentError::ShuttingDown);
        }
        state.next_number += 1;
        let number = state.next_number;
        let id = format!("subagent-{number}");
        let label = label
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| format!("Task {number}"));
        let record = Record {
            info: SubagentInfo {
                id: id.clone(),
                label: label.clone(),
                task,
                status: SubagentStatus::Queued,
                turns: 0,
                tokens: 0,
                elapsed_ms: 0,
                current_tool: None,
                parent_tool_call_id: parent_call_id.to_owned(),
                chat_id: state.origin.clone(),
            },
            cancel: CancellationToken::new(),
            notify: true,
            started: None,
            finished: None,
            active_tools: Vec::new(),
        };
        self.shared.announce(&record);
        state.records.push(record);
        self.shared.active.send_modify(|n| *n += 1);
        let queued_position = if state.running < limit {
            None
        } else {
            state.waiting.push_back(id.clone());
            Some(state.waiting.len())
        };
        let job = match queued_position {
            None => self.begin(&mut state, &id),
            Some(_) => None,
        };
        let receipt = SpawnReceipt {
            id,
            label,
            running: state.running,
            queued_position,
            limit,
        };
        drop(state);
        if let Some(job) = job {
            tokio::spawn(run::run(self.clone(), job));
        }
        Ok(receipt)
    }

    /// Marks `id` running and returns what its task needs; the caller spawns it.
    fn begin(&self, state: &mut State, id: &str) -> Option<Job> {
        let record = state.record(id)?;
        record.info.status = SubagentStatus::Running;
        record.started = Some(Instant::now());
        self.shared.announce(record);
        let job = Job {
            id: id.to_owned(),
            label: record.info.label.clone(),
            task: record.info.task.clone(),
            parent_tool_call_id: record.info.parent_tool_call_id.clone(),
            cancel: record.cancel.clone(),
        };
        state.running += 1;
        Some(job)
    }

    /// Every subagent so far, in spawn order.
    pub fn list(&self) -> Vec<SubagentInfo> {
        self.shared
            .lock()
            .records
            .iter()
            .map(Record::snapshot)
            .collect()
    }

    /// One subagent's state.
    pub fn get(&self, id: &str) -> Option<SubagentInfo> {
        self.shared.lock().record(id).map(|r| r.snapshot())
    }

    /// How many subagents are running now.
    pub fn running(&self) -> usize {
        self.shared.lock().running
    }

    /// Cancels a subagent: a queued one never starts, a running one is aborted with its
    /// tools. The main agent is told, with any partial answer.
    pub fn cancel(&self, id: &str) -> Result<(), SubagentError> {
        let mut state = self.shared.lock();
        let Some(record) = state.record(id) else {
            return Err(SubagentError::UnknownId { id: id.to_owned() });
        };
        match record.info.status {
            SubagentStatus::Running => {
                record.cancel.cancel();
                Ok(())
            }
            SubagentStatus::Queued => {
                record.cancel.cancel();
                // Out of the line before the lock is released, so it can never start.
                state.waiting.retain(|w| w != id);
                drop(state);
                self.finish(id, Outcome::Cancelled { partial: None });
                Ok(())
            }
            status => Err(SubagentError::AlreadyEnded {
                id: id.to_owned(),
                status,
            }),
        }
    }

    /// Waits until no subagent is running or waiting.
    pub async fn wait_all(&self) {
        let mut active = self.shared.active.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = active.wait_for(|n| *n == 0).await;
    }

    /// For quitting the app: refuses new spawns, cancels every subagent without
    /// notifying the main agent, and waits until all have stopped.
    pub async fn shutdown(&self) {
        let queued: Vec<String> = {
            let mut state = self.shared.lock();
            state.closed = true;
            for record in &mut state.records {
                record.notify = false;
                record.cancel.cancel();
            }
            state.waiting.iter().cloned().collect()
        };
        for id in queued {
            self.finish(&id, Outcome::Cancelled { partial: None });
        }
        self.wait_all().await;
    }

    /// Records how `id` ended, tells the main agent, and starts the next waiting one.
    fn finish(&self, id: &str, outcome: Outcome) {
        let limit = self.shared.config.max_concurrent.max(1);
        let mut state = self.shared.lock();
        let was_running = match state.record(id) {
            Some(record) if !record.info.status.is_finished() => {
                let was_running = record.info.status == SubagentStatus::Running;
                record.info.status = outcome.status();
                record.finished = Some(Instant::now());
                record.active_tools.clear();
                self.shared.announce(record);
                was_running
            }
            // Already ended (a cancel raced the end): nothing changes, nothing is sent.
            _ => return,
        };
        let notice = state
            .record(id)
            .filter(|r| r.notify)
            .map(|r| outcome.notification(&r.info, self.shared.config.max_turns));
        state.waiting.retain(|w| w != id);
        let mut next = None;
        if was_running {
            state.running -= 1;
            while !state.closed && state.running < limit && next.is_none() {
                let Some(candidate) = state.waiting.pop_front() else {
                    break;
                };
                next = self.begin(&mut state, &candidate);
            }
        }
        drop(state);
        if let Some(message) = notice {
            self.shared.bus.publish(message);
        }
        // Counted down only after publishing, so `wait_all` implies the result is on the bus.
        self.shared.active.send_modify(|n| *n = n.saturating_sub(1));
        if let Some(job) = next {
            tokio::spawn(run::run(self.clone(), job));
        }
    }
}

impl std::fmt::Debug for SubagentManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubagentManager")
            .field("config", &self.shared.config)
            .field("policy", &self.shared.policy)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl SpawnBackend for SubagentManager {
    type Error = SubagentError;

    async fn spawn(
        &self,
        parent_call_id: &str,
        task: String,
        label: Option<String>,
    ) -> Result<String, SubagentError> {
        self.spawn_task(parent_call_id, task, label)
            .map(|receipt| receipt.describe())
    }
}
