#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The Responses API provider over real HTTP against the fake server: text, reasoning
//! summaries, parallel function calls with arguments split across deltas, reasoning
//! replayed with its encrypted content, usage with cached and reasoning tokens,
//! `response.incomplete`, `response.failed` and `error` events, the request body.

use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::responses::*;
use crate::support::fake_llm::{FakeLlm, Scripted};
use claw_tui::agent::{
    Block, ErrorKind, MessageDelta, StopReason, ThinkingLevel, ThinkingSignature,
};
use claw_tui::llm::{LlmEvent, LlmMessage, Provider};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn run(server: &FakeLlm, request: claw_tui::llm::LlmRequest<'static>) -> Vec<LlmEvent> {
    collect(responses(server).stream(request, CancellationToken::new())).await
}

#[tokio::test]
async fn streams_text_with_cached_usage_and_sends_a_stateless_request() {
    let server = FakeLlm::start(vec![Scripted::sse(
        Script::new("gpt-5-2025-08-07")
            .message(0, &["Hel", "lo"])
            .completed(1_000, 400, 200, 0),
    )])
    .await;
    let events = run(&server, request("gpt-5", "hi")).await;
    assert_eq!(deltas(&events), text_deltas(0, &["Hel", "lo"]));
    let message = done(&events);
    assert_eq!(message.text(), "Hello");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.model, "gpt-5-2025-08-07");
    let u = &message.usage;
    // input_tokens counts the cached ones: 600 fresh + 400 read from the cache.
    assert_eq!((u.input, u.cache_read, u.output), (600, 400, 200));
    let expected = (600.0 * 1.25 + 400.0 * 0.125 + 200.0 * 10.0) / 1e6;
    assert!(
        (u.cost - expected).abs() < 1e-12,
        "{} vs {expected}",
        u.cost
    );

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.headers["authorization"], "Bearer sk-test");
    let body = &sent.body;
    assert_eq!(body["store"], false);
    assert_eq!(body["stream"], true);
    assert_eq!(body["instructions"], "You are terse.");
    assert_eq!(
        body["input"],
        json!([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}])
    );
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "name": "echo", "description": "Echo text back",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
                "strict": false}])
    );
    // Thinking off: no reasoning parameters, which models without reasoning refuse.
    assert!(body.get("reasoning").is_none() && body.get("include").is_none());
    let key = body["prompt_cache_key"].as_str().unwrap();
    assert!(key.starts_with("claw-"), "{key}");
}

#[tokio::test]
async fn reasoning_summaries_stream_as_thinking_and_the_item_is_kept() {
    let server = FakeLlm::start(vec![Scripted::sse(
        Script::new("o4-mini")
            .reasoning(
                0,
                &[&["**Plan**", " first"], &["then answer"]],
                "gAAAAenc==",
            )
            .message(1, &["Done."])
            .completed(300, 0, 120, 96),
    )])
    .await;
    let mut req = request("o4-mini", "think");
    req.thinking = ThinkingLevel::High;
    let events = run(&server, req).await;
    assert_eq!(
        deltas(&events),
        vec![
            MessageDelta::Thinking {
                index: 0,
                text: "**Plan**".into()
            },
            MessageDelta::Thinking {
                index: 0,
                text: " first".into()
            },
            MessageDelta::Thinking {
                index: 0,
                text: "\n\n".into()
            },
            MessageDelta::Thinking {
                index: 0,
                text: "then answer".into()
            },
            MessageDelta::Text {
                index: 1,
                text: "Done.".into()
            },
        ]
    );
    let message = done(&events);
    let Block::Thinking {
        thinking,
        signature: Some(ThinkingSignature::ResponsesReasoning(item)),
    } = &message.content[0]
    else {
        panic!("{:?}", message.content)
    };
    assert_eq!(thinking, "**Plan** first\n\nthen answer");
    assert_eq!(item["encrypted_content"], "gAAAAenc==");
    assert_eq!(item["summary"][1]["text"], "then answer");
    assert_eq!(message.usage.reasoning, 96);
    assert_eq!(message.usage.output, 120);

    let body = &server.requests()[0].body;
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
}

