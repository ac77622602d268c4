#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The Anthropic provider over several turns, over real HTTP: tool results merged into
//! one user turn with a steering message after them, and the agent loop's tool round
//! trip, with the cache breakpoints where each request puts them.

use crate::support::fake_llm::anthropic::*;
use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::{echo_tool, until_agent_end};
use claw_tui::agent::{
    Agent, AgentEvent, AssistantMessage, Block, Message, StopReason, ToolResultMessage, UserMessage,
};
use claw_tui::llm::{LlmMessage, Provider};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn tool_results_are_merged_and_a_steering_message_follows_them() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["ok"]))]).await;
    let mut call = AssistantMessage::empty("claude-sonnet-4-5");
    call.stop_reason = StopReason::ToolUse;
    call.content = vec![
        Block::Text {
            text: "Running two.".into(),
        },
        Block::ToolCall {
            id: "toolu_a".into(),
            name: "echo".into(),
            args: json!({"text": "1"}),
        },
        Block::ToolCall {
            id: "toolu_b".into(),
            name: "echo".into(),
            args: json!({"text": "2"}),
        },
    ];
    let result = |id: &str, content: &str, is_error: bool| {
        LlmMessage::from(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "echo".into(),
            content: content.into(),
            images: Vec::new(),
            details: json!({"never": "sent"}),
            is_error,
            timestamp: 0,
        })
    };
    let mut req = request("claude-sonnet-4-5", "do two things");
    req.messages.extend([
        LlmMessage::from(call),
        result("toolu_a", "1", false),
        result("toolu_b", "boom: no such file", true),
        LlmMessage::from(UserMessage::new("actually, stop after this")),
    ]);
    done(&collect(anthropic(&server).stream(req, CancellationToken::new())).await);

    let body = &server.requests()[0].body;
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "text", "text": "do two things", "cache_control": {"type": "ephemeral"}}
            ]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Running two."},
                {"type": "tool_use", "id": "toolu_a", "name": "echo", "input": {"text": "1"}},
                {"type": "tool_use", "id": "toolu_b", "name": "echo", "input": {"text": "2"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "1", "is_error": false},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "boom: no such file", "is_error": true},
                {"type": "text", "text": "actually, stop after this",
                 "cache_control": {"type": "ephemeral"}}
            ]}
        ])
    );
}

#[tokio::test]
async fn the_agent_loop_runs_a_tool_round_trip_over_http() {
    let server = FakeLlm::start(vec![
        Scripted::sse(reply(
            vec![tool_block(
                0,
                "toolu_echo",
                "echo",
                &[r#"{"text":"#, r#""ping"}"#],
            )],
            "tool_use",
        )),
        Scripted::sse(text_reply(&["The tool said ", "ping."])),
    ])
    .await;
    let agent = Agent::new(Arc::new(anthropic(&server)), "claude-sonnet-4-5");
    agent.set_system_prompt("Use tools.");
    agent.set_tools(vec![echo_tool()]);
    let mut rx = agent.subscribe(None);
    agent.prompt("echo ping").unwrap();
    let events = until_agent_end(&mut rx).await;

    let AgentEvent::AgentEnd { messages } = events.last().unwrap() else {
        unreachable!()
    };
    let Message::Assistant(last) = messages.last().unwrap() else {
        panic!("last message is not the answer: {messages:?}")
    };
    assert_eq!(last.text(), "The tool said ping.");
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::ToolExecutionEnd { tool_call_id, result, .. } if tool_call_id == "toolu_echo" && result.content == "ping")));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body["system"][0]["text"], "Use tools.");
    assert_eq!(
        requests[1].body["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "text", "text": "echo ping", "cache_control": {"type": "ephemeral"}}
            ]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_echo", "name": "echo", "input": {"text": "ping"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_echo", "content": "ping", "is_error": false,
                 "cache_control": {"type": "ephemeral"}}
            ]}
        ])
    );
    let _: Value = requests[1].body["tools"][0]["input_schema"].clone();
}
