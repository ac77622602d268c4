//! Responses API stream events → provider events. Output items are numbered by
//! `output_index`: reasoning (its summary streams as thinking, the finished item is kept
//! for replay), messages (text), function calls (arguments stream as deltas).

use crate::accumulate::{Accumulator, Out, Slots};
use crate::overflow::is_context_overflow;
use crate::pricing::ModelPrices;
use crate::retry::is_retryable_status;
use crate::sse::Event;
use crate::transport::{Decoder, Failure, Flow, parse_event};
use claw_agent::types::{AssistantMessage, ErrorKind, StopReason, ThinkingSignature};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;

/// Error codes after which the same request may well succeed.
const RETRYABLE_CODES: &[&str] = &[
    "server_error",
    "internal_error",
    "rate_limit_exceeded",
    "server_is_overloaded",
    "overloaded",
    "slow_down",
];

/// What became of an output item.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum Slot {
    /// Not announced.
    #[default]
    Unknown,
    /// An assistant message; its text block once text arrived.
    Message(Option<usize>),
    /// Reasoning; its thinking block once summary text arrived, and the summary part
    /// that text belongs to.
    Reasoning(Option<(usize, usize)>),
    /// A function call at this block, and whether argument text arrived for it.
    Tool(usize, bool),
    /// An item this client does not use (hosted tools...).
    Other,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Cow<'a, str>,
    #[serde(default)]
    output_index: Option<usize>,
    #[serde(default)]
    summary_index: Option<usize>,
    #[serde(borrow, default)]
    delta: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    response: Option<Value>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize, Default)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: u64,
}

#[derive(Deserialize, Default)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: u64,
}

/// Decodes one Responses API response.
pub(crate) struct ResponsesDecoder {
    provider: String,
    model: String,
    prices: Option<ModelPrices>,
    acc: Accumulator,
    slots: Slots<Slot>,
}

impl ResponsesDecoder {
    /// A decoder for a call to `model` on the server called `provider`.
    pub(crate) fn new(provider: &str, model: &str, prices: Option<ModelPrices>) -> Self {
        Self {
            provider: provider.to_owned(),
            model: model.to_owned(),
            prices,
            acc: Accumulator::new(model, prices),
            slots: Slots::default(),
        }
    }

    fn slot(&self, index: usize) -> Slot {
        self.slots.get(index)
    }

    fn set_slot(&mut self, index: usize, slot: Slot) {
        self.slots.set(index, slot);
    }

    fn item_added(&mut self, index: usize, item: &Value, out: &mut Out) {
        let slot = match str_field(item, "type") {
            "function_call" => self.open_call(item, out),
            "reasoning" => Slot::Reasoning(None),
            "message" => Slot::Message(None),
            _ => Slot::Other,
        };
        self.set_slot(index, slot);
    }

    fn open_call(&mut self, item: &Value, out: &mut Out) -> Slot {
        let id = match str_field(item, "call_id") {
            "" => str_field(item, "id"),
            id => id,
        };
        let block = self.acc.open_tool(id, str_field(item, "name"), out);
        let arguments = str_field(item, "arguments");
        self.acc.push_args(block, arguments, out);
        Slot::Tool(block, !arguments.is_empty())
    }

    fn text(&mut self, index: usize, delta: &str, out: &mut Out) {
        if delta.is_empty() {
            return;
        }
        match self.slot(index) {
            Slot::Message(Some(block)) => self.acc.push_text(block, delta, out),
            Slot::Message(None) | Slot::Unknown => {
                let block = self.acc.open_text(delta, out);
                self.set_slot(index, Slot::Message(Some(block)));
            }
            _ => {}
        }
    }

