//! A complete answer where a stream was asked for: some gateways (LiteLLM's mock path,
//! proxies that buffer) answer `"stream": true` with one JSON body. Rather than refuse
//! it, the body is turned into the events a stream would have carried, and decoded by
//! the same decoder, so the message, its tool calls and its usage come out alike.

use crate::sse::Event;
use serde_json::{Map, Value, json};

fn event(name: &str, data: &Value) -> Event {
    Event {
        event: name.to_owned(),
        data: data.to_string(),
    }
}

/// A chat completion (`"object": "chat.completion"`, or any body with `choices` holding
/// a `message`) as one chunk of deltas, then `[DONE]`.
pub(crate) fn chat_completion(body: &str) -> Option<Vec<Event>> {
    let mut whole: Map<String, Value> = serde_json::from_str(body).ok()?;
    let Value::Array(choices) = whole.remove("choices")? else {
        return None;
    };
    let mut deltas = Vec::new();
    for choice in choices {
        let Value::Object(mut choice) = choice else {
            return None;
        };
        let mut message = choice.remove("message")?;
        // A stream's tool call deltas carry their place in the list.
        if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for (index, call) in calls.iter_mut().enumerate() {
                call.as_object_mut()?.insert("index".into(), json!(index));
            }
        }
        choice.insert("delta".into(), message);
        deltas.push(Value::Object(choice));
    }
    whole.insert("choices".into(), Value::Array(deltas));
    whole.insert("object".into(), json!("chat.completion.chunk"));
    let done = Event {
        event: "message".into(),
        data: "[DONE]".into(),
    };
    Some(vec![event("message", &Value::Object(whole)), done])
}

/// An Anthropic message (`"type": "message"`) as `message_start`, each content block's
/// start, delta and stop, `message_delta` with the stop reason and usage, then
/// `message_stop`.
pub(crate) fn anthropic_message(body: &str) -> Option<Vec<Event>> {
    let mut message: Map<String, Value> = serde_json::from_str(body).ok()?;
    if message.get("type")? != "message" {
        return None;
    }
    let content = message.remove("content")?;
    let usage = message.get("usage").cloned().unwrap_or(json!({}));
    let stop_reason = message.remove("stop_reason").unwrap_or(Value::Null);
    let stop_sequence = message.remove("stop_sequence").unwrap_or(Value::Null);
    message.insert("content".into(), json!([]));
    let mut events = vec![event(
        "message_start",
        &json!({"type": "message_start", "message": message}),
    )];
    for (index, block) in content.as_array()?.iter().enumerate() {
        let (start, delta) = block_events(block)?;
        events.push(event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in delta {
            events.push(event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push(event(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
            "usage": {"output_tokens": usage.get("output_tokens").cloned().unwrap_or(json!(0))},
        }),
    ));
    events.push(event("message_stop", &json!({"type": "message_stop"})));
    Some(events)
}

/// A content block's start (emptied) and the deltas that fill it again.
fn block_events(block: &Value) -> Option<(Value, Vec<Value>)> {
    let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
    Some(match block.get("type")?.as_str()? {
        "text" => (
            json!({"type": "text", "text": ""}),
            vec![json!({"type": "text_delta", "text": text("text")})],
        ),
        "thinking" => (
            json!({"type": "thinking", "thinking": ""}),
            vec![
                json!({"type": "thinking_delta", "thinking": text("thinking")}),
                json!({"type": "signature_delta", "signature": text("signature")}),
            ],
        ),
        "tool_use" => {
            let input = block.get("input").cloned().unwrap_or(json!({}));
            let mut start = block.clone();
            start.as_object_mut()?.insert("input".into(), json!({}));
            (
                start,
                vec![json!({"type": "input_json_delta", "partial_json": input.to_string()})],
            )
        }
        // Anything else (redacted thinking, a server tool's block) starts whole.
        _ => (block.clone(), Vec::new()),
    })
}
