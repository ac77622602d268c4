//! How an Anthropic Messages body divides: `system`, `tools`, `messages`; a tool's
//! result is a user message whose content holds `tool_result` blocks.

use crate::sections::{Element, Field, Head};

/// What the top-level field `key` holds.
pub(crate) fn field(key: &str) -> Field {
    match key {
        "system" => Field::System,
        "tools" => Field::Tools,
        "messages" => Field::Conversation,
        _ => Field::Setting,
    }
}

/// What a message is.
pub(crate) fn element(head: Head) -> Element {
    match head.role.as_deref() {
        Some("assistant") => Element::Assistant,
        Some("user") => {
            let content = head.content.as_ref().map_or("", |c| c.get());
            if content.starts_with('[') && content.contains(r#""type":"tool_result""#) {
                Element::ToolResult
            } else {
                Element::User(head.content)
            }
        }
        _ => Element::Other,
    }
}
