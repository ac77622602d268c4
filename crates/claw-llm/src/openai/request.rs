//! The Chat Completions request body: messages, images as `image_url` data URLs (after
//! the tool results they came with, since tool messages carry text only), tools, and the
//! compat-dependent fields.

use super::{MaxTokensField, OpenAiConfig, SystemRole};
use crate::body::{BodyPlan, ListWriter};
use crate::images::data_url;
use crate::{LlmMessage, LlmRequest};
use claw_agent::ImageData;
use claw_agent::types::{AssistantMessage, ThinkingLevel, UserMessage};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// `reasoning_effort` of a thinking level (`None` when off).
fn reasoning_effort(level: ThinkingLevel) -> Option<&'static str> {
    match level {
        ThinkingLevel::Off => None,
        ThinkingLevel::Minimal | ThinkingLevel::Low => Some("low"),
        ThinkingLevel::Medium => Some("medium"),
        ThinkingLevel::High | ThinkingLevel::Xhigh => Some("high"),
    }
}

/// The request body for `request` under `config`'s compat settings, as the bytes sent;
/// `cache_key` is sent as `prompt_cache_key` where the server takes it.
pub(crate) fn body(
    request: &LlmRequest,
    config: &OpenAiConfig,
    cache_key: Option<&str>,
) -> Result<Vec<u8>, serde_json::Error> {
    plan(request, config, cache_key).to_vec(|messages| list(request, config, messages))
}