    /// Summary text; a new summary part starts a new paragraph of the same block.
    fn reasoning(&mut self, index: usize, part: usize, delta: &str, out: &mut Out) {
        if delta.is_empty() {
            return;
        }
        match self.slot(index) {
            Slot::Reasoning(Some((block, current))) => {
                if part != current {
                    self.acc.push_thinking(block, "\n\n", out);
                }
                self.acc.push_thinking(block, delta, out);
                self.set_slot(index, Slot::Reasoning(Some((block, part))));
            }
            Slot::Reasoning(None) | Slot::Unknown => {
                let block = self.acc.open_thinking(delta, out);
                self.set_slot(index, Slot::Reasoning(Some((block, part))));
            }
            _ => {}
        }
    }

    fn arguments(&mut self, index: usize, delta: &str, whole: bool, out: &mut Out) {
        if let Slot::Tool(block, streamed) = self.slot(index) {
            // The `.done` event repeats the whole text: used only if no delta came.
            if whole && streamed {
                return;
            }
            self.acc.push_args(block, delta, out);
            self.set_slot(index, Slot::Tool(block, streamed || !delta.is_empty()));
        }
    }

    fn item_done(&mut self, index: usize, item: Value, out: &mut Out) {
        match (str_field(&item, "type"), self.slot(index)) {
            ("function_call", Slot::Tool(..)) => {
                let arguments = str_field(&item, "arguments").to_owned();
                self.arguments(index, &arguments, true, out);
            }
            ("function_call", _) => {
                let slot = self.open_call(&item, out);
                self.set_slot(index, slot);
            }
            ("reasoning", slot) => {
                let block = match slot {
                    Slot::Reasoning(Some((block, _))) => block,
                    _ => {
                        let summary = summary_text(&item);
                        // Reasoning with neither a summary to show nor encrypted content
                        // to replay (thinking off) leaves nothing worth keeping.
                        if summary.is_empty() && str_field(&item, "encrypted_content").is_empty() {
                            self.set_slot(index, Slot::Other);
                            return;
                        }
                        self.acc.open_thinking(&summary, out)
                    }
                };
                // An item whose type is read is an object. Kept with its keys sorted,
                // as the session stores it whatever order serde_json's map keeps.
                let mut item = item;
                item.sort_all_objects();
                if let Value::Object(item) = item {
                    let state = ThinkingSignature::ResponsesReasoning(item);
                    self.acc.set_signature(block, state);
                }
                self.set_slot(index, Slot::Reasoning(Some((block, usize::MAX))));
            }
            ("message", Slot::Message(None) | Slot::Unknown) => {
                // A server that sends the finished item without text deltas.
                let text = message_text(&item);
                self.text(index, &text, out);
            }
            _ => {}
        }
    }

    fn usage(&mut self, response: &Value) {
        let Some(wire) = response
            .get("usage")
            .and_then(|u| WireUsage::deserialize(u).ok())
        else {
            return;
        };
        let cached = wire.input_tokens_details.unwrap_or_default().cached_tokens;
        let usage = self.acc.usage_mut();
        // input_tokens includes the cached part; usage counts each token once.
        usage.input = wire.input_tokens.saturating_sub(cached);
        usage.cache_read = cached;
        usage.output = wire.output_tokens;
        usage.reasoning = wire
            .output_tokens_details
            .unwrap_or_default()
            .reasoning_tokens;
    }

    fn finish(&mut self, response: &Value, incomplete: bool) -> AssistantMessage {
        self.acc.set_model(str_field(response, "model"));
        self.usage(response);
        let reason = response
            .get("incomplete_details")
            .map_or("", |d| str_field(d, "reason"));
        let stop = if incomplete && reason == "content_filter" {
            StopReason::Error
        } else if incomplete {
            StopReason::Length
        } else if self.acc.has_tool_calls() {
            StopReason::ToolUse
        } else {
            StopReason::Stop
        };
        let mut message = self.acc.snapshot(stop);
        if stop == StopReason::Error {
            message.error_message = Some(format!(
                "{}'s content filter stopped the answer (incomplete: content_filter). \
                 Rephrase the request.",
                self.provider
            ));
        }
        message
    }

