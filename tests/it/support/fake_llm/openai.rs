//! OpenAI Chat Completions chunk streams.

use serde_json::{Value, json};

/// `data: JSON\n\n`.
pub fn data(value: Value) -> String {
    format!("data: {value}\n\n")
}

/// A chunk with one choice carrying `delta` and `finish_reason`.
pub fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    data(json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    }))
}

pub fn text(content: &str) -> String {
    chunk(json!({"content": content}), None)
}

pub fn reasoning(field: &str, text: &str) -> String {
    chunk(json!({ field: text }), None)
}

/// A tool-call fragment; `None` fields are left out as servers do.
pub fn tool(index: Option<usize>, id: Option<&str>, name: Option<&str>, args: &str) -> String {
    let mut call = serde_json::Map::new();
    if let Some(index) = index {
        call.insert("index".into(), json!(index));
    }
    if let Some(id) = id {
        call.insert("id".into(), json!(id));
        call.insert("type".into(), json!("function"));
    }
    let mut function = serde_json::Map::new();
    if let Some(name) = name {
        function.insert("name".into(), json!(name));
    }
    function.insert("arguments".into(), json!(args));
    call.insert("function".into(), Value::Object(function));
    chunk(json!({"tool_calls": [Value::Object(call)]}), None)
}

pub fn finish(reason: &str) -> String {
    chunk(json!({}), Some(reason))
}

pub fn usage(prompt: u64, completion: u64, cached: u64) -> String {
    data(json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
        "model": "gpt-4o-2024-08-06", "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": cached}}
    }))
}

pub fn done_marker() -> String {
    "data: [DONE]\n\n".to_owned()
}

/// A complete text reply with usage.
pub fn text_reply(parts: &[&str]) -> Vec<String> {
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    out.extend(parts.iter().map(|p| text(p)));
    out.push(finish("stop"));
    out.push(usage(50, 10, 0));
    out.push(done_marker());
    out
}
