//! The Messages API request body: system prompt, merged user turns, images, tool
//! results, replayed thinking, tools, the thinking budget and the cache breakpoints.

use super::AnthropicConfig;
#[cfg(test)]
use crate::body;
use crate::body::{BodyPlan, ListWriter};
use crate::images;
use crate::{LlmMessage, LlmRequest};
use claw_agent::ImageData;
use claw_agent::types::{
    AssistantMessage, Block, ThinkingLevel, ThinkingSignature, ToolResultMessage, UserMessage,
};
use serde_json::{Map, Value, json};
use std::collections::VecDeque;

/// The thinking budget of a level (`None` when off); the API's minimum is 1,024.
pub fn thinking_budget(level: ThinkingLevel) -> Option<u32> {
    match level {
        ThinkingLevel::Off => None,
        ThinkingLevel::Minimal => Some(1_024),
        ThinkingLevel::Low => Some(2_048),
        ThinkingLevel::Medium => Some(8_192),
        ThinkingLevel::High => Some(16_384),
        ThinkingLevel::Xhigh => Some(32_000),
    }
}

/// The output-token ceiling of a Claude model: 32,000 for Opus 4 and 4.1, 8,192 for
/// Claude 3.5 Haiku, 64,000 for the other 4.x models and Claude 3.7 Sonnet, else 32,000.
pub fn output_limit(model: &str) -> u32 {
    let name = model.rsplit('/').next().unwrap_or(model).replace('.', "-");
    if name.starts_with("claude-opus-4") && !name.starts_with("claude-opus-4-5") {
        32_000
    } else if name.starts_with("claude-3-5-haiku") {
        8_192
    } else if name.starts_with("claude-sonnet-4")
        || name.starts_with("claude-haiku-4")
        || name.starts_with("claude-opus-4-5")
        || name.starts_with("claude-3-7-sonnet")
    {
        64_000
    } else {
        32_000
    }
}

/// `max_tokens` and the thinking budget: the budget comes on top of the answer's tokens,
/// both within `limit`, and `max_tokens` always exceeds the budget as the API requires.
pub(crate) fn plan_tokens(max_tokens: u32, limit: u32, level: ThinkingLevel) -> (u32, Option<u32>) {
    let limit = limit.max(2_048);
    let Some(budget) = thinking_budget(level) else {
        return (max_tokens.clamp(1, limit), None);
    };
    let total = max_tokens.saturating_add(budget).min(limit);
    let budget = budget.min(total.saturating_sub(1_024)).max(1_024);
    (total.max(budget + 1), Some(budget))
}

/// The request body for `request`: with caching on, breakpoints go on the last tool,
/// the system prompt and the last block of each of the two newest user turns (four, the
/// API's limit). Each turn the newest breakpoint moves forward and the one before sits
/// where the previous request's newest was, so a request reads from the cache what the
/// one before wrote, and the earlier turns stay byte for byte the same.
pub(crate) fn body(
    request: &LlmRequest,
    config: &AnthropicConfig,
) -> Result<Vec<u8>, serde_json::Error> {
    plan(request, config).to_vec(|turns| list(request, config, turns))
}

