//! A long conversation, for the tests of request bodies written while they are sent.

use super::drive::request;
use claw_tui::agent::convert::{default_convert_to_llm, sanitize_for_llm};
use claw_tui::agent::{
    AssistantMessage, Block, History, Message, StopReason, ThinkingLevel, ToolResultMessage,
    UserMessage,
};
use claw_tui::llm::{LlmRequest, SharedRequest};
use serde_json::{Value, json};
use std::sync::Arc;

/// A history of `turns` turns (a question, a tool call, its result of about 4 KB, an
/// answer): about 5 KB a turn, with text that JSON escapes.
pub fn long_history(turns: usize) -> History {
    let mut messages = Vec::new();
    for turn in 0..turns {
        messages.push(user(turn, format!("Turn {turn}: what does \"merge\" do?")));
        let mut call = AssistantMessage::empty("m");
        call.stop_reason = StopReason::ToolUse;
        call.content = vec![Block::ToolCall {
            id: format!("call_{turn}"),
            name: "read_file".into(),
            args: json!({"path": format!("src/file_{turn}.rs")}),
        }];
        messages.push(Message::Assistant(call));
        messages.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: format!("call_{turn}"),
            tool_name: "read_file".into(),
            content: format!("fn merge_{turn}() {{\n\t\"ranges\"\n}}\n").repeat(150),
            images: Vec::new(),
            details: Value::Null,
            is_error: false,
            timestamp: turn as u64,
        }));
        let mut answer = AssistantMessage::empty("m");
        answer.content = vec![Block::Text {
            text: format!("Turn {turn}: it sorts the ranges, then merges them — ünïcode too."),
        }];
        answer.stop_reason = StopReason::Stop;
        messages.push(Message::Assistant(answer));
    }
    messages.push(user(turns, "and now?".into()));
    History::from(messages)
}

/// A user message of `turn`, its time fixed (the prompt-cache key hashes the first).
fn user(turn: usize, content: String) -> Message {
    Message::User(UserMessage {
        content,
        images: Vec::new(),
        timestamp: turn as u64,
    })
}

/// The request the agent would make of `history`.
pub fn request_of(history: &History) -> LlmRequest<'_> {
    LlmRequest {
        system_prompt: "You are terse.".into(),
        messages: sanitize_for_llm(default_convert_to_llm(history)),
        tools: request("m", "x").tools,
        model: "claude-sonnet-4-5".into(),
        thinking: ThinkingLevel::Off,
    }
}

/// A shared request over `history`.
pub fn shared(history: &Arc<History>) -> Arc<SharedRequest> {
    Arc::new(SharedRequest::new(history.clone(), request_of))
}
