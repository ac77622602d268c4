//! Messages, content blocks, stop reasons and usage: the data every layer shares.

use super::image::ImageData;
pub use super::signature::ThinkingSignature;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, the timestamp unit of every message.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One block of an assistant message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Visible answer text.
    Text {
        /// The text itself.
        text: String,
    },
    /// Model reasoning; the provider's state (when it gives one) must be replayed.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// What the provider gave with the block to have it back on replay (a
        /// signature, redacted data, an encrypted reasoning item).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<ThinkingSignature>,
    },
    /// A request to run a tool.
    ToolCall {
        /// Provider-assigned id that the tool result refers back to.
        id: String,
        /// Name of the tool to run.
        name: String,
        /// Arguments as parsed JSON (`null` while still streaming or when unparsable).
        args: Value,
    },
}

/// Why the model stopped producing output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    #[default]
    Stop,
    /// The output token limit was reached.
    Length,
    /// The model wants tools to run.
    ToolUse,
    /// The request or stream failed; see `error_message`.
    Error,
    /// The user aborted the run.
    Aborted,
}

/// What kind of failure an errored assistant message records, when the provider could
/// tell; the loop acts on it (a context overflow is compacted and retried once).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request did not fit the model's context window.
    ContextOverflow,
    /// The model refused to answer (a provider's `refusal` stop reason).
    Refusal,
}

/// Token counts and cost of one LLM call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Input (prompt) tokens billed at the normal rate.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// Of the output tokens, those the model spent reasoning (0 when not reported).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning: u64,
    /// Cost in US dollars, when the model's prices are known.
    pub cost: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Adds another call's usage to this total.
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.reasoning += other.reasoning;
        self.cost += other.cost;
    }

    /// All tokens counted by this usage.
    pub fn total_tokens(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

/// A message typed by the user (prompt, steering or follow-up).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// The text sent to the model.
    pub content: String,
    /// Images attached to it (`@path` in the composer, `--image`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageData>,
    /// When it was created.
    pub timestamp: u64,
}

impl UserMessage {
    /// A user message stamped now.
    pub fn new(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            images: Vec::new(),
            timestamp: now_ms(),
        }
    }

    /// The same message with `images` attached.
    pub fn with_images(mut self, images: Vec<ImageData>) -> Self {
        self.images = images;
        self
    }
}

/// A message produced by the model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// Text, thinking and tool-call blocks in stream order.
    pub content: Vec<Block>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// Tokens and cost of the call that produced it.
    pub usage: Usage,
    /// What went wrong, when `stop_reason` is `error` or `aborted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// The kind of failure, when the provider could tell (e.g. a context overflow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// The model that answered.
    pub model: String,
    /// When the message started.
    pub timestamp: u64,
}

impl AssistantMessage {
    /// An empty message for `model`, stamped now, ready to receive deltas.
    pub fn empty(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            timestamp: now_ms(),
            ..Self::default()
        }
    }

    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tool calls as `(id, name, args)`, in order.
    pub fn tool_calls(&self) -> Vec<ToolCall> {
        self.content
            .iter()
            .filter_map(|b| match b {
                Block::ToolCall { id, name, args } => Some(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    args: args.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// True when the message failed or was aborted and must not be replayed.
    pub fn is_failed(&self) -> bool {
        matches!(self.stop_reason, StopReason::Error | StopReason::Aborted)
    }

    /// True when the request failed because it did not fit the context window.
    pub fn is_context_overflow(&self) -> bool {
        self.stop_reason == StopReason::Error && self.error_kind == Some(ErrorKind::ContextOverflow)
    }
}

/// A tool call extracted from an assistant message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as sent by the model.
    pub args: Value,
}

/// The outcome of one tool call, as it enters the context.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    /// The call this answers.
    pub tool_call_id: String,
    /// The tool that ran.
    pub tool_name: String,
    /// Exactly what the model receives.
    pub content: String,
    /// Images the model receives with the text (`read_file` on an image).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageData>,
    /// Fuller data for the UI and logs; never sent to the model.
    #[serde(default)]
    pub details: Value,
    /// Whether the call failed; always serialised.
    pub is_error: bool,
    /// When the result was produced.
    pub timestamp: u64,
}

/// Where a notification came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NotificationMessage {
    /// The producer, e.g. `subagent` or `cron`.
    pub source: String,
    /// The text handed to the model as a user-side message.
    pub content: String,
    /// When it was created.
    pub timestamp: u64,
}

/// How loud a notice is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    /// Informational.
    Info,
    /// Something the user should act on.
    Warning,
    /// Something failed.
    Error,
}

/// A message to the user only (e.g. "max turns reached"); never sent to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoticeMessage {
    /// Severity.
    pub level: NoticeLevel,
    /// What the user reads.
    pub text: String,
    /// When it was created.
    pub timestamp: u64,
}

/// Every message the agent keeps in its history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// From the user.
    User(UserMessage),
    /// From the model.
    Assistant(AssistantMessage),
    /// A tool's result.
    ToolResult(ToolResultMessage),
    /// A background result (subagent, cron) delivered to the model as user input.
    Notification(NotificationMessage),
    /// Shown to the user, dropped before the model sees the context.
    Notice(NoticeMessage),
}

impl Message {
    /// A user message stamped now.
    pub fn user(content: impl Into<String>) -> Self {
        Message::User(UserMessage::new(content))
    }

    /// A notice stamped now.
    pub fn notice(level: NoticeLevel, text: impl Into<String>) -> Self {
        Message::Notice(NoticeMessage {
            level,
            text: text.into(),
            timestamp: now_ms(),
        })
    }

    /// The assistant message inside, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Message::Assistant(m) => Some(m),
            _ => None,
        }
    }

    /// Short text used to show a queued message (queue_update) or a preview.
    pub fn preview_text(&self) -> String {
        match self {
            Message::User(m) => m.content.clone(),
            Message::Assistant(m) => m.text(),
            Message::ToolResult(m) => m.content.clone(),
            Message::Notification(m) => m.content.clone(),
            Message::Notice(m) => m.text.clone(),
        }
    }
}

/// How much the model should think before answering.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingLevel {
    /// No extended thinking.
    #[default]
    Off,
    /// The smallest budget.
    Minimal,
    /// A small budget.
    Low,
    /// A medium budget.
    Medium,
    /// A large budget.
    High,
    /// The largest budget the model allows.
    Xhigh,
}
