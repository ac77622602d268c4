//! How each wire format's request body divides into sections, for whoever explains a
//! request after the fact (the request inspector): which top-level field holds the
//! system prompt, the tool definitions or the conversation, what each element of the
//! conversation is, and a tool definition's name. Each format answers for its own
//! bodies (`anthropic/sections.rs`, `openai/sections.rs`, `responses/sections.rs`); the
//! inspector only asks. Elements are read cheaply: only the fields that tell them apart
//! are parsed, the content is kept as sent.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// The wire format a request was sent in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireFormat {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI-compatible chat completions.
    ChatCompletions,
    /// OpenAI Responses.
    Responses,
}

/// What a top-level field of a request body holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The system prompt (a string or text blocks).
    System,
    /// The tool definitions, one per element.
    Tools,
    /// The conversation, one message or item per element.
    Conversation,
    /// A setting (model, limits, sampling...).
    Setting,
}

/// What one element of the conversation is.
#[derive(Debug)]
pub enum Element {
    /// A system or developer message, with its text.
    System(String),
    /// A user message, with its content as sent.
    User(Option<Box<RawValue>>),
    /// The model's own: a message, a call, reasoning.
    Assistant,
    /// A tool's result.
    ToolResult,
    /// Something this format does not know.
    Other,
}

/// The fields an element is told apart by; the rest is skipped unparsed (a request
/// holds the whole history, so each element is read cheaply).
#[derive(Default, Deserialize)]
pub(crate) struct Head {
    /// `user`, `assistant`, `tool`, `system`, `developer`.
    pub role: Option<String>,
    /// A Responses item's type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The content, as sent.
    pub content: Option<Box<RawValue>>,
}

impl Head {
    /// The head of element `raw` (empty when it is not an object).
    pub(crate) fn of(raw: &str) -> Self {
        serde_json::from_str(raw).unwrap_or_default()
    }
}

impl WireFormat {
    /// What the top-level field `key` holds.
    pub fn field(self, key: &str) -> Field {
        match self {
            Self::Anthropic => crate::anthropic::sections::field(key),
            Self::ChatCompletions => crate::openai::sections::field(key),
            Self::Responses => crate::responses::sections::field(key),
        }
    }

    /// What the conversation element `raw` (its JSON as sent) is.
    pub fn element(self, raw: &str) -> Element {
        let head = Head::of(raw);
        match self {
            Self::Anthropic => crate::anthropic::sections::element(head),
            Self::ChatCompletions => crate::openai::sections::element(head),
            Self::Responses => crate::responses::sections::element(head),
        }
    }

    /// The name of the tool definition `raw`.
    pub fn tool_name(self, raw: &str) -> Option<String> {
        let value: Value = serde_json::from_str(raw).ok()?;
        let name = match self {
            Self::ChatCompletions => value.get("function")?.get("name"),
            Self::Anthropic | Self::Responses => value.get("name"),
        };
        name?.as_str().map(str::to_owned)
    }
}

/// The text of a system field or a message's content: a string, or its text blocks
/// joined by blank lines.
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

/// The text of a system or developer message's content as sent.
pub(crate) fn system_element(content: Option<&RawValue>) -> Element {
    let text = content
        .and_then(|c| serde_json::from_str::<Value>(c.get()).ok())
        .map(|c| text_of(&c))
        .unwrap_or_default();
    Element::System(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(format: WireFormat, element: Value) -> &'static str {
        match format.element(&element.to_string()) {
            Element::System(_) => "system",
            Element::User(_) => "user",
            Element::Assistant => "assistant",
            Element::ToolResult => "tool result",
            Element::Other => "other",
        }
    }

    #[test]
    fn each_format_names_its_own_fields_and_elements() {
        use WireFormat::*;
        assert_eq!(Anthropic.field("system"), Field::System);
        assert_eq!(Anthropic.field("messages"), Field::Conversation);
        assert_eq!(Responses.field("instructions"), Field::System);
        assert_eq!(Responses.field("input"), Field::Conversation);
        assert_eq!(ChatCompletions.field("messages"), Field::Conversation);
        assert_eq!(ChatCompletions.field("tools"), Field::Tools);
        assert_eq!(ChatCompletions.field("temperature"), Field::Setting);
        // A field one format has is a setting to another.
        assert_eq!(Anthropic.field("input"), Field::Setting);

        let result = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]});
        assert_eq!(kind(Anthropic, result), "tool result");
        assert_eq!(
            kind(Anthropic, json!({"role": "user", "content": "hi"})),
            "user"
        );
        assert_eq!(
            kind(Anthropic, json!({"role": "assistant", "content": []})),
            "assistant"
        );
        assert_eq!(
            kind(ChatCompletions, json!({"role": "tool", "content": "x"})),
            "tool result"
        );
        assert_eq!(
            kind(
                ChatCompletions,
                json!({"role": "developer", "content": "be brief"})
            ),
            "system"
        );
        assert_eq!(
            kind(
                Responses,
                json!({"type": "function_call_output", "output": "x"})
            ),
            "tool result"
        );
        assert_eq!(
            kind(Responses, json!({"type": "reasoning", "summary": []})),
            "assistant"
        );
        assert_eq!(
            kind(Responses, json!({"type": "function_call", "name": "f"})),
            "assistant"
        );
        assert_eq!(
            kind(Responses, json!({"role": "user", "content": "hi"})),
            "user"
        );
        assert_eq!(
            kind(Responses, json!({"role": "developer", "content": "x"})),
            "system"
        );
        assert_eq!(kind(Anthropic, json!(["not", "an", "object"])), "other");

        let tool = json!({"type": "function", "function": {"name": "read_file"}}).to_string();
        assert_eq!(
            ChatCompletions.tool_name(&tool).as_deref(),
            Some("read_file")
        );
        assert_eq!(Anthropic.tool_name(&tool), None);
        let tool = json!({"name": "exec", "input_schema": {}}).to_string();
        assert_eq!(Anthropic.tool_name(&tool).as_deref(), Some("exec"));
    }

    #[test]
    fn a_system_message_carries_its_text() {
        let element = json!({"role": "system", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        match WireFormat::ChatCompletions.element(&element.to_string()) {
            Element::System(text) => assert_eq!(text, "a\n\nb"),
            other => panic!("{other:?}"),
        }
    }
}
