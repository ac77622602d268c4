//! The Responses API request body: `instructions`, the conversation as input items
//! (messages with `input_text`/`input_image` parts, `function_call`,
//! `function_call_output`, replayed `reasoning`), tools as functions, and reasoning.

use super::ResponsesConfig;
#[cfg(test)]
use crate::body;
use crate::body::{BodyPlan, ListWriter};
use crate::images::data_url;
use crate::{LlmMessage, LlmRequest};
use claw_agent::ImageData;
use claw_agent::types::{AssistantMessage, Block, ThinkingLevel, ThinkingSignature, UserMessage};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// `reasoning.effort` of a thinking level (`None` when off: the field is left out, as
/// models without reasoning refuse it).
fn effort(level: ThinkingLevel) -> Option<&'static str> {
    match level {
        ThinkingLevel::Off => None,
        ThinkingLevel::Minimal => Some("minimal"),
        ThinkingLevel::Low => Some("low"),
        ThinkingLevel::Medium => Some("medium"),
        ThinkingLevel::High | ThinkingLevel::Xhigh => Some("high"),
    }
}

/// The request body for `request`, as the bytes sent; `cache_key` becomes
/// `prompt_cache_key`.
pub(crate) fn body(
    request: &LlmRequest,
    config: &ResponsesConfig,
    cache_key: Option<&str>,
) -> Result<Vec<u8>, serde_json::Error> {
    plan(request, config, cache_key).to_vec(|items| list(request, items))
}

