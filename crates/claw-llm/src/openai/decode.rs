//! Chat Completions stream chunks → provider events.

use crate::accumulate::{Accumulator, Out};
use crate::messages::server_message;
use crate::overflow::is_context_overflow;
use crate::pricing::ModelPrices;
use crate::retry::is_retryable_status;
use crate::sse::Event;
use crate::transport::{Decoder, Failure, Flow, parse_event};
use claw_agent::types::{AssistantMessage, ErrorKind, StopReason};
use serde::Deserialize;
use serde::de::{Deserializer, Visitor};
use std::borrow::Cow;

/// A string field that may be absent or `null` (read as empty); borrowed when unescaped.
#[derive(Debug, Default)]
struct Str<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or null")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Str::default())
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Str::default())
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_str(V)
            }
        }
        deserializer.deserialize_option(V)
    }
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    model: Str<'a>,
    #[serde(borrow, default)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    index: Option<u32>,
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Str<'a>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Str<'a>,
    #[serde(borrow, default)]
    reasoning_content: Str<'a>,
    #[serde(borrow, default)]
    reasoning: Str<'a>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolFragment<'a>>>,
}

#[derive(Deserialize)]
struct ToolFragment<'a> {
    #[serde(default)]
    index: Option<usize>,
    #[serde(borrow, default)]
    id: Str<'a>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(borrow, default)]
    arguments: Str<'a>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

/// A streamed tool call: the wire `index` (when the server sends one), id, message index.
struct ToolSlot {
    wire_index: Option<usize>,
    id: String,
    local: usize,
}

/// Decodes one Chat Completions response.
pub(crate) struct OpenAiDecoder {
    provider: String,
    model: String,
    prices: Option<ModelPrices>,
    acc: Accumulator,
    text: Option<usize>,
    thinking: Option<usize>,
    tools: Vec<ToolSlot>,
    finish_reason: Option<String>,
}

impl OpenAiDecoder {
    /// A decoder for a call to `model` on the server called `provider`.
    pub(crate) fn new(provider: &str, model: &str, prices: Option<ModelPrices>) -> Self {
        Self {
            provider: provider.to_owned(),
            model: model.to_owned(),
            prices,
            acc: Accumulator::new(model, prices),
            text: None,
            thinking: None,
            tools: Vec::new(),
            finish_reason: None,
        }
    }

    fn text(&mut self, text: &str, out: &mut Out) {
        match self.text {
            Some(i) => self.acc.push_text(i, text, out),
            None => self.text = Some(self.acc.open_text(text, out)),
        }
    }

    fn thinking(&mut self, text: &str, out: &mut Out) {
        match self.thinking {
            Some(i) => self.acc.push_thinking(i, text, out),
            None => self.thinking = Some(self.acc.open_thinking(text, out)),
        }
    }

    /// Adds a tool-call fragment: matched by `index`, else by `id` (servers that omit the
    /// index), else it continues the latest call.
    fn tool(&mut self, fragment: ToolFragment<'_>, out: &mut Out) {
        let id = fragment.id.0.as_ref();
        let (name, args) = fragment
            .function
            .map(|f| (f.name.0, f.arguments.0))
            .unwrap_or_default();
        let found = match fragment.index {
            // Some servers number every parallel call 0; a new id then means a new call.
            Some(index) => self
                .tools
                .iter()
                .rfind(|t| t.wire_index == Some(index) && (id.is_empty() || t.id == id)),
            None if !id.is_empty() => self.tools.iter().rfind(|t| t.id == id),
            None => self.tools.last(),
        };
        let local = match found {
            Some(slot) => {
                let local = slot.local;
                self.acc.name_tool(local, &name);
                local
            }
            None => {
                let id = if id.is_empty() {
                    format!("call_{}", self.tools.len())
                } else {
                    id.to_owned()
                };
                let local = self.acc.open_tool(&id, &name, out);
                self.tools.push(ToolSlot {
                    wire_index: fragment.index,
                    id,
                    local,
                });
                local
            }
        };
        self.acc.push_args(local, &args, out);
    }

