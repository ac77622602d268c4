//! The provider boundary: what the agent loop sends to a model and what streams back.

mod accumulate;
pub mod anthropic;
mod body;
pub mod demo;
mod error;
pub mod images;
mod messages;
mod models;
pub mod openai;
mod overflow;
pub mod pricing;
pub mod remote;
pub mod responses;
pub mod retry;
pub mod secret;
pub mod sse;
pub mod tap;
mod transport;

pub use anthropic::AnthropicConfig;
pub use error::{KeyError, ModelListError, SetupError};
pub use images::accepts_images;
pub use openai::{MaxTokensField, OpenAiCompat, OpenAiConfig, SystemRole};
pub use pricing::ModelPrices;
pub use remote::{
    AnthropicProvider, OpenAiProvider, RemoteProvider, RemoteSettings, ResponsesProvider,
    WireConfig,
};
pub use responses::ResponsesConfig;
pub use retry::RetryPolicy;
pub use secret::Secret;
pub use tap::{CallSink, FinishedCall, RequestOrigin, RequestTap, SentCall};

use crate::agent::event::MessageDelta;
use crate::agent::tool::ToolDefinition;
use crate::agent::types::{AssistantMessage, ThinkingLevel, ToolResultMessage, UserMessage};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Default longest silence from a server before a call is given up.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Default longest time one call may take, retries included (keep-alives do not extend
/// it).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Default longest TCP/TLS connect.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

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
    /// A failed attempt will be retried after `delay_ms` (nothing was streamed yet).
    RetryStart {
        /// 1-based number of the retry about to happen.
        attempt: u32,
        /// Retries allowed in all.
        max_attempts: u32,
        /// Wait before the retry, in milliseconds.
        delay_ms: u64,
        /// Why the previous attempt failed.
        reason: String,
    },
    /// The retry announced by `RetryStart` has been sent.
    RetryEnd {
        /// The retry's number.
        attempt: u32,
    },
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

    /// Starts one call made for `origin`; HTTP providers report what they send to its
    /// tap. Providers that send nothing over HTTP just stream.
    fn stream_for(
        &self,
        request: LlmRequest,
        cancel: CancellationToken,
        origin: &RequestOrigin,
    ) -> LlmStream {
        let _ = origin;
        self.stream(request, cancel)
    }

    /// The model ids the server offers (for `/model` completion); empty when the
    /// provider has no such list. Errors say what failed, for the log.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelListError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}
