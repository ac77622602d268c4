//! The provider contract: what the agent loop sends to a model (`LlmRequest`) and what
//! streams back (`LlmEvent`), and the `Provider` trait every backend implements. The
//! backends themselves (wire formats, HTTP, the offline demo) live above the agent, in
//! `llm`, which implements this contract.

use super::event::MessageDelta;
use super::tool::ToolDefinition;
use super::types::{AssistantMessage, ThinkingLevel, ToolResultMessage, UserMessage};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use std::any::Any;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

mod held;
mod shared;
pub use held::Held;
pub use shared::SharedRequest;

/// Why a provider's model list could not be had; providers say what failed in their
/// own error, which reaches the log through this.
pub type ModelListError = Box<dyn std::error::Error + Send + Sync>;

/// Who a call is made for, as a wrapper above the agent attaches it (the request log's
/// tap names the agent a call belongs to). Opaque here: a provider that reports its
/// calls looks for the one kind it knows ([`CallOrigin::get`]).
#[derive(Clone)]
pub struct CallOrigin(Arc<dyn Any + Send + Sync>);

impl CallOrigin {
    /// An origin holding `origin`.
    pub fn new<T: Any + Send + Sync>(origin: T) -> Self {
        Self(Arc::new(origin))
    }

    /// The origin, when it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl std::fmt::Debug for CallOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CallOrigin").finish_non_exhaustive()
    }
}

/// A message in the form models accept: custom roles are already mapped or dropped.
///
/// It borrows the history's message where it can: a long session's request would
/// otherwise hold the whole conversation twice (the history and this copy) while its
/// body is written, a third copy. Only a message the conversion changes is owned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum LlmMessage<'a> {
    /// User input (prompts, steering, notifications).
    User(Held<'a, UserMessage>),
    /// An earlier model answer, replayed.
    Assistant(Held<'a, AssistantMessage>),
    /// A tool's result (its `details` are never sent).
    ToolResult(Held<'a, ToolResultMessage>),
}

impl LlmMessage<'_> {
    /// The message with nothing borrowed (borrowed parts are copied).
    pub fn into_owned(self) -> LlmMessage<'static> {
        match self {
            LlmMessage::User(m) => LlmMessage::User(Held::Owned(Box::new(m.into_owned()))),
            LlmMessage::Assistant(m) => {
                LlmMessage::Assistant(Held::Owned(Box::new(m.into_owned())))
            }
            LlmMessage::ToolResult(m) => {
                LlmMessage::ToolResult(Held::Owned(Box::new(m.into_owned())))
            }
        }
    }
}

impl From<UserMessage> for LlmMessage<'static> {
    fn from(message: UserMessage) -> Self {
        LlmMessage::User(Held::Owned(Box::new(message)))
    }
}

impl From<AssistantMessage> for LlmMessage<'static> {
    fn from(message: AssistantMessage) -> Self {
        LlmMessage::Assistant(Held::Owned(Box::new(message)))
    }
}

impl From<ToolResultMessage> for LlmMessage<'static> {
    fn from(message: ToolResultMessage) -> Self {
        LlmMessage::ToolResult(Held::Owned(Box::new(message)))
    }
}

/// One LLM call: the converted context, borrowing the history's messages for as long
/// as the provider takes to turn it into what it sends ([`Provider::stream`] returns
/// a stream that owns what it needs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LlmRequest<'a> {
    /// The system prompt.
    pub system_prompt: String,
    /// The conversation, well-formed (every tool call has a result).
    pub messages: Vec<LlmMessage<'a>>,
    /// Tools the model may call.
    pub tools: Vec<ToolDefinition>,
    /// Model id.
    pub model: String,
    /// Requested thinking effort.
    pub thinking: ThinkingLevel,
}

impl LlmRequest<'_> {
    /// The request with nothing borrowed, e.g. to keep it after the call.
    pub fn into_owned(self) -> LlmRequest<'static> {
        LlmRequest {
            system_prompt: self.system_prompt,
            messages: self
                .messages
                .into_iter()
                .map(LlmMessage::into_owned)
                .collect(),
            tools: self.tools,
            model: self.model,
            thinking: self.thinking,
        }
    }
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
    fn stream(&self, request: LlmRequest<'_>, cancel: CancellationToken) -> LlmStream;

    /// Starts one call made for `origin`; providers that report what they send look in
    /// it for the kind of origin they know. Others just stream.
    fn stream_for(
        &self,
        request: LlmRequest<'_>,
        cancel: CancellationToken,
        origin: &CallOrigin,
    ) -> LlmStream {
        let _ = origin;
        self.stream(request, cancel)
    }

    /// Starts one call on a request that owns the history it borrows, made for
    /// `origin` when a wrapper attached one. A provider that writes the body while it
    /// sends it (the HTTP one) keeps `request` until the call ends; the others take it
    /// as a plain request ([`Provider::stream_for`], [`Provider::stream`]).
    fn stream_shared(
        &self,
        request: Arc<SharedRequest>,
        cancel: CancellationToken,
        origin: Option<&CallOrigin>,
    ) -> LlmStream {
        SharedRequest::consume(request, |request| match origin {
            Some(origin) => self.stream_for(request, cancel, origin),
            None => self.stream(request, cancel),
        })
    }

    /// The model ids the server offers (for `/model` completion); empty when the
    /// provider has no such list. Errors say what failed, for the log.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelListError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}