/// The body's fields for `request`, all but the conversation ([`list`]).
pub(crate) fn plan(
    request: &LlmRequest,
    config: &OpenAiConfig,
    cache_key: Option<&str>,
) -> BodyPlan {
    let compat = &config.compat;
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("stream".into(), json!(true));
    if compat.stream_options {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if let Some(limit) = config.max_tokens {
        let field = match compat.max_tokens_field {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        };
        body.insert(field.into(), json!(limit));
    }
    if compat.reasoning_effort
        && let Some(effort) = reasoning_effort(request.thinking)
    {
        body.insert("reasoning_effort".into(), json!(effort));
    }
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if compat.prompt_cache_key
        && let Some(key) = cache_key
    {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    BodyPlan::new(body, "messages")
}

/// The conversation of `request`, system prompt first, written message by message.
pub(crate) fn list(request: &LlmRequest, config: &OpenAiConfig, messages: &mut ListWriter<'_>) {
    conversation(request, &config.compat, messages);
}

/// The conversation as Chat Completions messages, system prompt first.
fn conversation(request: &LlmRequest, compat: &super::OpenAiCompat, messages: &mut ListWriter<'_>) {
    if !request.system_prompt.is_empty() {
        let role = match compat.system_role {
            SystemRole::System => "system",
            SystemRole::Developer => "developer",
        };
        messages.push(json!({"role": role, "content": request.system_prompt}));
    }
    // Images of the tool results since the last other message: they follow the run of
    // tool messages as one user message.
    let mut tool_images: Vec<&ImageData> = Vec::new();
    for message in &request.messages {
        if !matches!(message, LlmMessage::ToolResult(_)) {
            flush_tool_images(&mut tool_images, messages);
        }
        match message {
            LlmMessage::User(user) if user.images.is_empty() => messages.write(&TextMessage {
                content: &user.content,
                role: "user",
                tool_call_id: None,
            }),
            LlmMessage::User(user) => messages.push(user_message(user)),
            LlmMessage::Assistant(assistant) => {
                if let Some(m) = assistant_message(assistant) {
                    messages.push(m);
                }
            }
            LlmMessage::ToolResult(result) => {
                messages.write(&TextMessage {
                    content: &result.content,
                    role: "tool",
                    tool_call_id: Some(&result.tool_call_id),
                });
                tool_images.extend(&result.images);
            }
        }
    }
    flush_tool_images(&mut tool_images, messages);
}

/// A message whose content is plain text (a user's without images, a tool's), written
/// from the history's own strings rather than copies. The fields are in the order a
/// JSON map writes them, so the bytes are those of the same message built as a value.
#[derive(Serialize)]
struct TextMessage<'a> {
    content: &'a str,
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

/// A user message with images attached: its text and the images as parts.
fn user_message(user: &UserMessage) -> Value {
    let mut parts = vec![json!({"type": "text", "text": user.content})];
    parts.extend(user.images.iter().map(image_part));
    json!({"role": "user", "content": parts})
}

fn image_part(image: &ImageData) -> Value {
    json!({"type": "image_url", "image_url": {"url": data_url(image)}})
}

/// The images of the tool results just sent, as a user message after them.
fn flush_tool_images(images: &mut Vec<&ImageData>, messages: &mut ListWriter<'_>) {
    if images.is_empty() {
        return;
    }
    let names: Vec<&str> = images.iter().map(|i| i.name.as_str()).collect();
    let mut parts = vec![json!({"type": "text", "text": format!(
        "The images the tool results above returned: {}", names.join(", ")
    )})];
    parts.extend(images.drain(..).map(image_part));
    messages.push(json!({"role": "user", "content": parts}));
}

/// An earlier answer: its text and tool calls (reasoning is not sent back: Chat
/// Completions has no field for it). `None` when nothing is left to send.
fn assistant_message(message: &AssistantMessage) -> Option<Value> {
    let text = message.text();
    let calls: Vec<Value> = message
        .tool_calls()
        .into_iter()
        .map(|call| {
            let arguments = if call.args.is_null() {
                "{}".to_owned()
            } else {
                call.args.to_string()
            };
            json!({"id": call.id, "type": "function",
                   "function": {"name": call.name, "arguments": arguments}})
        })
        .collect();
    if text.is_empty() && calls.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    out.insert(
        "content".into(),
        if text.is_empty() {
            Value::Null
        } else {
            json!(text)
        },
    );
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::OpenAiCompat;
    use claw_agent::tool::ToolDefinition;
    use claw_agent::types::{Block, ToolResultMessage, UserMessage};

    fn sent_body(request: &LlmRequest, config: &OpenAiConfig, cache_key: Option<&str>) -> Value {
        serde_json::from_slice(&super::body(request, config, cache_key).unwrap()).unwrap()
    }

    fn request(thinking: ThinkingLevel) -> LlmRequest<'static> {
        let mut call = AssistantMessage::empty("m");
        call.content = vec![
            Block::Thinking {
                thinking: "hidden".into(),
                signature: None,
            },
            Block::ToolCall {
                id: "call_1".into(),
                name: "ls".into(),
                args: json!({"path": "."}),
            },
        ];
        LlmRequest {
            system_prompt: "be brief".into(),
            messages: vec![
                LlmMessage::from(UserMessage::new("list")),
                LlmMessage::from(call),
                LlmMessage::from(ToolResultMessage {
                    tool_call_id: "call_1".into(),
                    tool_name: "ls".into(),
                    content: "a.txt".into(),
                    images: Vec::new(),
                    details: Value::Null,
                    is_error: false,
                    timestamp: 0,
                }),
                LlmMessage::from(UserMessage::new("and hidden files?")),
            ],
            tools: vec![ToolDefinition {
                name: "ls".into(),
                description: "list".into(),
                parameters: json!({"type": "object"}),
            }],
            model: "m".into(),
            thinking,
        }
    }

    #[test]
    fn the_bytes_are_those_of_the_body_as_one_json_value() {
        let config = OpenAiConfig::compatible("Ollama", "http://x/v1");
        let bytes = super::body(&request(ThinkingLevel::High), &config, None).unwrap();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            String::from_utf8(serde_json::to_vec(&value).unwrap()).unwrap(),
            String::from_utf8(bytes).unwrap()
        );
    }

    #[test]
    fn generic_compat_body() {
        let mut config = OpenAiConfig::compatible("Ollama", "http://x/v1");
        config.max_tokens = Some(100);
        let body = sent_body(&request(ThinkingLevel::High), &config, Some("k"));
        assert!(body.get("prompt_cache_key").is_none());
        assert_eq!(body["max_tokens"], 100);
        assert!(body.get("reasoning_effort").is_none());
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "list"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "ls", "arguments": "{\"path\":\".\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
                {"role": "user", "content": "and hidden files?"}
            ])
        );
        assert_eq!(body["tools"][0]["function"]["name"], "ls");
    }

    #[test]
    fn openai_compat_body() {
        let mut config = OpenAiConfig::openai();
        config.max_tokens = Some(100);
        config.compat = OpenAiCompat {
            stream_options: false,
            ..OpenAiCompat::openai()
        };
        let body = sent_body(&request(ThinkingLevel::Minimal), &config, Some("k"));
        assert_eq!(body["prompt_cache_key"], "k");
        assert_eq!(body["max_completion_tokens"], 100);
        assert!(body.get("max_tokens").is_none());
        assert!(body.get("stream_options").is_none());
        assert_eq!(body["reasoning_effort"], "low");
        assert_eq!(body["messages"][0]["role"], "developer");
        let off = sent_body(&request(ThinkingLevel::Off), &config, None);
        assert!(off.get("reasoning_effort").is_none());
    }
}
