#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The Anthropic provider over real HTTP against the fake server: streaming text, tool
//! calls, thinking and its replay, usage and cost, stop reasons, request bodies, the agent
//! loop end to end.

use crate::support::fake_llm::anthropic::*;
use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::{FakeLlm, Scripted, Step};
use claw_tui::agent::{
    Block, ErrorKind, MessageDelta, StopReason, ThinkingLevel, ThinkingSignature, UserMessage,
};
use claw_tui::llm::{AnthropicConfig, AnthropicProvider, LlmEvent, LlmMessage, Provider};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn streams_text_with_usage_cost_and_the_documented_headers() {
    let mut script = vec![
        message_start("claude-sonnet-4-5-20250929", 100, 30, 20),
        ping(),
    ];
    script.extend(text_block(0, &["Hel", "lo \"world\"\n"]));
    script.push(message_delta("end_turn", 20));
    script.push(message_stop());
    let server = FakeLlm::start(vec![Scripted::sse(script)]).await;
    let provider = anthropic(&server);

    let events =
        collect(provider.stream(request("claude-sonnet-4-5", "hi"), CancellationToken::new()))
            .await;

    assert_eq!(events[0], LlmEvent::Start);
    assert_eq!(deltas(&events), text_deltas(0, &["Hel", "lo \"world\"\n"]));
    let message = done(&events);
    assert_eq!(message.text(), "Hello \"world\"\n");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.model, "claude-sonnet-4-5-20250929");
    let usage = &message.usage;
    assert_eq!(
        (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_write
        ),
        (100, 20, 30, 20)
    );
    // Sonnet 4.x list prices: $3 in, $15 out, $0.30 cache read, $3.75 cache write per 1M.
    let expected = (100.0 * 3.0 + 20.0 * 15.0 + 30.0 * 0.3 + 20.0 * 3.75) / 1e6;
    assert!(
        (usage.cost - expected).abs() < 1e-12,
        "{} vs {expected}",
        usage.cost
    );

    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.headers["x-api-key"], "test-key");
    assert_eq!(sent.headers["anthropic-version"], "2023-06-01");
    assert_eq!(sent.headers["content-type"], "application/json");
    assert!(!sent.headers.contains_key("authorization"));
    assert_eq!(sent.body["model"], "claude-sonnet-4-5");
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.body["max_tokens"], 16_384);
    // Prompt caching is on by default: breakpoints on the system prompt, the last tool
    // and the newest user turn.
    assert_eq!(
        sent.body["system"],
        json!([{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}])
    );
    assert!(sent.body.get("thinking").is_none());
    assert_eq!(
        sent.body["tools"],
        json!([{"name": "echo", "description": "Echo text back",
                "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
                "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        sent.body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
}

#[tokio::test]
async fn configured_prices_override_the_list_prices() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["x"]))]).await;
    let mut config = anthropic_config(&server);
    config.remote.prices.insert(
        "my-claude".into(),
        claw_tui::llm::ModelPrices::new(1_000_000.0, 0.0, 0.0, 0.0),
    );
    let provider = AnthropicProvider::new(config).unwrap();
    let message =
        done(&collect(provider.stream(request("my-claude", "hi"), CancellationToken::new())).await);
    // 100 input tokens at $1 per token.
    assert!(
        (message.usage.cost - 100.0).abs() < 1e-9,
        "{}",
        message.usage.cost
    );
}

