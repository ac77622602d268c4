//! Helpers for driving providers against the fake server.

use super::FakeLlm;
use claw_tui::agent::{AssistantMessage, MessageDelta, ThinkingLevel, ToolDefinition, UserMessage};
use claw_tui::llm::{
    AnthropicConfig, AnthropicProvider, LlmEvent, LlmMessage, LlmRequest, LlmStream, OpenAiConfig,
    OpenAiProvider, ResponsesConfig, ResponsesProvider, RetryPolicy, Secret,
};
use futures::StreamExt;
use serde_json::json;
use std::time::Duration;

/// A fast retry policy: 10 ms base backoff, server waits capped at 50 ms.
pub fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_retry_after: Duration::from_millis(50),
        ..RetryPolicy::with_base_delay(Duration::from_millis(10))
    }
}

/// Anthropic settings pointing at `server`, key `test-key` from `TEST_ANTHROPIC_KEY`.
pub fn anthropic_config(server: &FakeLlm) -> AnthropicConfig {
    let mut config = AnthropicConfig::with_key(Secret::new("test-key"), "TEST_ANTHROPIC_KEY");
    config.remote.base_url = server.url();
    config.remote.retry = fast_retry();
    config
}

pub fn anthropic(server: &FakeLlm) -> AnthropicProvider {
    AnthropicProvider::new(anthropic_config(server)).unwrap()
}

/// OpenAI-compatible settings pointing at `server`, no key.
pub fn openai_config(server: &FakeLlm) -> OpenAiConfig {
    let mut config = OpenAiConfig::compatible("TestServer", format!("{}/v1", server.url()));
    config.remote.retry = fast_retry();
    config
}

pub fn openai(server: &FakeLlm) -> OpenAiProvider {
    OpenAiProvider::new(openai_config(server)).unwrap()
}

/// Responses API settings pointing at `server`, key `sk-test` from `TEST_OPENAI_KEY`.
pub fn responses_config(server: &FakeLlm) -> ResponsesConfig {
    let mut config = ResponsesConfig::compatible("OpenAI", format!("{}/v1", server.url()));
    config.remote.api_key = Some(Secret::new("sk-test"));
    config.remote.api_key_source = "TEST_OPENAI_KEY".into();
    config.remote.retry = fast_retry();
    config
}

pub fn responses(server: &FakeLlm) -> ResponsesProvider {
    ResponsesProvider::new(responses_config(server)).unwrap()
}

/// A one-prompt request with an `echo` tool.
pub fn request(model: &str, prompt: &str) -> LlmRequest<'static> {
    LlmRequest {
        system_prompt: "You are terse.".into(),
        messages: vec![LlmMessage::from(UserMessage::new(prompt))],
        tools: vec![ToolDefinition {
            name: "echo".into(),
            description: "Echo text back".into(),
            parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        }],
        model: model.into(),
        thinking: ThinkingLevel::Off,
    }
}

/// Every event of `stream` (which must end within the deadline).
pub async fn collect(stream: LlmStream) -> Vec<LlmEvent> {
    tokio::time::timeout(crate::support::DEADLINE, stream.collect::<Vec<_>>())
        .await
        .expect("the provider stream did not end")
}

/// The final message and whether it came as `Done` (else `Error`); checks it is last.
pub fn outcome(events: &[LlmEvent]) -> (AssistantMessage, bool) {
    match events.last() {
        Some(LlmEvent::Done(m)) => (m.clone(), true),
        Some(LlmEvent::Error(m)) => (m.clone(), false),
        other => panic!("stream ended with {other:?}, not Done/Error"),
    }
}

/// The final message, which must be `Done`.
pub fn done(events: &[LlmEvent]) -> AssistantMessage {
    let (message, ok) = outcome(events);
    assert!(ok, "expected Done, got error: {:?}", message.error_message);
    message
}

/// The final message, which must be `Error`; returns it and its error text.
pub fn failed(events: &[LlmEvent]) -> (AssistantMessage, String) {
    let (message, ok) = outcome(events);
    assert!(!ok, "expected an error, got {message:?}");
    let text = message.error_message.clone().expect("error_message");
    (message, text)
}

/// `(attempt, max_attempts, delay_ms, reason)` of a `RetryStart`.
pub type RetryStart = (u32, u32, u64, String);

/// Every `RetryStart`, and the attempts of every `RetryEnd`.
pub fn retries(events: &[LlmEvent]) -> (Vec<RetryStart>, Vec<u32>) {
    let mut starts = Vec::new();
    let mut ends = Vec::new();
    for event in events {
        match event {
            LlmEvent::RetryStart {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => starts.push((*attempt, *max_attempts, *delay_ms, reason.clone())),
            LlmEvent::RetryEnd { attempt } => ends.push(*attempt),
            _ => {}
        }
    }
    (starts, ends)
}

/// The deltas among `events`, in order.
pub fn deltas(events: &[LlmEvent]) -> Vec<MessageDelta> {
    events
        .iter()
        .filter_map(|e| match e {
            LlmEvent::Delta(d) => Some(d.clone()),
            _ => None,
        })
        .collect()
}

/// The text deltas of the block at `index` that stream `texts`, in order.
pub fn text_deltas(index: usize, texts: &[&str]) -> Vec<MessageDelta> {
    texts
        .iter()
        .map(|t| MessageDelta::Text {
            index,
            text: (*t).to_owned(),
        })
        .collect()
}
