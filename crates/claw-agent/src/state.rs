//! The agent's observable state, derived from its own event stream.

use super::compaction::Compaction;
use super::event::{AgentEvent, EventKind, apply_delta, finish_partial};
use super::history::History;
use super::tool_set::ToolSet;
use super::types::{AssistantMessage, Message, ThinkingLevel};
use std::sync::Arc;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// An immutable snapshot of the agent; a new one is swapped in on every change.
#[derive(Clone, Debug, Default)]
pub struct AgentState {
    /// The system prompt.
    pub system_prompt: String,
    /// Model id.
    pub model: String,
    /// Thinking level.
    pub thinking: ThinkingLevel,
    /// The tools.
    pub tools: ToolSet,
    /// The history (its resumed prefix shared with whoever shows it).
    pub messages: Arc<History>,
    /// Whether a run is active.
    pub is_streaming: bool,
    /// The assistant message being streamed, as far as it got.
    pub streaming_message: Option<AssistantMessage>,
    /// Ids of tool calls currently executing.
    pub pending_tool_calls: Vec<String>,
    /// The last run's error, shown until the next run starts.
    pub error: Option<String>,
    /// The compaction in force: the model sees its summary, then the messages from its
    /// first kept one on.
    pub compaction: Option<Compaction>,
    /// A turn began and its assistant message has not ended yet: the turn's model call
    /// is being made (the request log numbers it beyond the history's answers).
    pub turn_open: bool,
}

struct Subscriber {
    tx: mpsc::UnboundedSender<AgentEvent>,
    kinds: Option<Vec<EventKind>>,
}

/// The partial assistant message, kept outside the snapshot so a delta costs a push,
/// not a copy; `snapshot` folds it in when someone looks.
struct Streaming {
    message: AssistantMessage,
    raw_args: Vec<String>,
    changed: bool,
}

/// State, subscribers and the active run, behind one lock so every event updates the
/// state and reaches every subscriber before the next event does.
pub(super) struct Core {
    state: Arc<AgentState>,
    streaming: Option<Streaming>,
    subscribers: Vec<Subscriber>,
    /// Events dispatched so far: where a subscription or a snapshot stands in the
    /// event stream ([`Core::dispatched`]).
    dispatched: u64,
    run: Option<CancellationToken>,
    running: watch::Sender<bool>,
}

impl Core {
    pub(super) fn new(model: &str, running: watch::Sender<bool>) -> Self {
        Self {
            state: Arc::new(AgentState {
                model: model.to_owned(),
                ..AgentState::default()
            }),
            streaming: None,
            subscribers: Vec::new(),
            dispatched: 0,
            run: None,
            running,
        }
    }

    pub(super) fn snapshot(&mut self) -> Arc<AgentState> {
        if let Some(streaming) = self.streaming.as_mut().filter(|s| s.changed) {
            streaming.changed = false;
            let mut message = streaming.message.clone();
            finish_partial(&mut message, &streaming.raw_args);
            Arc::make_mut(&mut self.state).streaming_message = Some(message);
        }
        self.state.clone()
    }

    /// How many events were dispatched so far: a snapshot taken now folds in exactly
    /// these, and a subscription made now receives the ones after.
    pub(super) fn dispatched(&self) -> u64 {
        self.dispatched
    }

    /// The history (shared, not copied).
    pub(super) fn messages(&self) -> Arc<History> {
        self.state.messages.clone()
    }

    pub(super) fn update(&mut self, change: impl FnOnce(&mut AgentState)) {
        change(Arc::make_mut(&mut self.state));
    }

    pub(super) fn subscribe(
        &mut self,
        tx: mpsc::UnboundedSender<AgentEvent>,
        kinds: Option<Vec<EventKind>>,
    ) {
        self.subscribers.push(Subscriber { tx, kinds });
    }

    pub(super) fn begin_run(&mut self, cancel: CancellationToken) {
        self.run = Some(cancel);
        self.update(|s| {
            s.is_streaming = true;
            s.error = None;
        });
        self.running.send_replace(true);
    }

    pub(super) fn abort(&mut self) {
        if let Some(cancel) = &self.run {
            cancel.cancel();
        }
    }

    /// Folds an event into the state, then hands it to every interested subscriber.
    pub(super) fn dispatch(&mut self, event: AgentEvent) {
        self.observe(&event);
        self.dispatched += 1;
        let kind = event.kind();
        self.subscribers.retain(|s| {
            let wanted = s.kinds.as_ref().is_none_or(|k| k.contains(&kind));
            !wanted || s.tx.send(event.clone()).is_ok()
        });
    }

    fn observe(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::MessageStart {
                message: Message::Assistant(m),
            } => {
                self.streaming = Some(Streaming {
                    message: m.clone(),
                    raw_args: Vec::new(),
                    changed: true,
                });
            }
            AgentEvent::MessageUpdate { delta } => {
                if let Some(s) = self.streaming.as_mut() {
                    apply_delta(&mut s.message, &mut s.raw_args, delta);
                    s.changed = true;
                }
            }
            AgentEvent::MessageEnd { message } => {
                let failed = match message {
                    Message::Assistant(m) => {
                        self.streaming = None;
                        m.is_failed().then(|| m.error_message.clone()).flatten()
                    }
                    _ => None,
                };
                self.update(|s| {
                    Arc::make_mut(&mut s.messages).push(message.clone());
                    if matches!(message, Message::Assistant(_)) {
                        s.streaming_message = None;
                        s.turn_open = false;
                    }
                    if failed.is_some() {
                        s.error = failed;
                    }
                });
            }
            AgentEvent::TurnStart { .. } => self.update(|s| s.turn_open = true),
            AgentEvent::CompactionEnd(end) => {
                if let Some(compaction) = end.record() {
                    self.update(|s| s.compaction = Some(compaction));
                }
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                let id = tool_call_id.clone();
                self.update(|s| s.pending_tool_calls.push(id));
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                self.update(|s| s.pending_tool_calls.retain(|id| id != tool_call_id));
            }
            AgentEvent::AgentEnd { .. } => {
                self.streaming = None;
                self.run = None;
                self.update(|s| {
                    s.is_streaming = false;
                    s.streaming_message = None;
                    s.pending_tool_calls.clear();
                    s.turn_open = false;
                });
                // Idle before subscribers hear `agent_end`, so a prompt sent in reaction is accepted.
                self.running.send_replace(false);
            }
            _ => {}
        }
    }
}
