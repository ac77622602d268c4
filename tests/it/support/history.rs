//! Building histories by hand and describing what a request sent, for the tests of
//! continuing a run and of what of the history reaches the model.

use super::scripted::message;
use claw_tui::agent::{AssistantMessage, Block, StopReason, ToolResultMessage};
use claw_tui::llm::{LlmMessage, LlmRequest};
use serde_json::json;

/// An assistant message with `content` that stopped for `stop_reason`.
pub fn assistant(content: Vec<Block>, stop_reason: StopReason) -> AssistantMessage {
    message(content, stop_reason)
}

/// A call `id` of tool `name` whose argument `text` is the id.
pub fn call(id: &str, name: &str) -> Block {
    Block::ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        args: json!({"text": id}),
    }
}

/// A successful `echo` result of call `id` saying `content`.
pub fn result(id: &str, content: &str) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: id.to_owned(),
        tool_name: "echo".to_owned(),
        content: content.to_owned(),
        images: Vec::new(),
        details: serde_json::Value::Null,
        is_error: false,
        timestamp: 0,
    }
}

/// A compact, timestamp-free description of a model message, for comparing requests.
pub fn describe(message: &LlmMessage) -> String {
    match message {
        LlmMessage::User(u) => format!("user:{}", u.content),
        LlmMessage::Assistant(a) => {
            let calls: Vec<String> = a.tool_calls().into_iter().map(|c| c.id).collect();
            format!("assistant:{}{:?}:{:?}", a.text(), calls, a.stop_reason)
        }
        LlmMessage::ToolResult(r) => format!(
            "result:{}:{}{}",
            r.tool_call_id,
            r.content,
            if r.is_error { ":error" } else { "" }
        ),
    }
}

/// [`describe`] of every message `request` sent, in order.
pub fn describe_request(request: &LlmRequest) -> Vec<String> {
    request.messages.iter().map(describe).collect()
}
