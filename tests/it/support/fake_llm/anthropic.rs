//! Anthropic Messages API event streams.

use serde_json::{Value, json};

/// One event: `event: NAME\ndata: JSON\n\n`.
pub fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

pub fn message_start(model: &str, input: u64, cache_read: u64, cache_write: u64) -> String {
    event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_01", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": 1,
                      "cache_read_input_tokens": cache_read,
                      "cache_creation_input_tokens": cache_write}}}),
    )
}

pub fn ping() -> String {
    event("ping", json!({"type": "ping"}))
}

pub fn block_start(index: usize, block: Value) -> String {
    event(
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

pub fn delta(index: usize, delta: Value) -> String {
    event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

pub fn block_stop(index: usize) -> String {
    event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    )
}

/// A whole text block streamed as `parts`.
pub fn text_block(index: usize, parts: &[&str]) -> Vec<String> {
    let mut out = vec![block_start(index, json!({"type": "text", "text": ""}))];
    out.extend(
        parts
            .iter()
            .map(|p| delta(index, json!({"type": "text_delta", "text": p}))),
    );
    out.push(block_stop(index));
    out
}

/// A thinking block streamed as `parts`, then its signature.
pub fn thinking_block(index: usize, parts: &[&str], signature: &str) -> Vec<String> {
    let mut out = vec![block_start(
        index,
        json!({"type": "thinking", "thinking": ""}),
    )];
    out.extend(
        parts
            .iter()
            .map(|p| delta(index, json!({"type": "thinking_delta", "thinking": p}))),
    );
    out.push(delta(
        index,
        json!({"type": "signature_delta", "signature": signature}),
    ));
    out.push(block_stop(index));
    out
}

/// A tool_use block whose input JSON arrives as `fragments`.
pub fn tool_block(index: usize, id: &str, name: &str, fragments: &[&str]) -> Vec<String> {
    let mut out = vec![block_start(
        index,
        json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
    )];
    out.extend(fragments.iter().map(|f| {
        delta(
            index,
            json!({"type": "input_json_delta", "partial_json": f}),
        )
    }));
    out.push(block_stop(index));
    out
}

pub fn message_delta(stop_reason: &str, output: u64) -> String {
    event(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": output}}),
    )
}

pub fn message_stop() -> String {
    event("message_stop", json!({"type": "message_stop"}))
}

pub fn error(kind: &str, message: &str) -> String {
    event(
        "error",
        json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}

/// A complete reply: message_start, `blocks`, message_delta, message_stop.
pub fn reply(blocks: Vec<Vec<String>>, stop_reason: &str) -> Vec<String> {
    let mut out = vec![message_start("claude-sonnet-4-5", 100, 0, 0), ping()];
    out.extend(blocks.into_iter().flatten());
    out.push(message_delta(stop_reason, 20));
    out.push(message_stop());
    out
}

/// A complete text reply.
pub fn text_reply(parts: &[&str]) -> Vec<String> {
    reply(vec![text_block(0, parts)], "end_turn")
}

/// A text reply "ok" (10 output tokens) whose usage reports `input` uncached tokens and
/// the given cache reads and writes.
pub fn cached_reply(model: &str, input: u64, cache_read: u64, cache_write: u64) -> Vec<String> {
    let mut events = vec![message_start(model, input, cache_read, cache_write)];
    events.extend(text_block(0, &["ok"]));
    events.push(message_delta("end_turn", 10));
    events.push(message_stop());
    events
}

/// [`cached_reply`] from `claude-sonnet-4-5` as one streamed response.
pub fn sonnet_cached_reply(input: u64, cache_read: u64, cache_write: u64) -> super::Scripted {
    super::Scripted::sse(cached_reply(
        "claude-sonnet-4-5",
        input,
        cache_read,
        cache_write,
    ))
}