#[tokio::test]
async fn two_parallel_calls_with_split_arguments_and_reasoning_replayed_next_turn() {
    let first = Script::new("gpt-5")
        .reasoning(0, &[&["Two lookups."]], "ENC-1")
        .call_added(1, "call_a", "echo")
        .call_added(2, "call_b", "echo")
        .args(1, "{\"te")
        .args(2, "{\"text\":")
        .args(1, "xt\":\"one")
        .args(2, "\"two\"}")
        .args(1, "\"}")
        .call_done(1, "call_a", "echo", "{\"text\":\"one\"}")
        .call_done(2, "call_b", "echo", "{\"text\":\"two\"}")
        .completed(900, 0, 80, 40);
    let second = text_reply("gpt-5", &["one two"]);
    let server = FakeLlm::start(vec![Scripted::sse(first), Scripted::sse(second)]).await;
    let provider = responses(&server);
    let mut req = request("gpt-5", "echo one and two");
    req.thinking = ThinkingLevel::Medium;
    let events = collect(provider.stream(req.clone(), CancellationToken::new())).await;
    let answer = done(&events);
    assert_eq!(answer.stop_reason, StopReason::ToolUse);
    let calls = answer.tool_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), &calls[0].args),
        ("call_a", &json!({"text": "one"}))
    );
    assert_eq!(
        (calls[1].id.as_str(), &calls[1].args),
        ("call_b", &json!({"text": "two"}))
    );
    // Each call's arguments stream once, as the deltas said: the `.done` events that
    // repeat them add nothing.
    let mut streamed = [String::new(), String::new()];
    for delta in deltas(&events) {
        if let MessageDelta::ToolCallArgs { index, json } = delta {
            streamed[index - 1].push_str(&json);
        }
    }
    assert_eq!(streamed, ["{\"text\":\"one\"}", "{\"text\":\"two\"}"]);
    assert_eq!(answer.usage.reasoning, 40);

    // The next request replays the reasoning item with its encrypted content, whatever
    // the thinking level is now, then the calls and their outputs.
    req.thinking = ThinkingLevel::Off;
    req.messages.push(LlmMessage::from(answer));
    for (id, text) in [("call_a", "one"), ("call_b", "two")] {
        req.messages
            .push(LlmMessage::from(claw_tui::agent::ToolResultMessage {
                tool_call_id: id.into(),
                tool_name: "echo".into(),
                content: text.into(),
                images: Vec::new(),
                details: Value::Null,
                is_error: false,
                timestamp: 0,
            }));
    }
    done(&collect(provider.stream(req, CancellationToken::new())).await);
    let input = server.requests()[1].body["input"].clone();
    assert_eq!(
        input.as_array().unwrap()[1..].to_vec(),
        vec![
            json!({"type": "reasoning", "encrypted_content": "ENC-1",
                   "summary": [{"type": "summary_text", "text": "Two lookups."}]}),
            json!({"type": "function_call", "call_id": "call_a", "name": "echo",
                   "arguments": "{\"text\":\"one\"}"}),
            json!({"type": "function_call", "call_id": "call_b", "name": "echo",
                   "arguments": "{\"text\":\"two\"}"}),
            json!({"type": "function_call_output", "call_id": "call_a", "output": "one"}),
            json!({"type": "function_call_output", "call_id": "call_b", "output": "two"}),
        ]
    );
}

#[tokio::test]
async fn arguments_split_across_deltas_arrive_in_order_per_call() {
    let server = FakeLlm::start(vec![Scripted::sse(
        Script::new("gpt-5")
            .call_added(0, "call_x", "echo")
            .call_added(1, "call_y", "echo")
            .args(1, "{\"text\"")
            .args(0, "{\"text\":\"x\"}")
            .args(1, ":\"y\"}")
            .call_done(0, "call_x", "echo", "{\"text\":\"x\"}")
            .call_done(1, "call_y", "echo", "{\"text\":\"y\"}")
            .completed(10, 0, 10, 0),
    )])
    .await;
    let events = run(&server, request("gpt-5", "x")).await;
    let args: Vec<(usize, String)> = deltas(&events)
        .into_iter()
        .filter_map(|d| match d {
            MessageDelta::ToolCallArgs { index, json } => Some((index, json)),
            _ => None,
        })
        .collect();
    assert_eq!(
        args,
        vec![
            (1, "{\"text\"".to_owned()),
            (0, "{\"text\":\"x\"}".to_owned()),
            (1, ":\"y\"}".to_owned()),
        ]
    );
    let message = done(&events);
    assert_eq!(message.tool_calls()[1].args, json!({"text": "y"}));
}

