//! A gateway that refuses the prompt-cache key (LiteLLM answers 400 to
//! `prompt_cache_key` for model groups backed by Anthropic): the agent's call is sent
//! again at once without it, the retry line says why, and the provider leaves the key
//! out of every later call.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::responses::text_reply;
use crate::support::fake_llm::{FakeLlm, Scripted};
use claw_tui::agent::provider::SharedRequest;
use claw_tui::llm::{LlmEvent, Provider, ResponsesProvider};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_refused_cache_key_is_dropped_said_once_and_not_sent_again() {
    let refusal = json!({"error": {
        "message": "litellm.UnsupportedParamsError: anthropic does not support parameters: ['prompt_cache_key']",
        "type": "invalid_request_error", "code": "400"}});
    let server = FakeLlm::start(vec![
        Scripted::json(400, refusal),
        Scripted::sse(text_reply("gpt-x", &["first"])),
        Scripted::sse(text_reply("gpt-x", &["second"])),
    ])
    .await;
    let mut config = responses_config(&server);
    config.remote.name = "litellm (gateway)".into();
    config.remote.cache = true;
    let provider = ResponsesProvider::new(config).unwrap();
    let call = || {
        let request = Arc::new(SharedRequest::owned(request("gpt-x", "hello")));
        provider.stream_shared(request, CancellationToken::new(), None)
    };

    let events = collect(call()).await;
    assert_eq!(done(&events).text(), "first");
    let said: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            LlmEvent::RetryStart { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(said.len(), 1, "{events:?}");
    assert!(
        said[0].contains("litellm (gateway) does not take prompt_cache_key"),
        "{said:?}"
    );

    let events = collect(call()).await;
    assert_eq!(done(&events).text(), "second");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, LlmEvent::RetryStart { .. })),
        "said once: {events:?}"
    );
    let sent: Vec<bool> = server
        .requests()
        .iter()
        .map(|r| r.body.get("prompt_cache_key").is_some())
        .collect();
    assert_eq!(
        sent,
        [true, false, false],
        "the key left out from the refusal on"
    );
}

#[tokio::test]
async fn another_400_is_not_taken_for_a_refused_cache_key() {
    let server = FakeLlm::start(vec![Scripted::json(
        400,
        json!({"error": {"message": "model gpt-x does not exist", "type": "invalid_request_error"}}),
    )])
    .await;
    let mut config = responses_config(&server);
    config.remote.cache = true;
    let provider = ResponsesProvider::new(config).unwrap();
    let request = Arc::new(SharedRequest::owned(request("gpt-x", "hello")));
    let events = collect(provider.stream_shared(request, CancellationToken::new(), None)).await;
    let (_, error) = failed(&events);
    assert!(error.contains("does not exist"), "{error}");
    assert_eq!(server.requests().len(), 1);
}