/// The body's fields for `request`, all but the conversation ([`list`]).
pub(crate) fn plan(
    request: &LlmRequest,
    config: &ResponsesConfig,
    cache_key: Option<&str>,
) -> BodyPlan {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    if !request.system_prompt.is_empty() {
        body.insert("instructions".into(), json!(request.system_prompt));
    }
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.parameters, "strict": false})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        body.insert("tool_choice".into(), json!("auto"));
        body.insert("parallel_tool_calls".into(), json!(true));
    }
    if let Some(effort) = effort(request.thinking) {
        body.insert(
            "reasoning".into(),
            json!({"effort": effort, "summary": "auto"}),
        );
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if let Some(limit) = config.max_tokens {
        body.insert("max_output_tokens".into(), json!(limit));
    }
    body.insert("store".into(), json!(false));
    body.insert("stream".into(), json!(true));
    if let Some(key) = cache_key {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    BodyPlan::new(body, "input")
}

/// The conversation of `request` as input items, written one by one.
pub(crate) fn list(request: &LlmRequest, items: &mut ListWriter<'_>) {
    input(&request.messages, items);
}

/// The conversation as input items. Images of tool results follow the run of
/// `function_call_output` items as a user message.
fn input(history: &[LlmMessage], items: &mut ListWriter<'_>) {
    let mut tool_images: Vec<&ImageData> = Vec::new();
    for message in history {
        if !matches!(message, LlmMessage::ToolResult(_)) {
            flush_tool_images(&mut tool_images, items);
        }
        match message {
            LlmMessage::User(user) if user.images.is_empty() && !user.content.trim().is_empty() => {
                items.write(&TextItem {
                    content: [TextPart {
                        text: &user.content,
                        kind: "input_text",
                    }],
                    role: "user",
                    kind: "message",
                });
            }
            LlmMessage::User(user) => {
                if let Some(item) = user_item(user) {
                    items.push(item);
                }
            }
            LlmMessage::Assistant(assistant) => assistant_items(assistant, items),
            LlmMessage::ToolResult(result) => {
                items.write(&CallOutput {
                    call_id: &result.tool_call_id,
                    output: &result.content,
                    kind: "function_call_output",
                });
                tool_images.extend(&result.images);
            }
        }
    }
    flush_tool_images(&mut tool_images, items);
}

/// Items written from the history's own strings rather than copies; the fields are in
/// the order a JSON map writes them, so the bytes are those of the same item as a value.
#[derive(Serialize)]
struct CallOutput<'a> {
    call_id: &'a str,
    output: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// A message item of one text part.
#[derive(Serialize)]
struct TextItem<'a> {
    content: [TextPart<'a>; 1],
    role: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// A text part of a message item.
#[derive(Serialize)]
struct TextPart<'a> {
    text: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

fn user_item(user: &UserMessage) -> Option<Value> {
    let mut content = Vec::with_capacity(user.images.len() + 1);
    if !user.content.trim().is_empty() {
        content.push(json!({"type": "input_text", "text": user.content}));
    }
    content.extend(user.images.iter().map(image_part));
    (!content.is_empty()).then(|| json!({"type": "message", "role": "user", "content": content}))
}

fn image_part(image: &ImageData) -> Value {
    json!({"type": "input_image", "image_url": data_url(image), "detail": "auto"})
}

fn flush_tool_images(images: &mut Vec<&ImageData>, items: &mut ListWriter<'_>) {
    if images.is_empty() {
        return;
    }
    let names: Vec<&str> = images.iter().map(|i| i.name.as_str()).collect();
    let mut content = vec![json!({"type": "input_text", "text": format!(
        "The images the tool results above returned: {}", names.join(", ")
    )})];
    content.extend(images.drain(..).map(image_part));
    items.push(json!({"type": "message", "role": "user", "content": content}));
}

/// An earlier answer, block by block in its order: reasoning items replayed as they
/// came (without their ids, which point at nothing when responses are not stored), text
/// as assistant messages, tool calls as `function_call` items. Reasoning from other
/// formats (Anthropic signatures, unsigned thinking) cannot be replayed and is left out.
fn assistant_items(message: &AssistantMessage, items: &mut ListWriter<'_>) {
    for block in &message.content {
        match block {
            Block::Thinking {
                signature: Some(ThinkingSignature::ResponsesReasoning(item)),
                ..
            } => {
                if let Some(item) = replayable_reasoning(item.clone()) {
                    items.push(item);
                }
            }
            Block::Thinking { .. } => {}
            Block::Text { text } if text.is_empty() => {}
            Block::Text { text } => items.write(&TextItem {
                content: [TextPart {
                    text,
                    kind: "output_text",
                }],
                role: "assistant",
                kind: "message",
            }),
            Block::ToolCall { id, name, args } => {
                let arguments = if args.is_null() {
                    "{}".to_owned()
                } else {
                    args.to_string()
                };
                items.push(json!({"type": "function_call", "call_id": id, "name": name,
                                  "arguments": arguments}));
            }
        }
    }
}

/// A stored reasoning item as input: its `id` and `status` removed (they refer to a
/// stored response), and raw `content` too (only the summary and the encrypted content
/// are accepted back). An item without encrypted content (the model reasoned while
/// thinking was off, so it was not asked for) names nothing the server still has, and
/// is left out rather than refused.
fn replayable_reasoning(mut item: Map<String, Value>) -> Option<Value> {
    if item.get("type").and_then(Value::as_str) != Some("reasoning") {
        return None;
    }
    let encrypted = item.get("encrypted_content").and_then(Value::as_str);
    if encrypted.is_none_or(str::is_empty) {
        return None;
    }
    item.remove("id");
    item.remove("status");
    item.remove("content");
    item.entry("summary").or_insert_with(|| json!([]));
    Some(Value::Object(item))
}

#[cfg(test)]
mod tests {
    use super::*;
    use claw_agent::types::{StopReason, ToolResultMessage};

    /// The map inside a JSON object.
    fn reasoning(item: Value) -> Map<String, Value> {
        let Value::Object(item) = item else {
            panic!("not an object: {item}")
        };
        item
    }

    /// The input items `input` writes for `history`.
    fn items_of(history: &[LlmMessage]) -> Vec<Value> {
        let bytes = body::write(Map::new(), "input", |items| input(history, items)).unwrap();
        let written: Value = serde_json::from_slice(&bytes).unwrap();
        written["input"].as_array().unwrap().clone()
    }

    #[test]
    fn reasoning_is_replayed_without_its_id_and_foreign_or_unencrypted_thinking_is_not() {
        let item = reasoning(
            json!({"id": "rs_1", "type": "reasoning", "status": "completed",
                          "summary": [{"type": "summary_text", "text": "Plan"}],
                          "encrypted_content": "gAAA"}),
        );
        let mut answer = AssistantMessage::empty("gpt-5");
        answer.stop_reason = StopReason::ToolUse;
        answer.content = vec![
            Block::Thinking {
                thinking: "Plan".into(),
                signature: Some(ThinkingSignature::ResponsesReasoning(item)),
            },
            Block::Thinking {
                thinking: "anthropic".into(),
                signature: Some(ThinkingSignature::Anthropic("c2ln".into())),
            },
            Block::Thinking {
                thinking: "reasoned with thinking off".into(),
                signature: Some(ThinkingSignature::ResponsesReasoning(reasoning(
                    json!({"id": "rs_0", "type": "reasoning", "summary": []}),
                ))),
            },
            Block::ToolCall {
                id: "call_1".into(),
                name: "ls".into(),
                args: json!({"path": "."}),
            },
        ];
        let history = vec![
            LlmMessage::from(UserMessage::new("list")),
            LlmMessage::from(answer),
            LlmMessage::from(ToolResultMessage {
                tool_call_id: "call_1".into(),
                tool_name: "ls".into(),
                content: "a.txt".into(),
                images: Vec::new(),
                details: Value::Null,
                is_error: false,
                timestamp: 0,
            }),
        ];
        let bytes = body::write(Map::new(), "input", |items| input(&history, items)).unwrap();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            serde_json::to_vec(&value).unwrap(),
            bytes,
            "as one JSON value"
        );
        assert_eq!(
            items_of(&history),
            vec![
                json!({"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "list"}]}),
                json!({"type": "reasoning", "encrypted_content": "gAAA",
                       "summary": [{"type": "summary_text", "text": "Plan"}]}),
                json!({"type": "function_call", "call_id": "call_1", "name": "ls",
                       "arguments": "{\"path\":\".\"}"}),
                json!({"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}),
            ]
        );
    }
}
