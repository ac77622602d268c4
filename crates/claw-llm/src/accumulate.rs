//! Builds the assistant message from wire-level deltas while emitting the matching
//! `MessageDelta`s, so the agent's partial message and the final one stay in step.

use super::LlmEvent;
use super::pricing::ModelPrices;
use claw_agent::event::MessageDelta;
use claw_agent::types::{AssistantMessage, Block, StopReason, ThinkingSignature, Usage};
use serde_json::Value;
use std::collections::VecDeque;

/// Output queue of a decoder.
pub(crate) type Out = VecDeque<LlmEvent>;

/// The message being streamed: blocks are numbered densely in the order they open,
/// whatever numbering the wire uses.
#[derive(Debug)]
pub(crate) struct Accumulator {
    message: AssistantMessage,
    /// Raw JSON argument text per block (empty for non-tool blocks).
    raw_args: Vec<String>,
    prices: Option<ModelPrices>,
}

impl Accumulator {
    /// An empty message for `model`, priced with `prices` when known.
    pub(crate) fn new(model: &str, prices: Option<ModelPrices>) -> Self {
        Self {
            message: AssistantMessage::empty(model),
            raw_args: Vec::new(),
            prices,
        }
    }

    /// Whether anything was streamed to the consumer (then a failure cannot be retried).
    pub(crate) fn has_content(&self) -> bool {
        !self.message.content.is_empty()
    }

    /// Records the model the server says answered.
    pub(crate) fn set_model(&mut self, model: &str) {
        if !model.is_empty() && self.message.model != model {
            model.clone_into(&mut self.message.model);
        }
    }

    /// The usage so far, for updating in place.
    pub(crate) fn usage_mut(&mut self) -> &mut Usage {
        &mut self.message.usage
    }

    /// Opens a text block holding `text`; returns its index.
    pub(crate) fn open_text(&mut self, text: &str, out: &mut Out) -> usize {
        let index = self.push(Block::Text {
            text: text.to_owned(),
        });
        out.push_back(LlmEvent::Delta(MessageDelta::Text {
            index,
            text: text.to_owned(),
        }));
        index
    }

    /// Appends text to the text block at `index`.
    pub(crate) fn push_text(&mut self, index: usize, text: &str, out: &mut Out) {
        if let Some(Block::Text { text: t }) = self.message.content.get_mut(index) {
            t.push_str(text);
            out.push_back(LlmEvent::Delta(MessageDelta::Text {
                index,
                text: text.to_owned(),
            }));
        }
    }

    /// Opens a thinking block holding `text`; returns its index.
    pub(crate) fn open_thinking(&mut self, text: &str, out: &mut Out) -> usize {
        let index = self.push(Block::Thinking {
            thinking: text.to_owned(),
            signature: None,
        });
        out.push_back(LlmEvent::Delta(MessageDelta::Thinking {
            index,
            text: text.to_owned(),
        }));
        index
    }

    /// Appends reasoning to the thinking block at `index`.
    pub(crate) fn push_thinking(&mut self, index: usize, text: &str, out: &mut Out) {
        if let Some(Block::Thinking { thinking, .. }) = self.message.content.get_mut(index) {
            thinking.push_str(text);
            out.push_back(LlmEvent::Delta(MessageDelta::Thinking {
                index,
                text: text.to_owned(),
            }));
        }
    }

    /// Appends to the Anthropic signature of the thinking block at `index` (not
    /// streamed: the signature only matters for replay, so it arrives with the final
    /// message).
    pub(crate) fn push_signature(&mut self, index: usize, part: &str) {
        if let Some(Block::Thinking { signature, .. }) = self.message.content.get_mut(index) {
            match signature {
                Some(ThinkingSignature::Anthropic(signature)) => signature.push_str(part),
                _ => *signature = Some(ThinkingSignature::Anthropic(part.to_owned())),
            }
        }
    }

    /// Sets the provider state of the thinking block at `index` (a state that comes
    /// whole: redacted data, a finished reasoning item).
    pub(crate) fn set_signature(&mut self, index: usize, state: ThinkingSignature) {
        if let Some(Block::Thinking { signature, .. }) = self.message.content.get_mut(index) {
            *signature = Some(state);
        }
    }

