//! Messages API stream events → provider events.

use crate::accumulate::{Accumulator, Out, Slots, malformed};
use crate::overflow::is_context_overflow;
use crate::pricing::ModelPrices;
use crate::sse::Event;
use crate::transport::{Decoder, Failure, Flow};
use claw_agent::types::{AssistantMessage, ErrorKind, StopReason, ThinkingSignature, Usage};
use serde::Deserialize;
use std::borrow::Cow;

/// What became of a wire content block.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum Slot {
    /// Not announced (yet).
    #[default]
    Unknown,
    /// A text block that has not produced text yet: empty blocks are never shown.
    PendingText,
    /// Text at this message index.
    Text(usize),
    /// Thinking at this message index.
    Thinking(usize),
    /// A tool call at this message index.
    Tool(usize),
    /// A block this client does not use (server tools, redacted thinking...).
    Ignored,
}

/// Decodes one Messages API response.
pub(crate) struct AnthropicDecoder {
    model: String,
    prices: Option<ModelPrices>,
    acc: Accumulator,
    slots: Slots<Slot>,
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct TypeOnly<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Cow<'a, str>,
}

#[derive(Deserialize)]
struct MessageStart<'a> {
    #[serde(borrow)]
    message: StartedMessage<'a>,
}

#[derive(Deserialize)]
struct StartedMessage<'a> {
    #[serde(borrow, default)]
    model: Cow<'a, str>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct BlockStart<'a> {
    index: usize,
    #[serde(borrow)]
    content_block: WireBlock<'a>,
}

#[derive(Deserialize)]
struct WireBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Cow<'a, str>,
    #[serde(borrow, default)]
    thinking: Cow<'a, str>,
    #[serde(borrow, default)]
    signature: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Cow<'a, str>,
    #[serde(borrow, default)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    data: Cow<'a, str>,
}

#[derive(Deserialize)]
struct BlockDelta<'a> {
    index: usize,
    #[serde(borrow)]
    delta: WireDelta<'a>,
}

#[derive(Deserialize)]
struct WireDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Cow<'a, str>,
    #[serde(borrow, default)]
    thinking: Cow<'a, str>,
    #[serde(borrow, default)]
    signature: Cow<'a, str>,
    #[serde(borrow, default)]
    partial_json: Cow<'a, str>,
}

#[derive(Deserialize)]
struct MessageDelta<'a> {
    #[serde(borrow, default)]
    delta: Option<StopInfo<'a>>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct StopInfo<'a> {
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ErrorEvent<'a> {
    #[serde(borrow)]
    error: ErrorBody<'a>,
}

#[derive(Deserialize)]
struct ErrorBody<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    message: Cow<'a, str>,
}

fn parse<'a, T: Deserialize<'a>>(name: &str, data: &'a str) -> Result<T, Failure> {
    serde_json::from_str(data).map_err(|e| Failure::fatal(malformed(name, data, &e)))
}

impl AnthropicDecoder {
    /// A decoder for a call to `model`.
    pub(crate) fn new(model: &str, prices: Option<ModelPrices>) -> Self {
        Self {
            model: model.to_owned(),
            prices,
            acc: Accumulator::new(model, prices),
            slots: Slots::default(),
            stop_reason: None,
        }
    }

    fn slot(&self, index: usize) -> Slot {
        self.slots.get(index)
    }

    fn set_slot(&mut self, index: usize, slot: Slot) {
        self.slots.set(index, slot);
    }

    fn usage(&mut self, wire: &WireUsage) {
        let usage: &mut Usage = self.acc.usage_mut();
        if let Some(n) = wire.input_tokens {
            usage.input = n;
        }
        if let Some(n) = wire.output_tokens {
            usage.output = n;
        }
        if let Some(n) = wire.cache_creation_input_tokens {
            usage.cache_write = n;
        }
        if let Some(n) = wire.cache_read_input_tokens {
            usage.cache_read = n;
        }
    }

    fn block_start(&mut self, start: BlockStart<'_>, out: &mut Out) {
        let block = start.content_block;
        let slot = match block.kind.as_ref() {
            "text" if block.text.is_empty() => Slot::PendingText,
            "text" => Slot::Text(self.acc.open_text(&block.text, out)),
            "thinking" => {
                let index = self.acc.open_thinking(&block.thinking, out);
                self.acc.push_signature(index, &block.signature);
                Slot::Thinking(index)
            }
            "redacted_thinking" => {
                let index = self
                    .acc
                    .open_thinking("[thinking redacted by the provider]", out);
                let data = ThinkingSignature::AnthropicRedacted(block.data.into_owned());
                self.acc.set_signature(index, data);
                Slot::Ignored
            }
            "tool_use" => Slot::Tool(self.acc.open_tool(&block.id, &block.name, out)),
            _ => Slot::Ignored,
        };
        self.set_slot(start.index, slot);
    }

