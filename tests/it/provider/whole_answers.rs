//! A complete JSON answer to a `"stream": true` request (LiteLLM's mock path, gateways
//! that buffer) is taken as the answer it is: text, tool calls, stop reason and usage,
//! in the chat completions and the Anthropic formats. JSON that is no answer is still
//! refused with what it said.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::{FakeLlm, Scripted};
use claw_tui::agent::StopReason;
use claw_tui::llm::Provider;
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_whole_chat_completion_is_the_answer_with_its_tool_call_and_usage() {
    let server = FakeLlm::start(vec![Scripted::json(
        200,
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "proxy-model",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Reading it.",
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}]
            }}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
        }),
    )])
    .await;
    let events = collect(openai(&server).stream(request("m", "x"), CancellationToken::new())).await;
    let message = done(&events);
    assert_eq!(message.text(), "Reading it.");
    let calls = message.tool_calls();
    assert_eq!(calls.len(), 1, "{message:?}");
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_1", "read_file")
    );
    assert_eq!(calls[0].args, json!({"path": "a.txt"}));
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!((message.usage.input, message.usage.output), (12, 7));
    assert_eq!(server.requests().len(), 1, "taken at once, not retried");
}

#[tokio::test]
async fn a_whole_anthropic_message_is_the_answer_with_its_tool_use_and_usage() {
    let server = FakeLlm::start(vec![Scripted::json(
        200,
        json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-proxy",
            "content": [
                {"type": "text", "text": "Listing."},
                {"type": "tool_use", "id": "toolu_1", "name": "list_dir", "input": {"path": "."}}
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 20, "output_tokens": 9}
        }),
    )])
    .await;
    let events =
        collect(anthropic(&server).stream(request("claude-proxy", "x"), CancellationToken::new()))
            .await;
    let message = done(&events);
    assert_eq!(message.text(), "Listing.");
    let calls = message.tool_calls();
    assert_eq!(calls.len(), 1, "{message:?}");
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("toolu_1", "list_dir")
    );
    assert_eq!(calls[0].args, json!({"path": "."}));
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!((message.usage.input, message.usage.output), (20, 9));
}

#[tokio::test]
async fn json_that_is_no_answer_is_still_refused_with_what_it_said() {
    let server = FakeLlm::start(vec![Scripted::json(
        200,
        json!({"status": "queued", "ticket": 7}),
    )])
    .await;
    let events = collect(openai(&server).stream(request("m", "x"), CancellationToken::new())).await;
    let (_, error) = failed(&events);
    assert!(error.contains("ticket"), "{error}");
}
