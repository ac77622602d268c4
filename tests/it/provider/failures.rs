#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Failures over real HTTP: cut streams keep their partial, a silent server hits the idle
//! timeout (a real 200 ms one), abort closes the connection, and HTTP errors explain
//! themselves (which key, which model, what the server said).

use crate::support::fake_llm::anthropic::*;
use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::{BodyEnd, FakeLlm, Scripted, Step, openai as oai};
use claw_tui::agent::{MessageDelta, StopReason};
use claw_tui::llm::{AnthropicProvider, LlmEvent, OpenAiProvider, Provider, Secret};
use futures::StreamExt;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// message_start and one text delta, without the end of the block or message.
fn opening(text: &str) -> Vec<String> {
    let mut script = vec![message_start("claude-sonnet-4-5", 10, 0, 0)];
    script.extend(text_block(0, &[text]).into_iter().take(2));
    script
}

#[tokio::test]
async fn a_connection_cut_mid_message_keeps_the_partial_with_an_error() {
    let server = FakeLlm::start(vec![
        Scripted::sse(opening("The answer is")).then(Step::Fail),
    ])
    .await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    let (message, error) = failed(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.text(), "The answer is");
    assert_eq!(message.usage.input, 10, "usage so far is kept");
    assert!(
        error.contains("cut off") && error.contains("partial reply is kept"),
        "{error}"
    );
    assert!(
        retries(&events).0.is_empty(),
        "content arrived: no silent retry"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_body_that_ends_before_message_stop_is_a_cut_too() {
    let server = FakeLlm::start(vec![Scripted::sse(opening("Half"))]).await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    let (message, error) = failed(&events);
    assert_eq!(message.text(), "Half");
    assert!(
        error.contains("cut off") && error.contains("closed the stream early"),
        "{error}"
    );
}

#[tokio::test]
async fn an_openai_tool_call_cut_mid_arguments_keeps_what_arrived() {
    let server = FakeLlm::start(vec![
        Scripted::sse([oai::tool(Some(0), Some("call_1"), Some("echo"), r#"{"te"#)])
            .then(Step::Fail),
    ])
    .await;
    let events =
        collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    let (message, error) = failed(&events);
    let calls = message.tool_calls();
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_1", "echo")
    );
    assert!(calls[0].args.is_null(), "unparsable partial arguments");
    assert!(
        error.contains("TestServer") && error.contains("cut off"),
        "{error}"
    );
}

#[tokio::test]
async fn a_silent_server_hits_the_real_idle_timeout() {
    let server = FakeLlm::start(vec![Scripted::sse(opening("waiting")).then(Step::Hang)]).await;
    let mut config = anthropic_config(&server);
    config.remote.idle_timeout = Duration::from_millis(200);
    let provider = AnthropicProvider::new(config).unwrap();
    let started = Instant::now();
    let events =
        collect(provider.stream(request("claude-sonnet-4-5", "x"), CancellationToken::new())).await;
    let elapsed = started.elapsed();
    let (message, error) = failed(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.text(), "waiting");
    assert!(
        error.contains("200 ms")
            && error.contains("idle timeout")
            && error.contains("raise [agent] idle_timeout_secs"),
        "{error}"
    );
    assert!(elapsed >= Duration::from_millis(200), "{elapsed:?}");
    assert_eq!(server.next_body_end().await, BodyEnd::Dropped);
}

#[tokio::test]
async fn abort_while_streaming_closes_the_connection() {
    let server = FakeLlm::start(vec![Scripted::sse(opening("streaming")).then(Step::Hang)]).await;
    let cancel = CancellationToken::new();
    let mut stream = anthropic(&server).stream(request("claude-sonnet-4-5", "x"), cancel.clone());
    loop {
        let event = tokio::time::timeout(crate::support::DEADLINE, stream.next())
            .await
            .unwrap()
            .unwrap();
        if matches!(event, LlmEvent::Delta(MessageDelta::Text { .. })) {
            break;
        }
    }
    cancel.cancel();
    let rest = collect(stream).await;
    let (message, error) = failed(&rest);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(error, claw_tui::agent::ABORTED_MESSAGE);
    assert_eq!(message.text(), "streaming");
    // The server's response body was dropped: the client closed the connection.
    assert_eq!(server.next_body_end().await, BodyEnd::Dropped);
}

#[tokio::test]
async fn a_complete_response_is_reported_as_completed_by_the_server() {
    // The counterpart of the abort test: a body read to its end is not `Dropped`.
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["done"]))]).await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    done(&events);
    assert_eq!(server.next_body_end().await, BodyEnd::Completed);
}

