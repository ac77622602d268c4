#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Failures that say what to do, over real HTTP against the fake server: a conversation
//! too long for the model, `https://` to a plain-HTTP server, an HTML page without a
//! content type, a stream of keep-alives that never ends (the whole-call deadline), and
//! events too large to accept; plus an abort in the middle of one huge event.

use crate::support::fake_llm::anthropic as ant;
use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::openai::{chunk, text_reply};
use crate::support::fake_llm::{BodyEnd, FakeLlm, Scripted, Step};
use bytes::Bytes;
use claw_tui::agent::StopReason;
use claw_tui::llm::{AnthropicProvider, LlmEvent, OpenAiConfig, OpenAiProvider, Provider};
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_conversation_too_long_for_the_model_suggests_compact_or_new() {
    let openai_says = Scripted::json(
        400,
        json!({"error": {"message": "This model's maximum context length is 128000 tokens. \
               However, your messages resulted in 131072 tokens.",
               "type": "invalid_request_error", "code": "context_length_exceeded"}}),
    );
    let anthropic_says = Scripted::json(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error",
               "message": "prompt is too long: 215000 tokens > 200000 maximum"}}),
    );
    let server = FakeLlm::start(vec![openai_says, anthropic_says]).await;
    let from_openai =
        collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    let from_anthropic = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    for (events, said) in [
        (from_openai, "maximum context length is 128000"),
        (from_anthropic, "prompt is too long"),
    ] {
        let (_, error) = failed(&events);
        for part in [
            "no longer fits the context window",
            said,
            "/compact",
            "/new",
        ] {
            assert!(error.contains(part), "{part:?} in {error}");
        }
        assert!(retries(&events).0.is_empty());
    }
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn https_to_a_plain_http_server_suggests_http() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["never read"]))]).await;
    let https = format!("https://{}/v1", server.addr);
    let config = OpenAiConfig {
        retry: fast_retry(),
        ..OpenAiConfig::compatible("Local", https.clone())
    };
    let events = collect(
        OpenAiProvider::new(config)
            .unwrap()
            .stream(request("llama3", "x"), CancellationToken::new()),
    )
    .await;
    let (_, error) = failed(&events);
    assert!(
        error.contains(&format!("TLS (https) to {https}/chat/completions"))
            && error.contains("write http:// instead of https:// in the base URL"),
        "{error}"
    );
    // The same handshake would fail the same way: not retried.
    assert!(retries(&events).0.is_empty(), "{events:?}");
}

#[tokio::test]
async fn an_html_page_without_a_content_type_is_called_html() {
    let page = "<!DOCTYPE html>\n<html><head><title>Sign in to the proxy</title></head>\
                <body>Please log in.</body></html>\n";
    let portal = Scripted {
        status: 200,
        headers: vec![],
        steps: vec![Step::Chunk(Bytes::from(page))],
    };
    let server = FakeLlm::start(vec![portal]).await;
    let events =
        collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    let (_, error) = failed(&events);
    assert!(
        error.contains("answered with HTML")
            && error.contains("a page titled \"Sign in to the proxy\"")
            && error.contains("base URL")
            && !error.contains("closed"),
        "{error}"
    );
    assert!(retries(&events).0.is_empty());
    assert_eq!(server.requests().len(), 1);
}

