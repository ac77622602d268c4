//! How a Responses body divides: `instructions`, `tools`, `input`; an input item is a
//! message (by its role), a function call or reasoning (the model's), or a function
//! call's output (a tool's result).

use crate::sections::{Element, Field, Head, system_element};

/// What the top-level field `key` holds.
pub(crate) fn field(key: &str) -> Field {
    match key {
        "instructions" => Field::System,
        "tools" => Field::Tools,
        "input" => Field::Conversation,
        _ => Field::Setting,
    }
}

/// What an input item is.
pub(crate) fn element(head: Head) -> Element {
    match (head.kind.as_deref(), head.role.as_deref()) {
        (Some("function_call_output"), _) => Element::ToolResult,
        (Some("function_call" | "reasoning"), _) | (_, Some("assistant")) => Element::Assistant,
        (_, Some("system" | "developer")) => system_element(head.content.as_deref()),
        (_, Some("user")) => Element::User(head.content),
        _ => Element::Other,
    }
}
