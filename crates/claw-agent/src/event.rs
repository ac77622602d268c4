//! The typed event stream every consumer (TUI, JSON modes, session file) reads.

use super::compaction::{CompactionEnd, CompactionReason, ContextUsage};
use super::tool::ToolResult;
use super::types::{AssistantMessage, Block, Message};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// One streamed change to the assistant message being produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MessageDelta {
    /// Text appended to the text block at `index` (created if new).
    Text {
        /// Content block index.
        index: usize,
        /// Appended text.
        text: String,
    },
    /// Reasoning appended to the thinking block at `index` (created if new).
    Thinking {
        /// Content block index.
        index: usize,
        /// Appended reasoning.
        text: String,
    },
    /// A tool call block opens at `index`.
    ToolCallStart {
        /// Content block index.
        index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// A fragment of the tool call's JSON arguments.
    ToolCallArgs {
        /// Content block index.
        index: usize,
        /// Raw JSON fragment.
        json: String,
    },
}

/// Everything the agent tells its subscribers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A run began.
    AgentStart,
    /// A run ended and the agent is idle again.
    AgentEnd {
        /// Every message the run added, in order.
        messages: Vec<Message>,
    },
    /// A turn (one LLM call plus its tool calls) began.
    TurnStart {
        /// 1-based turn number within the run.
        turn: u32,
    },
    /// A turn ended.
    TurnEnd {
        /// The assistant message of the turn.
        message: Message,
        /// The results of its tool calls, in call order.
        tool_results: Vec<Message>,
        /// How full the context window is for the next request.
        #[serde(default)]
        context_usage: ContextUsage,
    },
    /// A message entered the context (assistant messages start empty).
    MessageStart {
        /// The message (for the assistant: empty, deltas follow).
        message: Message,
    },
    /// A delta of the streaming assistant message.
    MessageUpdate {
        /// The change.
        delta: MessageDelta,
    },
    /// A message is complete.
    MessageEnd {
        /// The final message.
        message: Message,
    },
    /// A tool call begins.
    ToolExecutionStart {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// Arguments it runs with.
        args: Value,
    },
    /// A tool published partial output.
    ToolExecutionUpdate {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// The partial output.
        partial: Value,
    },
    /// A tool call finished.
    ToolExecutionEnd {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// The result the model receives (`content`) and the details.
        result: ToolResult,
        /// Whether it failed; always serialised.
        is_error: bool,
    },
    /// A failed LLM request will be retried after a delay (nothing was streamed yet).
    AutoRetryStart {
        /// 1-based number of the retry.
        attempt: u32,
        /// Retries allowed in all.
        max_attempts: u32,
        /// Wait before the retry, in milliseconds.
        delay_ms: u64,
        /// Why the previous attempt failed.
        reason: String,
    },
    /// The wait is over and the retry was sent.
    AutoRetryEnd {
        /// The retry's number.
        attempt: u32,
    },
    /// A setting changed (`model`, `thinking`, `steering_mode`, `follow_up_mode`,
    /// `tool_execution`), so UIs and the session file can follow.
    SettingUpdate {
        /// Which setting.
        key: String,
        /// Its new value.
        value: Value,
    },
    /// The history was cut back to its first `kept` messages (a rewind), so the
    /// session file, recording in event order, records the cut after every message
    /// before it.
    HistoryCut {
        /// How many messages stay.
        kept: usize,
    },
    /// The steering or follow-up queue changed.
    QueueUpdate {
        /// Pending steering messages, oldest first.
        steering: Vec<String>,
        /// Pending follow-up messages, oldest first.
        follow_up: Vec<String>,
    },
    /// The history is being compacted (a summary request runs; Esc or abort cancels).
    CompactionStart {
        /// What started it.
        reason: CompactionReason,
        /// The request's estimated size now, in tokens.
        tokens_before: u64,
    },
    /// The compaction ended: done, cancelled, failed or with nothing to do.
    CompactionEnd(CompactionEnd),
}

/// The kind of an event, for filtered subscriptions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// `agent_start`
    AgentStart,
    /// `agent_end`
    AgentEnd,
    /// `turn_start`
    TurnStart,
    /// `turn_end`
    TurnEnd,
    /// `message_start`
    MessageStart,
    /// `message_update`
    MessageUpdate,
    /// `message_end`
    MessageEnd,
    /// `tool_execution_start`
    ToolExecutionStart,
    /// `tool_execution_update`
    ToolExecutionUpdate,
    /// `tool_execution_end`
    ToolExecutionEnd,
    /// `auto_retry_start`
    AutoRetryStart,
    /// `auto_retry_end`
    AutoRetryEnd,
    /// `setting_update`
    SettingUpdate,
    /// `history_cut`
    HistoryCut,
    /// `queue_update`
    QueueUpdate,
    /// `compaction_start`
    CompactionStart,
    /// `compaction_end`
    CompactionEnd,
}