/// A reasoning model reasons even with thinking off, but then sends no summary and no
/// encrypted content: nothing is kept for it, and nothing of it is replayed. An item
/// with encrypted content but no summary is kept (empty) and replayed.
#[tokio::test]
async fn reasoning_without_encrypted_content_is_not_kept_and_without_summary_is_replayed() {
    let first = Script::new("gpt-5")
        .reasoning(0, &[], "")
        .message(1, &["Plain."])
        .completed(100, 0, 30, 20);
    let second = Script::new("gpt-5")
        .reasoning(0, &[], "ENC-QUIET")
        .message(1, &["Again."])
        .completed(100, 0, 30, 20);
    let third = text_reply("gpt-5", &["ok"]);
    let server = FakeLlm::start(vec![
        Scripted::sse(first),
        Scripted::sse(second),
        Scripted::sse(third),
    ])
    .await;
    let mut req = request("gpt-5", "hi");
    let answer = done(&run(&server, req.clone()).await);
    assert_eq!(
        answer.content,
        vec![Block::Text {
            text: "Plain.".into()
        }]
    );
    let body = &server.requests()[0].body;
    assert!(
        body.get("reasoning").is_none() && body.get("include").is_none(),
        "{body}"
    );

    req.messages.push(LlmMessage::from(answer));
    req.messages
        .push(LlmMessage::from(claw_tui::agent::UserMessage::new("more")));
    req.thinking = ThinkingLevel::Low;
    let answer = done(&run(&server, req.clone()).await);
    assert!(
        matches!(&answer.content[0], Block::Thinking { thinking, signature: Some(ThinkingSignature::ResponsesReasoning(_)) } if thinking.is_empty()),
        "{:?}",
        answer.content
    );
    req.messages.push(LlmMessage::from(answer));
    req.messages
        .push(LlmMessage::from(claw_tui::agent::UserMessage::new("last")));
    done(&run(&server, req).await);
    let input = server.requests()[2].body["input"].clone();
    let kinds: Vec<&str> = input
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "message",
            "reasoning",
            "message",
            "message"
        ]
    );
    assert_eq!(
        input[3],
        json!({"type": "reasoning", "encrypted_content": "ENC-QUIET", "summary": []})
    );
}

#[tokio::test]
async fn an_incomplete_response_keeps_its_text_as_a_length_stop() {
    let server = FakeLlm::start(vec![Scripted::sse(
        Script::new("gpt-5")
            .message(0, &["Partial an"])
            .incomplete("max_output_tokens"),
    )])
    .await;
    let message = done(&run(&server, request("gpt-5", "long")).await);
    assert_eq!(message.stop_reason, StopReason::Length);
    assert_eq!(message.text(), "Partial an");
    assert_eq!(message.usage.output, 50);
}

#[tokio::test]
async fn a_failed_response_with_a_server_error_is_retried() {
    let server = FakeLlm::start(vec![
        Scripted::sse(Script::new("gpt-5").failed("server_error", "The server had an error")),
        Scripted::sse(text_reply("gpt-5", &["ok"])),
    ])
    .await;
    let events = run(&server, request("gpt-5", "x")).await;
    let (starts, ends) = retries(&events);
    assert_eq!(starts.len(), 1, "{starts:?}");
    assert!(
        starts[0]
            .3
            .contains("server_error: The server had an error"),
        "{starts:?}"
    );
    assert_eq!(ends, vec![1]);
    assert_eq!(done(&events).text(), "ok");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_failed_response_that_a_retry_cannot_fix_says_why() {
    let server = FakeLlm::start(vec![Scripted::sse(
        Script::new("gpt-5").failed("invalid_prompt", "Your prompt was flagged"),
    )])
    .await;
    let events = run(&server, request("gpt-5", "x")).await;
    let (_, text) = failed(&events);
    assert_eq!(
        text,
        "OpenAI could not complete the answer (invalid_prompt: Your prompt was flagged)."
    );
    assert!(retries(&events).0.is_empty());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn error_events_are_retried_when_rate_limited_and_explained_otherwise() {
    let server = FakeLlm::start(vec![
        Scripted::sse(Script::new("gpt-5").error("rate_limit_exceeded", "Slow down")),
        Scripted::sse(Script::new("gpt-5").message(0, &["half"]).error(
            "context_length_exceeded",
            "Your input exceeds the context window",
        )),
    ])
    .await;
    let events = run(&server, request("gpt-5", "x")).await;
    assert_eq!(retries(&events).0.len(), 1);
    let (partial, text) = failed(&events);
    assert_eq!(partial.text(), "half");
    assert!(text.contains("no longer fits the context window"), "{text}");
    // Marked as an overflow, so the loop can compact and retry (and says what to do).
    assert_eq!(partial.error_kind, Some(ErrorKind::ContextOverflow));
    assert!(
        text.ends_with("The partial reply is kept; send a message to continue."),
        "{text}"
    );
}

#[tokio::test]
async fn a_stream_cut_before_completed_is_not_a_finished_answer() {
    let mut events = Script::new("gpt-5")
        .message(0, &["cut"])
        .completed(1, 0, 1, 0);
    events.pop();
    let server = FakeLlm::start(vec![Scripted::sse(events)]).await;
    let (partial, text) = failed(&run(&server, request("gpt-5", "x")).await);
    assert_eq!(partial.text(), "cut");
    assert!(text.contains("cut off"), "{text}");
}