    /// `response.failed` (the error inside the response) or an `error` event.
    fn failure(&self, what: &str, error: &Value) -> Failure {
        let error = error
            .get("error")
            .filter(|e| e.is_object())
            .unwrap_or(error);
        let code = match error.get("code") {
            Some(Value::String(code)) => code.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => str_field(error, "type").to_owned(),
        };
        let text = str_field(error, "message");
        let status = error
            .get("status")
            .or_else(|| error.get("code"))
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok());
        let retryable =
            RETRYABLE_CODES.contains(&code.as_str()) || status.is_some_and(is_retryable_status);
        let said = match (code.as_str(), text) {
            ("", "") => "no reason given".to_owned(),
            ("", text) => text.to_owned(),
            (code, "") => code.to_owned(),
            (code, text) => format!("{code}: {text}"),
        };
        // An overflow states only what happened: the loop compacts and retries on its own
        // where it may, and adds what to do otherwise.
        let overflow = is_context_overflow(&said);
        let mut message = if overflow {
            format!(
                "{} rejected the request because the conversation no longer fits the context \
                 window of model \"{}\" ({said}).",
                self.provider, self.model
            )
        } else {
            format!("{} {what} ({said}).", self.provider)
        };
        if self.acc.has_content() {
            message.push_str(" The partial reply is kept; send a message to continue.");
        }
        Failure {
            message,
            retryable: retryable && !overflow,
            kind: overflow.then_some(ErrorKind::ContextOverflow),
        }
    }
}

impl Decoder for ResponsesDecoder {
    fn event(&mut self, event: &Event, out: &mut Out) -> Result<Flow, Failure> {
        let data = event.data.trim_ascii();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Flow::More);
        }
        let parsed: Envelope = parse_event(event, data, "response")?;
        let name = if parsed.kind.is_empty() {
            event.event.as_str()
        } else {
            parsed.kind.as_ref()
        };
        let index = parsed.output_index.unwrap_or(0);
        match name {
            "response.output_text.delta" | "response.refusal.delta" => {
                self.text(index, &parsed.delta, out);
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let part = parsed.summary_index.unwrap_or(0);
                self.reasoning(index, part, &parsed.delta, out);
            }
            "response.function_call_arguments.delta" => {
                self.arguments(index, &parsed.delta, false, out);
            }
            "response.function_call_arguments.done" => {
                let whole = parsed.arguments.unwrap_or_default();
                self.arguments(index, &whole, true, out);
            }
            "response.output_item.added" => {
                if let Some(item) = &parsed.item {
                    self.item_added(index, item, out);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = parsed.item {
                    self.item_done(index, item, out);
                }
            }
            "response.created" | "response.in_progress" => {
                if let Some(response) = &parsed.response {
                    self.acc.set_model(str_field(response, "model"));
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = parsed.response.unwrap_or_default();
                let incomplete = name == "response.incomplete";
                return Ok(Flow::Finished(self.finish(&response, incomplete)));
            }
            "response.failed" => {
                let response = parsed.response.unwrap_or_default();
                let error = response.get("error").cloned().unwrap_or_default();
                return Err(self.failure("could not complete the answer", &error));
            }
            "error" => {
                let error: Value = serde_json::from_str(data).unwrap_or_default();
                return Err(self.failure("reported an error mid-stream", &error));
            }
            // Part and `.done` events repeat what the deltas said; newer event types
            // are ignored.
            _ => {}
        }
        Ok(Flow::More)
    }

    fn accumulator(&self) -> &Accumulator {
        &self.acc
    }

    fn reset(&mut self) {
        *self = Self::new(&self.provider, &self.model, self.prices);
    }
}

fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The summary parts of a reasoning item, as paragraphs.
fn summary_text(item: &Value) -> String {
    item.get("summary")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .map(|p| str_field(p, "text"))
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n\n")
        })
        .unwrap_or_default()
}

/// The `output_text` parts of a message item.
fn message_text(item: &Value) -> String {
    item.get("content")
        .and_then(Value::as_array)
        .map(|parts| parts.iter().map(|p| str_field(p, "text")).collect())
        .unwrap_or_default()
}
