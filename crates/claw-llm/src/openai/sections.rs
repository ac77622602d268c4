//! How a chat completions body divides: `tools`, `messages`; the system prompt is a
//! `system` (or `developer`) message, a tool's result a `tool` message.

use crate::sections::{Element, Field, Head, system_element};

/// What the top-level field `key` holds.
pub(crate) fn field(key: &str) -> Field {
    match key {
        "tools" => Field::Tools,
        "messages" => Field::Conversation,
        _ => Field::Setting,
    }
}

/// What a message is.
pub(crate) fn element(head: Head) -> Element {
    match head.role.as_deref() {
        Some("system" | "developer") => system_element(head.content.as_deref()),
        Some("tool") => Element::ToolResult,
        Some("assistant") => Element::Assistant,
        Some("user") => Element::User(head.content),
        _ => Element::Other,
    }
}
