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
use claw_tui::agent::{ErrorKind, StopReason};
use claw_tui::llm::{AnthropicProvider, LlmEvent, OpenAiConfig, OpenAiProvider, Provider};
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_conversation_too_long_for_the_model_is_named_an_overflow() {
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
        let (message, error) = failed(&events);
        assert_eq!(message.error_kind, Some(ErrorKind::ContextOverflow));
        for part in ["no longer fits the context window", said] {
            assert!(error.contains(part), "{part:?} in {error}");
        }
        // What to do depends on what the loop does next (it compacts on its own), so the
        // provider's words give no advice that could be false by then.
        assert!(!error.contains("/compact"), "{error}");
        assert!(retries(&events).0.is_empty());
    }
    assert_eq!(server.requests().len(), 2);
}

/// What servers answer a request longer than the model's window, as reported in their
/// issue trackers: status and body.
fn overflow_answers() -> Vec<(&'static str, Scripted)> {
    vec![
        (
            "vLLM",
            Scripted::json(
                400,
                json!({"object": "error", "message": "This model's maximum context length is \
                       8192 tokens. However, you requested 8203 tokens (7691 in the messages, \
                       512 in the completion). Please reduce the length of the messages or \
                       completion.", "type": "BadRequestError", "param": null, "code": 400}),
            ),
        ),
        (
            "vLLM (newer)",
            Scripted::json(
                400,
                json!({"error": {"message": "This model's maximum context length is 2048 \
                       tokens. However, your request has 8 input tokens plus 2045 \
                       'max_tokens'. Please reduce one or the other. (parameter=input_tokens, \
                       max_tokens, value=(8, 2045))", "type": "BadRequestError",
                       "param": "input_tokens, max_tokens", "code": 400}}),
            ),
        ),
        (
            "llama.cpp",
            Scripted::json(
                400,
                json!({"error": {"code": 400, "message": "the request exceeds the available \
                       context size. try increasing the context size or enable context shift",
                       "type": "exceed_context_size_error", "n_prompt_tokens": 14429,
                       "n_ctx": 8192}}),
            ),
        ),
        (
            "llama.cpp (newer)",
            Scripted::json(
                400,
                json!({"error": {"code": 400, "message": "request (4390 tokens) exceeds the \
                       available context size (4096 tokens), try increasing it",
                       "type": "exceed_context_size_error", "n_prompt_tokens": 4390,
                       "n_ctx": 4096}}),
            ),
        ),
        (
            // HTTP 500 is retried as a server failure, but not this one.
            "llama.cpp (HTTP 500)",
            Scripted::json(
                500,
                json!({"error": {"code": 500, "message": "Context size has been exceeded.",
                       "type": "server_error"}}),
            ),
        ),
        (
            "Ollama",
            Scripted::json(
                400,
                json!({"error": "the input length exceeds the context length"}),
            ),
        ),
        (
            "OpenRouter",
            Scripted::json(
                400,
                json!({"error": {"message": "This endpoint's maximum context length is 131072 \
                       tokens. However, you requested about 138956 tokens (7884 of text input, \
                       131072 in the output). Please reduce the length of either one, or use \
                       the \"middle-out\" transform to compress your prompt automatically.",
                       "code": 400, "metadata": {"provider_name": null}}}),
            ),
        ),
        (
            // OpenRouter reports an upstream failure inside an already started stream.
            "OpenRouter (mid-stream)",
            Scripted::sse([format!(
                "data: {}\n\n",
                json!({"error": {"message": "This endpoint's maximum context length is 65536 \
                       tokens. However, you requested about 70000 tokens.", "code": 400}})
            )]),
        ),
    ]
}

#[tokio::test]
async fn every_servers_context_overflow_is_recognised_and_never_retried() {
    let answers = overflow_answers();
    let count = answers.len();
    let (names, script): (Vec<_>, Vec<_>) = answers.into_iter().unzip();
    let server = FakeLlm::start(script).await;
    for name in names {
        let events =
            collect(openai(&server).stream(request("local", "x"), CancellationToken::new())).await;
        let (message, error) = failed(&events);
        assert_eq!(
            message.error_kind,
            Some(ErrorKind::ContextOverflow),
            "{name}: {error}"
        );
        assert!(retries(&events).0.is_empty(), "{name} was retried");
    }
    assert_eq!(server.requests().len(), count);
}

#[tokio::test]
async fn other_refusals_and_rate_limits_are_not_overflows() {
    let server = FakeLlm::start(vec![
        Scripted::json(
            400,
            json!({"error": {"message": "max_tokens is too large: 300000. This model supports \
                   at most 16384 completion tokens.", "type": "invalid_request_error"}}),
        ),
        Scripted::json(
            429,
            json!({"error": {"message": "Rate limit reached: too many tokens per minute \
                   (TPM). Limit 30000, Requested 41000.", "type": "tokens"}}),
        ),
        Scripted::sse(text_reply(&["fine"])),
    ])
    .await;
    let refused =
        collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    assert_eq!(failed(&refused).0.error_kind, None);
    let limited =
        collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    assert_eq!(retries(&limited).0.len(), 1, "a rate limit is retried");
    assert_eq!(done(&limited).error_kind, None);
}

#[tokio::test]
async fn https_to_a_plain_http_server_suggests_http() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["never read"]))]).await;
    let https = format!("https://{}/v1", server.addr);
    let mut config = OpenAiConfig::compatible("Local", https.clone());
    config.remote.retry = fast_retry();
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
    config.remote.idle_timeout = Duration::from_secs(30);
    config.remote.request_timeout = Duration::from_millis(400);
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
    config.remote.request_timeout = Duration::from_millis(300);
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
    config.remote.max_event_bytes = 256 * 1024;
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
    config.remote.max_event_bytes = LIMIT;
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