impl AgentEvent {
    /// This event's kind.
    pub fn kind(&self) -> EventKind {
        match self {
            AgentEvent::AgentStart => EventKind::AgentStart,
            AgentEvent::AgentEnd { .. } => EventKind::AgentEnd,
            AgentEvent::TurnStart { .. } => EventKind::TurnStart,
            AgentEvent::TurnEnd { .. } => EventKind::TurnEnd,
            AgentEvent::MessageStart { .. } => EventKind::MessageStart,
            AgentEvent::MessageUpdate { .. } => EventKind::MessageUpdate,
            AgentEvent::MessageEnd { .. } => EventKind::MessageEnd,
            AgentEvent::ToolExecutionStart { .. } => EventKind::ToolExecutionStart,
            AgentEvent::ToolExecutionUpdate { .. } => EventKind::ToolExecutionUpdate,
            AgentEvent::ToolExecutionEnd { .. } => EventKind::ToolExecutionEnd,
            AgentEvent::AutoRetryStart { .. } => EventKind::AutoRetryStart,
            AgentEvent::AutoRetryEnd { .. } => EventKind::AutoRetryEnd,
            AgentEvent::SettingUpdate { .. } => EventKind::SettingUpdate,
            AgentEvent::HistoryCut { .. } => EventKind::HistoryCut,
            AgentEvent::QueueUpdate { .. } => EventKind::QueueUpdate,
            AgentEvent::CompactionStart { .. } => EventKind::CompactionStart,
            AgentEvent::CompactionEnd(_) => EventKind::CompactionEnd,
        }
    }
}

/// Where the loop sends its events; cheap to clone, callable from any task.
#[derive(Clone)]
pub struct EventSink(Arc<dyn Fn(AgentEvent) + Send + Sync>);

impl EventSink {
    /// A sink calling `f` for every event.
    pub fn new(f: impl Fn(AgentEvent) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Delivers one event.
    pub fn emit(&self, event: AgentEvent) {
        (self.0)(event);
    }
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventSink")
    }
}

/// Applies a streamed delta to a partial assistant message.
///
/// Tool-call argument fragments are collected in `raw_args` (one string per block index)
/// because partial JSON is not a value yet; `finish_partial` parses them.
pub fn apply_delta(
    message: &mut AssistantMessage,
    raw_args: &mut Vec<String>,
    delta: &MessageDelta,
) {
    let index = match delta {
        MessageDelta::Text { index, .. }
        | MessageDelta::Thinking { index, .. }
        | MessageDelta::ToolCallStart { index, .. }
        | MessageDelta::ToolCallArgs { index, .. } => *index,
    };
    // Providers number blocks densely; a gap would mean a lost block, so new blocks append.
    let slot = index.min(message.content.len());
    match delta {
        MessageDelta::Text { text, .. } => match message.content.get_mut(slot) {
            Some(Block::Text { text: t }) => t.push_str(text),
            _ => message.content.push(Block::Text { text: text.clone() }),
        },
        MessageDelta::Thinking { text, .. } => match message.content.get_mut(slot) {
            Some(Block::Thinking { thinking, .. }) => thinking.push_str(text),
            _ => message.content.push(Block::Thinking {
                thinking: text.clone(),
                signature: None,
            }),
        },
        MessageDelta::ToolCallStart { id, name, .. } => message.content.push(Block::ToolCall {
            id: id.clone(),
            name: name.clone(),
            args: Value::Null,
        }),
        MessageDelta::ToolCallArgs { json, .. } => {
            if raw_args.len() <= slot {
                raw_args.resize(slot + 1, String::new());
            }
            raw_args[slot].push_str(json);
        }
    }
}

/// Parses the collected argument fragments into the tool-call blocks (best effort).
pub fn finish_partial(message: &mut AssistantMessage, raw_args: &[String]) {
    for (i, block) in message.content.iter_mut().enumerate() {
        if let (Block::ToolCall { args, .. }, Some(raw)) = (block, raw_args.get(i))
            && args.is_null()
        {
            *args = serde_json::from_str(raw).unwrap_or(Value::Null);
        }
    }
}
