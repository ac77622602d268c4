#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The OpenAI-compatible provider over real HTTP against the fake server: text, reasoning,
//! tool-call fragments (by index and by id), finish reasons, usage and cost, request
//! bodies and compat flags, keyless local servers, the agent loop end to end.

use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::openai::*;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::{echo_tool, until_agent_end};
use claw_tui::agent::{
    Agent, AgentEvent, AssistantMessage, Block, Message, MessageDelta, StopReason, ThinkingLevel,
    ToolResultMessage, UserMessage,
};
use claw_tui::llm::{
    LlmEvent, LlmMessage, MaxTokensField, OpenAiCompat, OpenAiConfig, OpenAiProvider, Provider,
    Secret, SystemRole,
};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

async fn run(
    provider: &OpenAiProvider,
    request: claw_tui::llm::LlmRequest<'static>,
) -> Vec<LlmEvent> {
    collect(provider.stream(request, CancellationToken::new())).await
}

#[tokio::test]
async fn streams_text_with_cached_usage_and_no_key_for_a_local_server() {
    let server = FakeLlm::start(vec![Scripted::sse([
        chunk(json!({"role": "assistant", "content": ""}), None),
        text("Hello"),
        text(", world"),
        finish("stop"),
        usage(1_000, 200, 400),
        done_marker(),
    ])])
    .await;
    let events = run(&openai(&server), request("gpt-4o", "hi")).await;

    assert_eq!(events[0], LlmEvent::Start);
    assert_eq!(deltas(&events), text_deltas(0, &["Hello", ", world"]));
    let message = done(&events);
    assert_eq!(message.text(), "Hello, world");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.model, "gpt-4o-2024-08-06");
    let u = &message.usage;
    // prompt_tokens counts the cached ones too: 600 fresh + 400 cached.
    assert_eq!(
        (u.input, u.output, u.cache_read, u.cache_write),
        (600, 200, 400, 0)
    );
    // gpt-4o list prices: $2.50 in, $10 out, $1.25 cached per 1M.
    let expected = (600.0 * 2.5 + 200.0 * 10.0 + 400.0 * 1.25) / 1e6;
    assert!(
        (u.cost - expected).abs() < 1e-12,
        "{} vs {expected}",
        u.cost
    );

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert!(
        !sent.headers.contains_key("authorization"),
        "keyless: {:?}",
        sent.headers
    );
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.body["stream_options"], json!({"include_usage": true}));
    assert!(
        sent.body.get("max_tokens").is_none() && sent.body.get("max_completion_tokens").is_none()
    );
    assert_eq!(
        sent.body["messages"],
        json!([{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi"}])
    );
    assert_eq!(
        sent.body["tools"],
        json!([{"type": "function", "function": {"name": "echo", "description": "Echo text back",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}}])
    );
}

#[tokio::test]
async fn reasoning_fields_stream_as_thinking() {
    let server = FakeLlm::start(vec![Scripted::sse([
        reasoning("reasoning_content", "First, "),
        reasoning("reasoning", "second."),
        text("Answer"),
        finish("stop"),
        done_marker(),
    ])])
    .await;
    let events = run(&openai(&server), request("deepseek-r1", "x")).await;
    assert_eq!(
        deltas(&events),
        vec![
            MessageDelta::Thinking {
                index: 0,
                text: "First, ".into()
            },
            MessageDelta::Thinking {
                index: 0,
                text: "second.".into()
            },
            MessageDelta::Text {
                index: 1,
                text: "Answer".into()
            },
        ]
    );
    let message = done(&events);
    assert_eq!(
        message.content,
        vec![
            Block::Thinking {
                thinking: "First, second.".into(),
                signature: None
            },
            Block::Text {
                text: "Answer".into()
            },
        ]
    );
    assert_eq!(
        message.usage,
        Default::default(),
        "no usage chunk, no usage"
    );
}

#[tokio::test]
async fn two_parallel_tool_calls_with_arguments_split_across_many_chunks() {
    let args = r#"{"text": "split \"into\" pieces, ünïcode too"}"#;
    let chars: Vec<char> = args.chars().collect();
    let mut script = vec![
        chunk(json!({"role": "assistant", "content": null}), None),
        tool(Some(0), Some("call_A"), Some("echo"), ""),
        tool(Some(1), Some("call_B"), Some("echo"), ""),
    ];
    // Fragments of both calls interleave, as servers stream parallel calls.
    for piece in chars.chunks(2) {
        let piece: String = piece.iter().collect();
        script.push(tool(Some(0), None, None, &piece));
    }
    script.push(tool(Some(1), None, None, r#"{"text":"#));
    script.push(tool(Some(1), None, None, r#""B"}"#));
    script.extend([finish("tool_calls"), usage(10, 5, 0), done_marker()]);
    let server = FakeLlm::start(vec![Scripted::sse(script)]).await;
    let events = run(&openai(&server), request("gpt-4o", "x")).await;

    let d = deltas(&events);
    assert_eq!(
        d[0],
        MessageDelta::ToolCallStart {
            index: 0,
            id: "call_A".into(),
            name: "echo".into()
        }
    );
    assert_eq!(
        d[1],
        MessageDelta::ToolCallStart {
            index: 1,
            id: "call_B".into(),
            name: "echo".into()
        }
    );
    let first: String = d
        .iter()
        .filter_map(|x| match x {
            MessageDelta::ToolCallArgs { index: 0, json } => Some(json.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(first, args);
    let message = done(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls = message.tool_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].args,
        json!({"text": "split \"into\" pieces, ünïcode too"})
    );
    assert_eq!(
        (calls[1].id.as_str(), &calls[1].args),
        ("call_B", &json!({"text": "B"}))
    );
}

#[tokio::test]
async fn tool_fragments_without_an_index_are_matched_by_id() {
    let server = FakeLlm::start(vec![Scripted::sse([
        tool(None, Some("call_x"), Some("echo"), r#"{"text":"#),
        tool(None, Some("call_y"), Some("echo"), r#"{"text":"y"}"#),
        tool(None, Some("call_x"), None, r#""x"}"#),
        finish("tool_calls"),
        done_marker(),
    ])])
    .await;
    let message = done(&run(&openai(&server), request("llama3.1", "x")).await);
    let calls = message.tool_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), &calls[0].args),
        ("call_x", &json!({"text": "x"}))
    );
    assert_eq!(
        (calls[1].id.as_str(), &calls[1].args),
        ("call_y", &json!({"text": "y"}))
    );
}

#[tokio::test]
async fn every_finish_reason_maps() {
    let cases = [
        ("stop", false, StopReason::Stop, true),
        ("length", false, StopReason::Length, true),
        ("tool_calls", true, StopReason::ToolUse, true),
        // Ollama says `stop` even when it called tools.
        ("stop", true, StopReason::ToolUse, true),
        ("content_filter", false, StopReason::Error, false),
    ];
    let script = cases
        .iter()
        .map(|(reason, with_tool, _, _)| {
            let mut chunks = vec![text("some text")];
            if *with_tool {
                chunks.push(tool(Some(0), Some("call_1"), Some("echo"), "{}"));
            }
            chunks.extend([finish(reason), done_marker()]);
            Scripted::sse(chunks)
        })
        .collect();
    let server = FakeLlm::start(script).await;
    let provider = openai(&server);
    for (reason, with_tool, expected, ok) in cases {
        let (message, was_done) = outcome(&run(&provider, request("gpt-4o", "x")).await);
        assert_eq!(
            (message.stop_reason, was_done),
            (expected, ok),
            "{reason} tool={with_tool}"
        );
        assert_eq!(message.text(), "some text");
        if reason == "content_filter" {
            let error = message.error_message.unwrap();
            assert!(error.contains("content filter"), "{error}");
        }
    }
}

#[tokio::test]
async fn a_finish_reason_without_done_still_completes_the_message() {
    let server = FakeLlm::start(vec![Scripted::sse([
        text("no DONE marker"),
        finish("stop"),
    ])])
    .await;
    assert_eq!(
        done(&run(&openai(&server), request("m", "x")).await).text(),
        "no DONE marker"
    );
}

#[tokio::test]
async fn compat_flags_shape_the_request() {
    let server = FakeLlm::start(vec![
        Scripted::sse(text_reply(&["a"])),
        Scripted::sse(text_reply(&["b"])),
    ])
    .await;
    let mut config = openai_config(&server);
    config.remote.api_key = Some(Secret::new("sk-local"));
    config.max_tokens = Some(4_000);
    config.compat = OpenAiCompat::openai();
    let mut req = request("o4-mini", "x");
    req.thinking = ThinkingLevel::High;
    done(&run(&OpenAiProvider::new(config.clone()).unwrap(), req.clone()).await);

    config.compat = OpenAiCompat {
        max_tokens_field: MaxTokensField::MaxTokens,
        system_role: SystemRole::System,
        stream_options: false,
        reasoning_effort: false,
        prompt_cache_key: false,
    };
    done(&run(&OpenAiProvider::new(config).unwrap(), req).await);

    let requests = server.requests();
    let (openai_style, plain) = (&requests[0], &requests[1]);
    assert_eq!(openai_style.headers["authorization"], "Bearer sk-local");
    assert_eq!(openai_style.body["max_completion_tokens"], 4_000);
    assert!(openai_style.body.get("max_tokens").is_none());
    assert_eq!(openai_style.body["messages"][0]["role"], "developer");
    assert_eq!(openai_style.body["reasoning_effort"], "high");
    assert_eq!(
        openai_style.body["stream_options"],
        json!({"include_usage": true})
    );

    assert_eq!(plain.body["max_tokens"], 4_000);
    assert!(plain.body.get("max_completion_tokens").is_none());
    assert_eq!(plain.body["messages"][0]["role"], "system");
    assert!(plain.body.get("reasoning_effort").is_none());
    assert!(plain.body.get("stream_options").is_none());
}

#[tokio::test]
async fn history_with_tool_calls_results_and_steering_is_sent_in_order() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["ok"]))]).await;
    let mut call = AssistantMessage::empty("gpt-4o");
    call.stop_reason = StopReason::ToolUse;
    call.content = vec![
        Block::Thinking {
            thinking: "not sent back".into(),
            signature: None,
        },
        Block::Text {
            text: "Checking.".into(),
        },
        Block::ToolCall {
            id: "call_1".into(),
            name: "echo".into(),
            args: json!({"text": "a"}),
        },
        Block::ToolCall {
            id: "call_2".into(),
            name: "echo".into(),
            args: json!({"text": "b"}),
        },
    ];
    let result = |id: &str, content: &str| {
        LlmMessage::from(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "echo".into(),
            content: content.into(),
            images: Vec::new(),
            details: json!(null),
            is_error: false,
            timestamp: 0,
        })
    };
    let mut req = request("gpt-4o", "check twice");
    req.messages.extend([
        LlmMessage::from(call),
        result("call_1", "a"),
        result("call_2", "b"),
        LlmMessage::from(UserMessage::new("steer: be quick")),
    ]);
    done(&run(&openai(&server), req).await);
    assert_eq!(
        server.requests()[0].body["messages"],
        json!([
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "check twice"},
            {"role": "assistant", "content": "Checking.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"a\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"b\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a"},
            {"role": "tool", "tool_call_id": "call_2", "content": "b"},
            {"role": "user", "content": "steer: be quick"}
        ])
    );
}

#[tokio::test]
async fn malformed_chunks_and_mid_stream_errors_are_explained() {
    let long = format!("{{\"choices\": [{}", "9".repeat(300));
    let server = FakeLlm::start(vec![
        Scripted::sse([text("ok so far"), format!("data: {long}\n\n")]),
        Scripted::sse([
            text("before"),
            data(json!({"error": {"message": "model crashed", "type": "server_error"}})),
        ]),
    ])
    .await;
    let provider = openai(&server);
    let (message, error) = failed(&run(&provider, request("m", "x")).await);
    assert_eq!(message.text(), "ok so far");
    assert!(
        error.contains("malformed `chat.completion.chunk` event"),
        "{error}"
    );
    let shown = error
        .split("Data: ")
        .nth(1)
        .unwrap()
        .split('…')
        .next()
        .unwrap();
    assert!(
        long.starts_with(shown) && shown.chars().count() < 200,
        "{error}"
    );

    let (message, error) = failed(&run(&provider, request("m", "x")).await);
    assert_eq!(message.text(), "before");
    assert!(
        error.contains("server_error: model crashed") && error.contains("TestServer"),
        "{error}"
    );
}

#[tokio::test]
async fn the_official_api_without_a_key_is_refused_up_front() {
    let provider = OpenAiProvider::new(OpenAiConfig::openai()).unwrap();
    let (_, error) = failed(&run(&provider, request("gpt-4o", "x")).await);
    assert!(
        error.contains("No OpenAI API key") && error.contains("OPENAI_API_KEY"),
        "{error}"
    );
}

#[tokio::test]
async fn the_agent_loop_runs_a_tool_round_trip_over_http() {
    let server = FakeLlm::start(vec![
        Scripted::sse([
            tool(Some(0), Some("call_e"), Some("echo"), r#"{"text":"#),
            tool(Some(0), None, None, r#""pong"}"#),
            finish("tool_calls"),
            done_marker(),
        ]),
        Scripted::sse(text_reply(&["It said pong."])),
    ])
    .await;
    let agent = Agent::new(Arc::new(openai(&server)), "llama3.1");
    agent.set_tools(vec![echo_tool()]);
    let mut rx = agent.subscribe(None);
    agent.prompt("echo pong").unwrap();
    let events = until_agent_end(&mut rx).await;
    let AgentEvent::AgentEnd { messages } = events.last().unwrap() else {
        unreachable!()
    };
    let Some(Message::Assistant(last)) = messages.last() else {
        panic!("{messages:?}")
    };
    assert_eq!(last.text(), "It said pong.");
    assert_eq!(
        server.requests()[1].body["messages"],
        json!([
            {"role": "user", "content": "echo pong"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_e", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"pong\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_e", "content": "pong"}
        ])
    );
}