/// The body's fields for `request`, all but the conversation ([`list`]).
pub(crate) fn plan(request: &LlmRequest, config: &AnthropicConfig) -> BodyPlan {
    let limit = config
        .output_limit
        .unwrap_or_else(|| output_limit(&request.model));
    let cache = config.remote.cache;
    let (max_tokens, budget) = plan_tokens(config.max_tokens, limit, request.thinking);
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if !request.system_prompt.is_empty() {
        let system = if cache {
            json!([{"type": "text", "text": request.system_prompt, "cache_control": ephemeral()}])
        } else {
            json!(request.system_prompt)
        };
        body.insert("system".into(), system);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        if cache && let Some(Value::Object(last)) = tools.last_mut() {
            last.insert("cache_control".into(), ephemeral());
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(budget) = budget {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    BodyPlan::new(body, "messages")
}

/// The conversation of `request`, written turn by turn to `turns`.
pub(crate) fn list(request: &LlmRequest, config: &AnthropicConfig, turns: &mut ListWriter<'_>) {
    messages(&request.messages, config.remote.cache, turns);
}

/// `{"type": "ephemeral"}`: the five-minute cache.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Puts a breakpoint on the last block of each of the `n` newest user turns.
fn mark_newest_user_turns(turns: &mut [Value], n: usize) {
    let user_turns = turns
        .iter_mut()
        .rev()
        .filter(|t| t["role"] == "user")
        .take(n);
    for turn in user_turns {
        if let Some(Value::Object(block)) =
            turn["content"].as_array_mut().and_then(|c| c.last_mut())
        {
            block.insert("cache_control".into(), ephemeral());
        }
    }
}

/// Turns held back while the conversation is written: turns alternate between the two
/// roles, so the two newest user turns, which get the breakpoints, are among the last
/// four.
const HELD_TURNS: usize = 4;

/// The conversation as alternating turns: consecutive user-side content (tool results,
/// then a steering or follow-up message) forms one user turn, tool results first. Each
/// turn is written once the next has begun; the newest are held back for the
/// breakpoints (`cache`).
fn messages(history: &[LlmMessage], cache: bool, out: &mut ListWriter<'_>) {
    let mut held: VecDeque<(&'static str, Vec<Value>)> = VecDeque::new();
    for message in history {
        let (role, blocks) = match message {
            LlmMessage::User(user) if user.content.trim().is_empty() && user.images.is_empty() => {
                continue;
            }
            LlmMessage::User(user) => ("user", user_blocks(user)),
            LlmMessage::Assistant(assistant) => ("assistant", assistant_blocks(assistant)),
            LlmMessage::ToolResult(result) => ("user", vec![tool_result(result)]),
        };
        if blocks.is_empty() {
            continue;
        }
        match held.back_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => {
                held.push_back((role, blocks));
                if held.len() > HELD_TURNS
                    && let Some((role, content)) = held.pop_front()
                {
                    out.push(turn(role, content));
                }
            }
        }
    }
    let mut newest: Vec<Value> = held
        .into_iter()
        .map(|(role, content)| turn(role, content))
        .collect();
    if cache {
        mark_newest_user_turns(&mut newest, 2);
    }
    newest.into_iter().for_each(|t| out.push(t));
}

fn turn(role: &str, content: Vec<Value>) -> Value {
    json!({"role": role, "content": content})
}

/// Images first, then the text, as Anthropic recommends.
fn user_blocks(user: &UserMessage) -> Vec<Value> {
    let mut blocks: Vec<Value> = user.images.iter().map(image_block).collect();
    if !user.content.trim().is_empty() {
        blocks.push(json!({"type": "text", "text": user.content}));
    }
    blocks
}

fn image_block(image: &ImageData) -> Value {
    json!({"type": "image", "source": {
        "type": "base64", "media_type": image.mime, "data": images::base64(image)
    }})
}

fn assistant_blocks(message: &AssistantMessage) -> Vec<Value> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            Block::Text { text } if text.is_empty() => None,
            Block::Text { text } => Some(json!({"type": "text", "text": text})),
            // Only signed thinking can be replayed; unsigned reasoning (a cut stream) or
            // another format's state would be rejected, so it stays out of the request.
            Block::Thinking {
                thinking,
                signature: Some(ThinkingSignature::Anthropic(signature)),
            } if !signature.is_empty() => {
                Some(json!({"type": "thinking", "thinking": thinking, "signature": signature}))
            }
            Block::Thinking {
                signature: Some(ThinkingSignature::AnthropicRedacted(data)),
                ..
            } => Some(json!({"type": "redacted_thinking", "data": data})),
            Block::Thinking { .. } => None,
            Block::ToolCall { id, name, args } => {
                let input = if args.is_object() {
                    args.clone()
                } else {
                    json!({})
                };
                Some(json!({"type": "tool_use", "id": tool_id(id), "name": name, "input": input}))
            }
        })
        .collect()
}

fn tool_result(result: &ToolResultMessage) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), json!("tool_result"));
    block.insert("tool_use_id".into(), json!(tool_id(&result.tool_call_id)));
    if !result.images.is_empty() {
        let mut content = Vec::with_capacity(result.images.len() + 1);
        if !result.content.is_empty() {
            content.push(json!({"type": "text", "text": result.content}));
        }
        content.extend(result.images.iter().map(image_block));
        block.insert("content".into(), Value::Array(content));
    } else if !result.content.is_empty() {
        block.insert("content".into(), json!(result.content));
    }
    block.insert("is_error".into(), json!(result.is_error));
    Value::Object(block)
}