    fn usage(&mut self, wire: &WireUsage) {
        let cached = wire
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0);
        let usage = self.acc.usage_mut();
        // prompt_tokens includes the cached part; usage counts each token once.
        usage.input = wire.prompt_tokens.unwrap_or(0).saturating_sub(cached);
        usage.cache_read = cached;
        usage.output = wire.completion_tokens.unwrap_or(0);
    }

    fn error(&self, data: &str) -> Failure {
        let status = serde_json::from_str::<serde_json::Value>(data)
            .ok()
            .and_then(|v| v.get("error")?.get("code")?.as_u64())
            .and_then(|c| u16::try_from(c).ok());
        let mut message = format!(
            "{} reported an error mid-stream: {}",
            self.provider,
            server_message(data)
        );
        if self.acc.has_content() {
            message.push_str(". The partial reply is kept; send a message to continue.");
        }
        let overflow = is_context_overflow(data);
        Failure {
            message,
            retryable: status.is_some_and(is_retryable_status) && !overflow,
            kind: overflow.then_some(ErrorKind::ContextOverflow),
        }
    }

    fn finish(&self) -> AssistantMessage {
        let tools = self.acc.has_tool_calls();
        let (reason, filtered) = match self.finish_reason.as_deref() {
            Some("length") => (StopReason::Length, false),
            Some("tool_calls" | "function_call") => (StopReason::ToolUse, false),
            Some("content_filter") => (StopReason::Error, true),
            // Some servers (Ollama among them) say `stop` after tool calls.
            _ if tools => (StopReason::ToolUse, false),
            _ => (StopReason::Stop, false),
        };
        let mut message = self.acc.snapshot(reason);
        if filtered {
            message.error_message = Some(format!(
                "{}'s content filter stopped the answer (finish reason: content_filter). \
                 Rephrase the request.",
                self.provider
            ));
        }
        message
    }
}

impl Decoder for OpenAiDecoder {
    fn whole(&self, body: &str) -> Option<Vec<Event>> {
        crate::whole::chat_completion(body)
    }

    fn event(&mut self, event: &Event, out: &mut Out) -> Result<Flow, Failure> {
        let data = event.data.trim_ascii();
        if data == "[DONE]" {
            return Ok(Flow::Finished(self.finish()));
        }
        if data.is_empty() {
            return Ok(Flow::More);
        }
        let chunk: Chunk = parse_event(event, data, "chat.completion.chunk")?;
        if chunk.error.is_some() || event.event == "error" {
            return Err(self.error(data));
        }
        self.acc.set_model(&chunk.model.0);
        if let Some(usage) = &chunk.usage {
            self.usage(usage);
        }
        for choice in chunk.choices.into_iter().flatten() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                for reasoning in [&delta.reasoning_content.0, &delta.reasoning.0] {
                    if !reasoning.is_empty() {
                        self.thinking(reasoning, out);
                    }
                }
                if !delta.content.0.is_empty() {
                    self.text(&delta.content.0, out);
                }
                for fragment in delta.tool_calls.into_iter().flatten() {
                    self.tool(fragment, out);
                }
            }
            if !choice.finish_reason.0.is_empty() {
                self.finish_reason = Some(choice.finish_reason.0.into_owned());
            }
        }
        Ok(Flow::More)
    }

    fn end_of_stream(&mut self) -> Option<AssistantMessage> {
        // A server that ends the body after a finish reason but without `[DONE]` has
        // still finished the message.
        self.finish_reason.is_some().then(|| self.finish())
    }

    fn accumulator(&self) -> &Accumulator {
        &self.acc
    }

    fn reset(&mut self) {
        *self = Self::new(&self.provider, &self.model, self.prices);
    }
}
