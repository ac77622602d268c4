#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Retries over real HTTP: rate limits with `retry-after`, overload (HTTP 529 and the SSE
//! `overloaded_error` event), repeated failures, refused connections, and what is never
//! retried. Backoff runs at a 10 ms base so nothing here waits long.

use crate::support::fake_llm::anthropic::*;
use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::{FakeLlm, Scripted, Step, openai as oai};
use claw_tui::agent::StopReason;
use claw_tui::llm::{AnthropicProvider, LlmEvent, OpenAiProvider, Provider, RetryPolicy};
use futures::StreamExt;
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn overloaded_529() -> Scripted {
    Scripted::json(
        529,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    )
}

fn unavailable_503() -> Scripted {
    Scripted::json(
        503,
        json!({"error": {"message": "upstream unavailable", "type": "server_error"}}),
    )
}

#[tokio::test]
async fn rate_limit_then_success_honours_retry_after() {
    let rate_limited = Scripted::json(
        429,
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
    )
    .header("retry-after", "0");
    let server = FakeLlm::start(vec![rate_limited, Scripted::sse(text_reply(&["fine"]))]).await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;

    let (starts, ends) = retries(&events);
    assert_eq!(starts.len(), 1);
    let (attempt, max, delay, reason) = &starts[0];
    // `retry-after: 0` replaces the 10 ms backoff; a rate limit gets 10 retries.
    assert_eq!((*attempt, *max, *delay), (1, 10, 0));
    assert!(
        reason.contains("429") && reason.contains("slow down"),
        "{reason}"
    );
    assert_eq!(ends, vec![1]);
    // The retry is announced, waited for, and only then does the answer start.
    assert!(matches!(events[0], LlmEvent::RetryStart { .. }));
    assert_eq!(events[1], LlmEvent::RetryEnd { attempt: 1 });
    assert_eq!(events[2], LlmEvent::Start);
    assert_eq!(events.iter().filter(|e| **e == LlmEvent::Start).count(), 1);
    assert_eq!(done(&events).text(), "fine");
    assert_eq!(server.requests().len(), 2);
}