#[tokio::test]
async fn tool_arguments_split_across_many_deltas_and_two_parallel_calls() {
    let args = r#"{"text": "a long argument with \"quotes\" and unicode é"}"#;
    let fragments: Vec<String> = args
        .chars()
        .collect::<Vec<_>>()
        .chunks(3)
        .map(|c| c.iter().collect())
        .collect();
    let fragments: Vec<&str> = fragments.iter().map(String::as_str).collect();
    let script = reply(
        vec![
            text_block(0, &["Calling tools."]),
            tool_block(1, "toolu_01", "echo", &fragments),
            tool_block(2, "toolu_02", "echo", &[r#"{"text""#, r#": "two"}"#]),
        ],
        "tool_use",
    );
    let server = FakeLlm::start(vec![Scripted::sse(script)]).await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "go"), CancellationToken::new()),
    )
    .await;

    let deltas = deltas(&events);
    assert!(deltas.contains(&MessageDelta::ToolCallStart {
        index: 1,
        id: "toolu_01".into(),
        name: "echo".into()
    }));
    assert!(deltas.contains(&MessageDelta::ToolCallStart {
        index: 2,
        id: "toolu_02".into(),
        name: "echo".into()
    }));
    let streamed: String = deltas
        .iter()
        .filter_map(|d| match d {
            MessageDelta::ToolCallArgs { index: 1, json } => Some(json.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, args);
    assert_eq!(
        deltas
            .iter()
            .filter(|d| matches!(d, MessageDelta::ToolCallArgs { index: 1, .. }))
            .count(),
        fragments.len()
    );

    let message = done(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls = message.tool_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].args,
        json!({"text": "a long argument with \"quotes\" and unicode é"})
    );
    assert_eq!(
        (calls[1].id.as_str(), &calls[1].args),
        ("toolu_02", &json!({"text": "two"}))
    );
}

#[tokio::test]
async fn thinking_streams_keeps_its_signature_and_is_replayed_next_request() {
    let script = reply(
        vec![
            thinking_block(0, &["Let me ", "think."], "EqQBCgIYAhIM"),
            text_block(1, &["Answer."]),
        ],
        "end_turn",
    );
    let server = FakeLlm::start(vec![
        Scripted::sse(script),
        Scripted::sse(text_reply(&["Again."])),
    ])
    .await;
    let provider = anthropic(&server);
    let mut first = request("claude-sonnet-4-5", "think");
    first.thinking = ThinkingLevel::Medium;
    let events = collect(provider.stream(first.clone(), CancellationToken::new())).await;

    assert_eq!(
        deltas(&events),
        vec![
            MessageDelta::Thinking {
                index: 0,
                text: String::new()
            },
            MessageDelta::Thinking {
                index: 0,
                text: "Let me ".into()
            },
            MessageDelta::Thinking {
                index: 0,
                text: "think.".into()
            },
            MessageDelta::Text {
                index: 1,
                text: "Answer.".into()
            },
        ]
    );
    let answer = done(&events);
    assert_eq!(
        answer.content,
        vec![
            Block::Thinking {
                thinking: "Let me think.".into(),
                signature: Some(ThinkingSignature::Anthropic("EqQBCgIYAhIM".into()))
            },
            Block::Text {
                text: "Answer.".into()
            },
        ]
    );
    let body = &server.requests()[0].body;
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 8192})
    );
    assert_eq!(body["max_tokens"], 16_384 + 8_192);

    let mut second = first;
    second.messages.push(LlmMessage::from(answer));
    second
        .messages
        .push(LlmMessage::from(UserMessage::new("more")));
    done(&collect(provider.stream(second, CancellationToken::new())).await);
    let body = &server.requests()[1].body;
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Let me think.", "signature": "EqQBCgIYAhIM"},
            {"type": "text", "text": "Answer."}
        ]})
    );
    assert_eq!(body["messages"][2]["content"][0]["text"], "more");
}