#[tokio::test]
async fn a_rejected_key_names_where_it_came_from() {
    let server = FakeLlm::start(vec![Scripted::json(
        401,
        json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
    )])
    .await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    let (_, error) = failed(&events);
    assert!(
        error.contains("rejected the API key")
            && error.contains("HTTP 401")
            && error.contains("invalid x-api-key")
            && error.contains("TEST_ANTHROPIC_KEY"),
        "{error}"
    );
    assert!(
        !error.contains("test-key"),
        "the key itself never appears: {error}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_missing_key_on_a_keyless_setup_says_where_to_put_one() {
    let server = FakeLlm::start(vec![Scripted::json(
        401,
        json!({"error": {"message": "Missing bearer token", "type": "invalid_request_error"}}),
    )])
    .await;
    let mut config = openai_config(&server);
    config.remote.api_key_source = "config file ~/.config/claw-tui/config.toml".into();
    let provider = OpenAiProvider::new(config).unwrap();
    let (_, error) =
        failed(&collect(provider.stream(request("gpt-4o", "x"), CancellationToken::new())).await);
    assert!(
        error.contains("none was sent")
            && error.contains("config file ~/.config/claw-tui/config.toml"),
        "{error}"
    );
}

#[tokio::test]
async fn a_forbidden_openai_key_names_its_source() {
    let server = FakeLlm::start(vec![Scripted::json(
        403,
        json!({"error": {"message": "Project does not have access to model gpt-5", "type": "invalid_request_error"}}),
    )])
    .await;
    let mut config = openai_config(&server);
    config.remote.api_key = Some(Secret::new("sk-test-secret"));
    config.remote.api_key_source = "OPENAI_API_KEY".into();
    let provider = OpenAiProvider::new(config).unwrap();
    let (_, error) =
        failed(&collect(provider.stream(request("gpt-5", "x"), CancellationToken::new())).await);
    assert!(
        error.contains("HTTP 403")
            && error.contains("OPENAI_API_KEY")
            && error.contains("does not have access")
            && error.contains("\"gpt-5\""),
        "{error}"
    );
    assert!(!error.contains("sk-test-secret"), "{error}");
}

#[tokio::test]
async fn bad_requests_show_the_server_message_and_the_model() {
    let server = FakeLlm::start(vec![Scripted::json(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error",
               "message": "prompt is too long: 250000 tokens > 200000 maximum"}}),
    )])
    .await;
    let (_, error) = failed(
        &collect(
            anthropic(&server).stream(request("claude-opus-4-1", "x"), CancellationToken::new()),
        )
        .await,
    );
    assert!(
        error.contains("HTTP 400")
            && error.contains("\"claude-opus-4-1\"")
            && error.contains("prompt is too long: 250000 tokens > 200000 maximum"),
        "{error}"
    );
}

#[tokio::test]
async fn not_found_shows_the_model_the_url_and_the_server_message() {
    let server = FakeLlm::start(vec![Scripted::json(
        404,
        json!({"error": "model \"llama9\" not found, try pulling it first"}),
    )])
    .await;
    let (_, error) = failed(
        &collect(openai(&server).stream(request("llama9", "x"), CancellationToken::new())).await,
    );
    assert!(
        error.contains("HTTP 404")
            && error.contains("\"llama9\"")
            && error.contains("try pulling it first")
            && error.contains(&format!("{}/v1/chat/completions", server.url()))
            && error.contains("Check the model name"),
        "{error}"
    );
}

#[tokio::test]
async fn a_json_answer_to_a_streaming_request_is_explained_not_retried() {
    let server = FakeLlm::start(vec![Scripted::json(
        200,
        json!({"id": "chatcmpl-1", "object": "chat.completion",
               "error": {"message": "streaming is disabled on this deployment"}}),
    )])
    .await;
    let events =
        collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    let (_, error) = failed(&events);
    assert!(
        error.contains("instead of an event stream")
            && error.contains("application/json")
            && error.contains("streaming is disabled on this deployment"),
        "{error}"
    );
    assert!(retries(&events).0.is_empty());
    assert_eq!(server.requests().len(), 1);
}