/// A storm of 429s outlasts the three retries a failure gets: a rate limit gets ten,
/// within a budget of time, and then the error says how many were tried.
#[tokio::test]
async fn a_rate_limit_storm_is_waited_out_within_its_budget() {
    let limited = || Scripted::json(429, json!({"error": {"message": "rate limited"}}));
    let mut script: Vec<Scripted> = (0..6).map(|_| limited()).collect();
    script.push(Scripted::sse(oai::text_reply(&["through"])));
    let server = FakeLlm::start(script).await;
    let events =
        collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    let (starts, ends) = retries(&events);
    assert_eq!(starts.len(), 6, "more than the 3 retries of a failure");
    assert!(starts.iter().all(|s| s.1 == 10), "{starts:?}");
    assert_eq!(ends.len(), 6);
    assert_eq!(done(&events).text(), "through");

    // A budget of time runs out before the retries do.
    let server = FakeLlm::start((0..12).map(|_| limited()).collect()).await;
    let mut config = openai_config(&server);
    config.remote.retry = RetryPolicy {
        rate_limit_budget: Duration::from_millis(35),
        ..fast_retry()
    };
    let provider = OpenAiProvider::new(config).unwrap();
    let events = collect(provider.stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    let (starts, _) = retries(&events);
    assert!(
        (1..10).contains(&starts.len()),
        "stopped by the budget, not the count: {}",
        starts.len()
    );
    let (_, error) = failed(&events);
    assert!(error.contains("rate-limited"), "{error}");
    assert_eq!(server.requests().len(), starts.len() + 1);
}

/// Other failures keep their three retries.
#[tokio::test]
async fn a_failing_server_still_gets_three_retries() {
    let server = FakeLlm::start((0..6).map(|_| unavailable_503()).collect()).await;
    let events =
        collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    let (starts, _) = retries(&events);
    assert_eq!(starts.len(), 3);
    assert!(starts.iter().all(|s| s.1 == 3));
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn server_waits_are_read_from_seconds_and_milliseconds() {
    let limited = |name: &str, value: &str| {
        Scripted::json(429, json!({"error": {"message": "rate limited"}})).header(name, value)
    };
    let server = FakeLlm::start(vec![
        limited("retry-after", "0.04"),
        limited("retry-after-ms", "7"),
        Scripted::sse(oai::text_reply(&["ok"])),
    ])
    .await;
    let events =
        collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    let (starts, ends) = retries(&events);
    let delays: Vec<u64> = starts.iter().map(|s| s.2).collect();
    assert_eq!(delays, vec![40, 7]);
    assert_eq!(ends, vec![1, 2]);
    assert_eq!(done(&events).text(), "ok");
}

/// A server that asks for a longer wait than the cap (fast_retry: 50 ms) is not retried
/// sooner than it asked, nor waited for silently: the error says what it asked for.
#[tokio::test]
async fn a_retry_after_beyond_the_cap_is_reported_not_retried() {
    for (name, value, asked) in [
        ("retry-after", "3600", "asked to wait 1 h before"),
        // Decades from now: shown in hours.
        ("retry-after", "Fri, 31 Dec 2100 23:59:59 GMT", " h "),
        ("retry-after-ms", "90000", "asked to wait 90 s before"),
    ] {
        let server = FakeLlm::start(vec![
            Scripted::json(429, json!({"error": {"message": "quota exhausted"}}))
                .header(name, value),
            Scripted::sse(oai::text_reply(&["too early"])),
        ])
        .await;
        let events =
            collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
        let (_, error) = failed(&events);
        for part in [
            "rate-limited",
            "quota exhausted",
            asked,
            "(Retry-After)",
            "longer than the 50 ms",
            "did not retry",
        ] {
            assert!(error.contains(part), "{name}: {value}: {part:?} in {error}");
        }
        assert!(retries(&events).0.is_empty(), "{name}: {value}");
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn overloaded_529_is_retried_with_backoff() {
    let server = FakeLlm::start(vec![overloaded_529(), Scripted::sse(text_reply(&["back"]))]).await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    let (starts, _) = retries(&events);
    let (_, _, delay, reason) = &starts[0];
    assert!(
        (10..=13).contains(delay),
        "10 ms base plus ≤25 % jitter: {delay}"
    );
    assert!(
        reason.contains("529") && reason.contains("overloaded_error: Overloaded"),
        "{reason}"
    );
    assert_eq!(done(&events).text(), "back");
}

#[tokio::test]
async fn overloaded_error_event_before_content_is_retried() {
    let overloaded = Scripted::sse([
        message_start("claude-sonnet-4-5", 10, 0, 0),
        ping(),
        error("overloaded_error", "Overloaded"),
    ]);
    let server = FakeLlm::start(vec![overloaded, Scripted::sse(text_reply(&["second try"]))]).await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    let (starts, ends) = retries(&events);
    assert_eq!(starts.len(), 1);
    assert!(starts[0].3.contains("overloaded_error"), "{:?}", starts[0]);
    assert_eq!(ends, vec![1]);
    let first_delta = events
        .iter()
        .position(|e| matches!(e, LlmEvent::Delta(_)))
        .unwrap();
    let retry_end = events
        .iter()
        .position(|e| matches!(e, LlmEvent::RetryEnd { .. }))
        .unwrap();
    assert!(retry_end < first_delta, "no content before the retry");
    let message = done(&events);
    assert_eq!(message.text(), "second try");
    assert_eq!(
        message.usage.input, 100,
        "usage of the failed attempt is dropped"
    );
}

#[tokio::test]
async fn overloaded_after_content_keeps_the_partial_instead_of_retrying() {
    let mut script = vec![message_start("claude-sonnet-4-5", 10, 0, 0)];
    script.extend(text_block(0, &["half an "]).into_iter().take(2));
    script.push(error("overloaded_error", "Overloaded"));
    let server = FakeLlm::start(vec![Scripted::sse(script)]).await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    let (message, error) = failed(&events);
    assert_eq!(message.text(), "half an ");
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(
        error.contains("overloaded_error") && error.contains("partial reply is kept"),
        "{error}"
    );
    assert!(retries(&events).0.is_empty());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_broken_before_any_content_is_retried() {
    let broken =
        Scripted::sse([message_start("claude-sonnet-4-5", 10, 0, 0), ping()]).then(Step::Fail);
    let server = FakeLlm::start(vec![broken, Scripted::sse(text_reply(&["whole"]))]).await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    let (starts, _) = retries(&events);
    assert_eq!(starts.len(), 1);
    assert!(
        starts[0].3.contains("before any content"),
        "{:?}",
        starts[0]
    );
    assert_eq!(done(&events).text(), "whole");
}

#[tokio::test]
async fn three_failed_retries_end_with_a_clear_error() {
    let server = FakeLlm::start(vec![
        unavailable_503(),
        unavailable_503(),
        unavailable_503(),
        unavailable_503(),
    ])
    .await;
    let events =
        collect(openai(&server).stream(request("gpt-4o", "x"), CancellationToken::new())).await;
    let (starts, ends) = retries(&events);
    let attempts: Vec<(u32, u32)> = starts.iter().map(|s| (s.0, s.1)).collect();
    assert_eq!(attempts, vec![(1, 3), (2, 3), (3, 3)]);
    for ((attempt, _, delay, _), base) in starts.iter().zip([10u64, 20, 40]) {
        assert!(
            (base..=base + base / 4 + 1).contains(delay),
            "attempt {attempt}: {delay}"
        );
    }
    assert_eq!(ends, vec![1, 2, 3]);
    let (message, error) = failed(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(
        error.contains("HTTP 503")
            && error.contains("upstream unavailable")
            && error.contains("after 3 retries")
            && error.contains("try again"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn refused_connections_are_retried_then_explained() {
    // A port that was just free: nothing listens there any more.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let mut config = claw_tui::llm::OpenAiConfig::compatible("Local", format!("http://{addr}/v1"));
    config.remote.retry = fast_retry();
    let provider = OpenAiProvider::new(config).unwrap();
    let events = collect(provider.stream(request("llama3", "x"), CancellationToken::new())).await;
    let (starts, _) = retries(&events);
    assert_eq!(starts.len(), 3);
    // The cause comes first, so a retry line cut short still says it.
    assert!(
        starts[0]
            .3
            .starts_with("cannot connect: Connection refused"),
        "{:?}",
        starts[0]
    );
    let (_, error) = failed(&events);
    assert!(
        error.contains(&format!(
            "Could not reach http://{addr}/v1/chat/completions"
        )) && error.contains("after 3 retries")
            && error.contains("server is running"),
        "{error}"
    );
}

#[tokio::test]
async fn abort_during_the_retry_wait_ends_at_once() {
    let server = FakeLlm::start(vec![overloaded_529()]).await;
    let mut config = anthropic_config(&server);
    // A wait the test could never sit out: only the abort can end it.
    config.remote.retry = RetryPolicy::with_base_delay(Duration::from_secs(3600));
    let provider = AnthropicProvider::new(config).unwrap();
    let cancel = CancellationToken::new();
    let mut stream = provider.stream(request("claude-sonnet-4-5", "x"), cancel.clone());
    let first = tokio::time::timeout(crate::support::DEADLINE, stream.next())
        .await
        .unwrap();
    assert!(
        matches!(first, Some(LlmEvent::RetryStart { attempt: 1, .. })),
        "{first:?}"
    );
    cancel.cancel();
    let rest = collect(stream).await;
    let (message, error) = failed(&rest);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(error, claw_tui::agent::ABORTED_MESSAGE);
    assert!(
        retries(&rest).1.is_empty(),
        "no RetryEnd: the retry never happened"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = FakeLlm::start(vec![Scripted::json(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "messages: empty"}}),
    )])
    .await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    failed(&events);
    assert!(retries(&events).0.is_empty());
    assert_eq!(server.requests().len(), 1);
}