#[tokio::test]
async fn every_stop_reason_maps() {
    let cases = [
        ("end_turn", StopReason::Stop, true),
        ("stop_sequence", StopReason::Stop, true),
        ("pause_turn", StopReason::Stop, true),
        ("max_tokens", StopReason::Length, true),
        ("tool_use", StopReason::ToolUse, true),
        ("refusal", StopReason::Error, false),
    ];
    let script = cases
        .iter()
        .map(|(reason, _, _)| {
            let mut blocks = vec![text_block(0, &["partial answer"])];
            if *reason == "tool_use" {
                blocks.push(tool_block(1, "toolu_9", "echo", &["{}"]));
            }
            Scripted::sse(reply(blocks, reason))
        })
        .collect();
    let server = FakeLlm::start(script).await;
    let provider = anthropic(&server);
    for (reason, expected, ok) in cases {
        let events =
            collect(provider.stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()))
                .await;
        let (message, was_done) = outcome(&events);
        assert_eq!(message.stop_reason, expected, "{reason}");
        assert_eq!(was_done, ok, "{reason}");
        assert_eq!(message.text(), "partial answer", "{reason}");
        if reason == "refusal" {
            // Marked as a refusal, so a front-end can say so (ACP's `refusal`).
            assert_eq!(message.error_kind, Some(ErrorKind::Refusal));
            let error = message.error_message.unwrap();
            assert!(error.contains("refused"), "{error}");
        } else {
            assert_eq!(message.error_message, None);
            assert_eq!(message.error_kind, None);
        }
    }
}

#[tokio::test]
async fn events_split_across_reads_with_crlf_comments_and_multi_line_data() {
    let gate = Arc::new(Notify::new());
    let first = "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\r\ndata: \"delta\":{\"type\":\"text_delta\",\"text\":\"one \"}}\r\n\r\n";
    let second = "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"two\"}}\r\n\r\n";
    let (second_head, second_tail) = second.split_at(40);
    let opening = [
        message_start("claude-sonnet-4-5", 1, 0, 0).replace('\n', "\r\n"),
        ": keep-alive\r\n\r\n".to_owned(),
        block_start(0, json!({"type": "text", "text": ""})),
    ]
    .concat();
    // The second event's head travels with the first: the client must keep those bytes
    // while the server waits on the gate, then join the tail that comes in a later read.
    let script = Scripted::sse([opening, format!("{first}{second_head}")])
        .then(Step::Wait(gate.clone()))
        .then_chunks([
            second_tail.to_owned(),
            ": ping\r\n\r\n".to_owned(),
            block_stop(0),
        ])
        .then_chunks([message_delta("end_turn", 2), message_stop()]);
    let server = FakeLlm::start(vec![script]).await;
    let mut stream =
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new());

    use futures::StreamExt;
    let mut seen = Vec::new();
    while let Some(event) = tokio::time::timeout(crate::support::DEADLINE, stream.next())
        .await
        .unwrap()
    {
        let first_text =
            matches!(&event, LlmEvent::Delta(MessageDelta::Text { text, .. }) if text == "one ");
        seen.push(event);
        if first_text {
            gate.notify_one();
        }
    }
    assert_eq!(deltas(&seen), text_deltas(0, &["one ", "two"]));
    assert_eq!(done(&seen).text(), "one two");
}

#[tokio::test]
async fn malformed_event_json_names_the_event_and_shows_a_short_excerpt() {
    let garbage = format!(
        "{{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{}",
        "x".repeat(400)
    );
    let mut script = vec![message_start("claude-sonnet-4-5", 1, 0, 0)];
    script.extend(text_block(0, &["fine so far"]).into_iter().take(2));
    script.push(format!("event: content_block_delta\ndata: {garbage}\n\n"));
    let server = FakeLlm::start(vec![Scripted::sse(script)]).await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    let (message, error) = failed(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.text(), "fine so far");
    assert!(
        error.contains("malformed `content_block_delta` event"),
        "{error}"
    );
    let shown = error
        .split("Data: ")
        .nth(1)
        .unwrap()
        .split("…")
        .next()
        .unwrap();
    assert!(
        garbage.starts_with(shown) && shown.chars().count() < 200,
        "{error}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "a malformed stream is not retried"
    );
}

#[tokio::test]
async fn no_key_for_the_official_api_is_reported_without_a_request() {
    let provider = AnthropicProvider::new(AnthropicConfig::default()).unwrap();
    let events =
        collect(provider.stream(request("claude-sonnet-4-5", "x"), CancellationToken::new())).await;
    let (_, error) = failed(&events);
    assert!(
        error.contains("No Anthropic API key") && error.contains("ANTHROPIC_API_KEY"),
        "{error}"
    );
}