    fn block_delta(&mut self, delta: BlockDelta<'_>, out: &mut Out) {
        let index = delta.index;
        let delta = delta.delta;
        match (delta.kind.as_ref(), self.slot(index)) {
            ("text_delta", Slot::Text(i)) => self.acc.push_text(i, &delta.text, out),
            ("text_delta", Slot::PendingText | Slot::Unknown) if !delta.text.is_empty() => {
                let i = self.acc.open_text(&delta.text, out);
                self.set_slot(index, Slot::Text(i));
            }
            ("thinking_delta", Slot::Thinking(i)) => {
                self.acc.push_thinking(i, &delta.thinking, out);
            }
            ("thinking_delta", Slot::Unknown) => {
                let i = self.acc.open_thinking(&delta.thinking, out);
                self.set_slot(index, Slot::Thinking(i));
            }
            ("signature_delta", Slot::Thinking(i)) => self.acc.push_signature(i, &delta.signature),
            ("input_json_delta", Slot::Tool(i)) => self.acc.push_args(i, &delta.partial_json, out),
            _ => {}
        }
    }

    fn error(&self, data: &str) -> Failure {
        let error = match parse::<ErrorEvent>("error", data) {
            Ok(event) => event.error,
            Err(failure) => return failure,
        };
        let retryable = matches!(error.kind.as_ref(), "overloaded_error" | "api_error");
        let kind = if error.kind.is_empty() {
            "an error"
        } else {
            &error.kind
        };
        let mut message = format!("Anthropic reported {kind}: {}", error.message);
        if self.acc.has_content() {
            message.push_str(". The partial reply is kept; send a message to continue.");
        }
        let overflow = is_context_overflow(&error.message);
        Failure {
            message,
            retryable: retryable && !overflow,
            kind: overflow.then_some(ErrorKind::ContextOverflow),
        }
    }

    fn finish(&self) -> AssistantMessage {
        let (reason, refused) = match self.stop_reason.as_deref() {
            Some("max_tokens" | "model_context_window_exceeded") => (StopReason::Length, false),
            Some("tool_use") => (StopReason::ToolUse, false),
            Some("refusal") => (StopReason::Error, true),
            // end_turn, stop_sequence, pause_turn, or a reason newer than this client.
            _ if self.acc.has_tool_calls() => (StopReason::ToolUse, false),
            _ => (StopReason::Stop, false),
        };
        let mut message = self.acc.snapshot(reason);
        if refused {
            message.error_kind = Some(ErrorKind::Refusal);
            message.error_message = Some(
                "The model refused to answer (stop reason: refusal). Rephrase the request, \
                 or start a new conversation if the context led to the refusal."
                    .to_owned(),
            );
        }
        message
    }
}

impl Decoder for AnthropicDecoder {
    fn whole(&self, body: &str) -> Option<Vec<Event>> {
        crate::whole::anthropic_message(body)
    }

    fn event(&mut self, event: &Event, out: &mut Out) -> Result<Flow, Failure> {
        let data = event.data.as_str();
        let tagged;
        let name = if event.event == "message" {
            // Without an `event:` line, the JSON `type` names the event.
            tagged = parse::<TypeOnly>("message", data)?;
            tagged.kind.as_ref()
        } else {
            event.event.as_str()
        };
        match name {
            "content_block_delta" => self.block_delta(parse(name, data)?, out),
            "content_block_start" => self.block_start(parse(name, data)?, out),
            "message_start" => {
                let start: MessageStart = parse(name, data)?;
                self.acc.set_model(&start.message.model);
                if let Some(usage) = &start.message.usage {
                    self.usage(usage);
                }
            }
            "message_delta" => {
                let delta: MessageDelta = parse(name, data)?;
                if let Some(reason) = delta.delta.and_then(|d| d.stop_reason) {
                    self.stop_reason = Some(reason.into_owned());
                }
                if let Some(usage) = &delta.usage {
                    self.usage(usage);
                }
            }
            "message_stop" => return Ok(Flow::Finished(self.finish())),
            "error" => return Err(self.error(data)),
            // ping, content_block_stop, and event types newer than this client.
            _ => {}
        }
        Ok(Flow::More)
    }

    fn accumulator(&self) -> &Accumulator {
        &self.acc
    }

    fn reset(&mut self) {
        *self = Self::new(&self.model, self.prices);
    }
}
