//! The provider boundary: what the agent loop sends to a model and what streams back.

use crate::agent::event::MessageDelta;
use crate::agent::tool::ToolDefinition;
use crate::agent::types::{AssistantMessage, ThinkingLevel, ToolResultMessage, UserMessage};
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// A message in the form models accept: custom roles are already mapped or dropped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum LlmMessage {
    /// User input (prompts, steering, notifications).
    User(UserMessage),
    /// An earlier model answer, replayed.
    Assistant(AssistantMessage),
    /// A tool's result.
    ToolResult(ToolResultMessage),
}

/// One LLM call: the converted context.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LlmRequest {
    /// The system prompt.
    pub system_prompt: String,
    /// The conversation, well-formed (every tool call has a result).
    pub messages: Vec<LlmMessage>,
    /// Tools the model may call.
    pub tools: Vec<ToolDefinition>,
    /// Model id.
    pub model: String,
    /// Requested thinking effort.
    pub thinking: ThinkingLevel,
}

/// What a provider streams back for one call.
#[derive(Clone, Debug, PartialEq)]
pub enum LlmEvent {
    /// The response started.
    Start,
    /// A change to the message being produced.
    Delta(MessageDelta),
    /// The final message (stop reason `stop`, `length` or `tool_use`).
    Done(AssistantMessage),
    /// The call failed or was aborted; the partial message carries `error_message`.
    Error(AssistantMessage),
}

/// A stream of provider events; it ends after `Done` or `Error`.
pub type LlmStream = BoxStream<'static, LlmEvent>;

/// A model backend (Anthropic, OpenAI-compatible, the offline demo, a test script).
///
/// Providers never panic and never fail with a bare error once called: every failure
/// arrives as `LlmEvent::Error` with `stop_reason` `error` or `aborted`.
pub trait Provider: Send + Sync {
    /// Starts one call; `cancel` stops the stream.
    fn stream(&self, request: LlmRequest, cancel: CancellationToken) -> LlmStream;
}