    /// Opens a tool call block; returns its index.
    pub(crate) fn open_tool(&mut self, id: &str, name: &str, out: &mut Out) -> usize {
        let index = self.push(Block::ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            args: Value::Null,
        });
        out.push_back(LlmEvent::Delta(MessageDelta::ToolCallStart {
            index,
            id: id.to_owned(),
            name: name.to_owned(),
        }));
        index
    }

    /// Names a tool call whose name arrived after it opened (some servers do that).
    pub(crate) fn name_tool(&mut self, index: usize, new_name: &str) {
        if let Some(Block::ToolCall { name, .. }) = self.message.content.get_mut(index)
            && name.is_empty()
        {
            new_name.clone_into(name);
        }
    }

    /// Appends a fragment of the JSON arguments of the tool call at `index`.
    pub(crate) fn push_args(&mut self, index: usize, json: &str, out: &mut Out) {
        if json.is_empty() {
            return;
        }
        if let Some(raw) = self.raw_args.get_mut(index) {
            raw.push_str(json);
            out.push_back(LlmEvent::Delta(MessageDelta::ToolCallArgs {
                index,
                json: json.to_owned(),
            }));
        }
    }

    /// Whether the message has a tool call.
    pub(crate) fn has_tool_calls(&self) -> bool {
        self.message
            .content
            .iter()
            .any(|b| matches!(b, Block::ToolCall { .. }))
    }

    /// The message as it stands, tool arguments parsed where possible and cost priced;
    /// the accumulator keeps its state (for a later `finish`).
    pub(crate) fn snapshot(&self, stop_reason: StopReason) -> AssistantMessage {
        let mut message = self.message.clone();
        for (block, raw) in message.content.iter_mut().zip(&self.raw_args) {
            if let Block::ToolCall { args, .. } = block {
                *args = parse_args(raw);
            }
        }
        message.stop_reason = stop_reason;
        if let Some(prices) = &self.prices {
            message.usage.cost = prices.cost(&message.usage);
        }
        message
    }

    fn push(&mut self, block: Block) -> usize {
        self.message.content.push(block);
        self.raw_args.push(String::new());
        self.message.content.len() - 1
    }
}

/// Parsed tool arguments: no text means no arguments (`{}`); unparsable text is `null`,
/// which argument validation then reports to the model.
fn parse_args(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    serde_json::from_str(raw).unwrap_or(Value::Null)
}

/// At most `max` characters of `text` (the last one `…` when it was cut).
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    if text.chars().nth(max).is_none() {
        return text.to_owned();
    }
    let end = text
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(text.len(), |(i, _)| i);
    format!("{}…", &text[..end])
}

/// What each numbered item of a stream (a content block, an output item) became; an
/// index not seen yet reads as the default.
#[derive(Debug, Default)]
pub(crate) struct Slots<T>(Vec<T>);

impl<T: Copy + Default> Slots<T> {
    /// What the item at `index` became.
    pub(crate) fn get(&self, index: usize) -> T {
        self.0.get(index).copied().unwrap_or_default()
    }

    /// Records what the item at `index` became.
    pub(crate) fn set(&mut self, index: usize, slot: T) {
        if self.0.len() <= index {
            self.0.resize(index + 1, T::default());
        }
        self.0[index] = slot;
    }
}

/// The message for an event whose JSON does not parse: names the event, shows the start.
pub(crate) fn malformed(event: &str, data: &str, error: &serde_json::Error) -> String {
    format!(
        "The server sent a malformed `{event}` event ({error}). Data: {}. \
         This is a server or proxy problem; retry, or check the base URL points at the \
         right API.",
        excerpt(data.trim(), 200)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_stay_within_the_limit() {
        assert_eq!(excerpt("short", 200), "short");
        let long = "é".repeat(500);
        let cut = excerpt(&long, 200);
        assert_eq!(cut.chars().count(), 200);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt(&"x".repeat(200), 200).len(), 200);
    }

    #[test]
    fn blocks_are_numbered_densely_and_arguments_parsed() {
        let mut acc = Accumulator::new("m", Some(ModelPrices::new(1.0, 2.0, 0.0, 0.0)));
        let mut out = Out::new();
        let thinking = acc.open_thinking("", &mut out);
        acc.push_thinking(thinking, "hmm", &mut out);
        acc.push_signature(thinking, "si");
        acc.push_signature(thinking, "g");
        let tool = acc.open_tool("c1", "echo", &mut out);
        acc.push_args(tool, "{\"text\":", &mut out);
        acc.push_args(tool, "\"hi\"}", &mut out);
        let empty_tool = acc.open_tool("c2", "now", &mut out);
        acc.usage_mut().input = 1_000_000;
        let message = acc.snapshot(StopReason::ToolUse);
        assert_eq!((thinking, tool, empty_tool), (0, 1, 2));
        assert_eq!(
            message.content,
            vec![
                Block::Thinking {
                    thinking: "hmm".into(),
                    signature: Some(ThinkingSignature::Anthropic("sig".into()))
                },
                Block::ToolCall {
                    id: "c1".into(),
                    name: "echo".into(),
                    args: serde_json::json!({"text": "hi"})
                },
                Block::ToolCall {
                    id: "c2".into(),
                    name: "now".into(),
                    args: serde_json::json!({})
                },
            ]
        );
        assert!((message.usage.cost - 1.0).abs() < 1e-9);
        assert_eq!(out.len(), 6);
    }
}