/// A call id the API accepts (`^[a-zA-Z0-9_-]{1,64}$`): ids minted by other providers
/// are mapped the same way for the call and its result, so they still match.
fn tool_id(id: &str) -> String {
    let mapped: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if mapped.is_empty() {
        "tool_call".to_owned()
    } else {
        mapped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use claw_agent::types::{StopReason, UserMessage};

    fn assistant(content: Vec<Block>) -> LlmMessage<'static> {
        let mut m = AssistantMessage::empty("claude-sonnet-4-5");
        m.content = content;
        m.stop_reason = StopReason::ToolUse;
        LlmMessage::from(m)
    }

    /// The turns `messages` writes for `history`.
    fn turns_of(history: &[LlmMessage], cache: bool) -> Vec<Value> {
        let bytes = body::write(Map::new(), "messages", |out| messages(history, cache, out));
        let written: Value = serde_json::from_slice(&bytes.unwrap()).unwrap();
        written["messages"].as_array().unwrap().clone()
    }

    #[test]
    fn the_breakpoints_go_on_the_two_newest_user_turns_of_a_long_conversation() {
        let mut history = Vec::new();
        for i in 0..9 {
            history.push(LlmMessage::from(UserMessage::new(format!("question {i}"))));
            history.push(assistant(vec![Block::Text {
                text: format!("answer {i}"),
            }]));
        }
        history.push(LlmMessage::from(UserMessage::new("last")));
        let turns = turns_of(&history, true);
        assert_eq!(turns.len(), 19);
        let marked: Vec<usize> = (0..turns.len())
            .filter(|&i| turns[i].to_string().contains("cache_control"))
            .collect();
        assert_eq!(marked, [16, 18]);
        assert_eq!(
            turns[16]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert!(
            !turns_of(&history, false)
                .iter()
                .any(|t| t.to_string().contains("cache_control"))
        );
    }

    fn result(id: &str, content: &str, is_error: bool) -> LlmMessage<'static> {
        LlmMessage::from(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "t".into(),
            content: content.into(),
            images: Vec::new(),
            details: Value::Null,
            is_error,
            timestamp: 0,
        })
    }

    #[test]
    fn budgets_fit_under_the_limit_and_below_max_tokens() {
        assert_eq!(
            plan_tokens(16_384, 64_000, ThinkingLevel::Off),
            (16_384, None)
        );
        assert_eq!(
            plan_tokens(16_384, 64_000, ThinkingLevel::Medium),
            (24_576, Some(8_192))
        );
        let (total, budget) = plan_tokens(16_384, 32_000, ThinkingLevel::Xhigh);
        assert_eq!(total, 32_000);
        assert!(budget.unwrap() < total && budget.unwrap() >= 1_024);
        let (total, budget) = plan_tokens(100, 4_096, ThinkingLevel::Minimal);
        assert!(total > budget.unwrap(), "{total} {budget:?}");
        assert_eq!(output_limit("claude-opus-4-1-20250805"), 32_000);
        assert_eq!(output_limit("claude-opus-4-5"), 64_000);
        assert_eq!(output_limit("claude-sonnet-4-5-20250929"), 64_000);
    }

    #[test]
    fn tool_results_and_steering_share_one_user_turn() {
        let history = vec![
            LlmMessage::from(UserMessage::new("go")),
            assistant(vec![
                Block::Thinking {
                    thinking: "plan".into(),
                    signature: Some(ThinkingSignature::Anthropic("c2ln".into())),
                },
                Block::Thinking {
                    thinking: "unsigned".into(),
                    signature: None,
                },
                Block::Text {
                    text: String::new(),
                },
                Block::ToolCall {
                    id: "call:1".into(),
                    name: "a".into(),
                    args: Value::Null,
                },
            ]),
            result("call:1", "", true),
            LlmMessage::from(UserMessage::new("   ")),
            LlmMessage::from(UserMessage::new("steer")),
        ];
        let turns = turns_of(&history, false);
        assert_eq!(turns.len(), 3);
        assert_eq!(
            turns[1]["content"],
            json!([
                {"type": "thinking", "thinking": "plan", "signature": "c2ln"},
                {"type": "tool_use", "id": "call_1", "name": "a", "input": {}}
            ])
        );
        assert_eq!(
            turns[2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "is_error": true},
                {"type": "text", "text": "steer"}
            ]})
        );
    }

    #[test]
    fn redacted_thinking_is_replayed_as_such() {
        let turns = turns_of(
            &[assistant(vec![Block::Thinking {
                thinking: "[redacted]".into(),
                signature: Some(ThinkingSignature::AnthropicRedacted("opaque==".into())),
            }])],
            false,
        );
        assert_eq!(
            turns[0]["content"],
            json!([{"type": "redacted_thinking", "data": "opaque=="}])
        );
    }
}