/// Keep-alive comments reset the idle timeout; the whole-call deadline still ends the
/// call, and says which setting to raise.
#[tokio::test]
async fn a_stream_of_keep_alives_only_hits_the_request_timeout() {
    let keep_alive = Step::Every(Duration::from_millis(20), Bytes::from_static(b": ping\n\n"));
    let server = FakeLlm::start(vec![Scripted::sse([": hello\n\n"]).then(keep_alive)]).await;
    let mut config = openai_config(&server);
    config.idle_timeout = Duration::from_secs(30);
    config.request_timeout = Duration::from_millis(400);
    let events = collect(
        OpenAiProvider::new(config)
            .unwrap()
            .stream(request("gpt-4o", "x"), CancellationToken::new()),
    )
    .await;
    let (message, error) = failed(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    for part in [
        "within 400 ms",
        "only keep-alives",
        "raise [agent] request_timeout_secs",
    ] {
        assert!(error.contains(part), "{part:?} in {error}");
    }
    assert_eq!(server.next_body_end().await, BodyEnd::Dropped);
}

#[tokio::test]
async fn an_answer_cut_by_the_request_timeout_keeps_its_partial() {
    let mut opening = vec![ant::message_start("claude-sonnet-4-5", 10, 0, 0)];
    opening.extend(ant::text_block(0, &["half an answer"]).into_iter().take(2));
    let keep_alive = Step::Every(
        Duration::from_millis(20),
        Bytes::from_static(b"event: ping\ndata: {\"type\": \"ping\"}\n\n"),
    );
    let server = FakeLlm::start(vec![Scripted::sse(opening).then(keep_alive)]).await;
    let mut config = anthropic_config(&server);
    config.request_timeout = Duration::from_millis(300);
    let events = collect(
        AnthropicProvider::new(config)
            .unwrap()
            .stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    let (message, error) = failed(&events);
    assert_eq!(message.text(), "half an answer");
    assert!(
        error.contains("did not finish its answer within 300 ms")
            && error.contains("partial reply is kept"),
        "{error}"
    );
}

#[tokio::test]
async fn an_event_larger_than_the_cap_is_refused_with_its_size() {
    let huge = chunk(json!({"content": "x".repeat(300_000)}), None);
    let server = FakeLlm::start(vec![Scripted::sse([
        chunk(json!({"role": "assistant", "content": "fine so far"}), None),
        huge,
    ])])
    .await;
    let mut config = openai_config(&server);
    config.max_event_bytes = 256 * 1024;
    let events = collect(
        OpenAiProvider::new(config)
            .unwrap()
            .stream(request("gpt-4o", "x"), CancellationToken::new()),
    )
    .await;
    let (message, error) = failed(&events);
    assert_eq!(message.text(), "fine so far");
    assert!(
        error.contains("single event larger than 256 KiB")
            && error.contains("partial reply is kept"),
        "{error}"
    );
}

#[tokio::test]
async fn a_ten_megabyte_event_over_http_arrives_whole() {
    let text = "0123456789".repeat(1 << 20);
    let server = FakeLlm::start(vec![Scripted::sse([
        chunk(json!({"role": "assistant", "content": text}), None),
        chunk(json!({}), Some("stop")),
        "data: [DONE]\n\n".to_owned(),
    ])])
    .await;
    let events =
        collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    assert_eq!(done(&events).text().len(), 10 << 20);
}

/// An endless event whose bytes are always ready (the worst case: nothing ever makes
/// the task wait), decoded on one thread: the abort, requested by another task on that
/// thread, can only run if decoding pauses now and then, and it must end the stream long
/// before the event would.
#[tokio::test(flavor = "current_thread")]
async fn an_abort_during_one_huge_event_takes_effect_at_once() {
    const READ: usize = 16 * 1024;
    const LIMIT: usize = 1 << 30;
    let produced = Arc::new(AtomicUsize::new(0));
    let cancel = CancellationToken::new();
    let counter = produced.clone();
    let started = Arc::new(tokio::sync::Notify::new());
    let notify = started.clone();
    let first = Bytes::from_static(b"data: {\"choices\":[{\"delta\":{\"content\":\"");
    let filler = Bytes::from(vec![b'x'; READ]);
    let body = futures::stream::iter(std::iter::once(first).chain(std::iter::repeat(filler)))
        .map(move |bytes| {
            let total = counter.fetch_add(bytes.len(), Ordering::Relaxed) + bytes.len();
            if total >= 1 << 20 {
                notify.notify_one();
            }
            Ok::<_, std::io::Error>(bytes)
        })
        .take_while({
            let produced = produced.clone();
            move |_| futures::future::ready(produced.load(Ordering::Relaxed) < LIMIT)
        });
    let aborter = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            started.notified().await;
            cancel.cancel();
        })
    };
    let mut config = OpenAiConfig::compatible("Local", "http://127.0.0.1:9/v1");
    config.max_event_bytes = LIMIT;
    let provider = OpenAiProvider::new(config).unwrap();
    let events: Vec<LlmEvent> = provider.decode_body("gpt-4o", body, cancel).collect().await;
    let (message, _) = failed(&events);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    let read = produced.load(Ordering::Relaxed);
    // At most a few pauses' worth (256 KiB each) after the first megabyte.
    assert!(
        read < 4 << 20,
        "read {read} bytes before the abort took effect"
    );
    aborter.await.unwrap();
}
