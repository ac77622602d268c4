//! An MCP `CallToolResult` (its JSON, as the protocol spells it) turned into the text
//! result the model reads.
//!
//! Text parts stay text; `structuredContent` becomes pretty JSON unless a text part
//! already carries the same value; images and audio become a line naming their type and
//! size (the conversation carries no binary blocks); resource links and embedded
//! resources become text with their URI; `isError: true` makes an error result.

use crate::agent::ToolResult;
use serde_json::{Value, json};

/// Result text when a server returned nothing at all.
pub const EMPTY_RESULT: &str = "(the tool returned no content)";

/// Bytes encoded by a base64 string of this length.
fn decoded_len(base64: &str) -> usize {
    let padding = base64.bytes().rev().take_while(|b| *b == b'=').count();
    (base64.len() / 4 * 3).saturating_sub(padding)
}

/// `1.5 KB`, `312 bytes`.
fn human_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// One content part as text, and a note for the details when it was binary.
fn part_text(part: &Value) -> (String, Option<Value>) {
    let kind = str_field(part, "type").unwrap_or_default();
    match kind {
        "text" => (str_field(part, "text").unwrap_or_default().to_owned(), None),
        "image" | "audio" => {
            let mime = str_field(part, "mimeType").unwrap_or("unknown type");
            let bytes = decoded_len(str_field(part, "data").unwrap_or_default());
            (
                format!(
                    "[{kind}: {mime}, {}; not shown to the model, which gets tool results \
                     as text]",
                    human_size(bytes)
                ),
                Some(json!({"type": kind, "mime_type": mime, "bytes": bytes})),
            )
        }
        "resource_link" => {
            let uri = str_field(part, "uri").unwrap_or_default();
            let name = str_field(part, "name").unwrap_or(uri);
            let mut text = format!("[resource link: {name} <{uri}>]");
            if let Some(description) = str_field(part, "description") {
                text.push(' ');
                text.push_str(description);
            }
            (text, None)
        }
        "resource" => {
            let resource = part.get("resource").unwrap_or(&Value::Null);
            let uri = str_field(resource, "uri").unwrap_or_default();
            match (str_field(resource, "text"), str_field(resource, "blob")) {
                (Some(text), _) => (format!("[resource <{uri}>]\n{text}"), None),
                (None, Some(blob)) => {
                    let mime = str_field(resource, "mimeType").unwrap_or("unknown type");
                    let bytes = decoded_len(blob);
                    (
                        format!("[resource <{uri}>: {mime}, {}]", human_size(bytes)),
                        Some(
                            json!({"type": "resource", "uri": uri, "mime_type": mime, "bytes": bytes}),
                        ),
                    )
                }
                (None, None) => (format!("[resource <{uri}>]"), None),
            }
        }
        other => (
            format!("[content of unknown type \"{other}\" left out]"),
            None,
        ),
    }
}

/// The model's view of a `CallToolResult` from `server`'s tool `tool`.
pub fn to_tool_result(result: &Value, server: &str, tool: &str) -> ToolResult {
    let mut texts = Vec::new();
    let mut binary = Vec::new();
    let parts = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for part in parts {
        let (text, note) = part_text(part);
        texts.push(text);
        binary.extend(note);
    }
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        let already_there = parts.iter().any(|p| {
            str_field(p, "text")
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
                .is_some_and(|v| v == *structured)
        });
        if !already_there {
            texts.push(
                serde_json::to_string_pretty(structured).unwrap_or_else(|_| structured.to_string()),
            );
        }
    }
    let content = if texts.is_empty() {
        EMPTY_RESULT.to_owned()
    } else {
        texts.join("\n")
    };
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut details = json!({"server": server, "tool": tool});
    if !binary.is_empty() {
        details["binary"] = Value::Array(binary);
    }
    let result = if is_error {
        ToolResult::error(content)
    } else {
        ToolResult::text(content)
    };
    result.with_details(details)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_parts_are_joined() {
        let result = to_tool_result(
            &json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
            "s",
            "t",
        );
        assert_eq!(result.content, "a\nb");
        assert!(!result.is_error);
        assert_eq!(result.details["server"], "s");
    }

    #[test]
    fn structured_content_is_pretty_json_unless_already_in_text() {
        let only = to_tool_result(&json!({"structuredContent": {"sum": 3}}), "s", "t");
        assert_eq!(only.content, "{\n  \"sum\": 3\n}");
        let both = to_tool_result(
            &json!({"content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}}),
            "s",
            "t",
        );
        assert_eq!(both.content, "{\"sum\":3}");
    }

    #[test]
    fn images_become_a_line_naming_the_size() {
        // 8 base64 characters with one padding byte: 5 bytes.
        let result = to_tool_result(
            &json!({"content": [{"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}]}),
            "s",
            "t",
        );
        assert!(
            result.content.starts_with("[image: image/png, 5 bytes;"),
            "{}",
            result.content
        );
        assert_eq!(result.details["binary"][0]["bytes"], 5);
    }

    #[test]
    fn resources_keep_their_uri() {
        let result = to_tool_result(
            &json!({"content": [
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "description": "A file"},
                {"type": "resource", "resource": {"uri": "test://r/1", "text": "hello"}},
                {"type": "resource", "resource": {"uri": "test://r/2", "blob": "AAAA", "mimeType": "application/octet-stream"}}
            ]}),
            "s",
            "t",
        );
        assert!(
            result
                .content
                .contains("[resource link: a.txt <file:///a.txt>] A file")
        );
        assert!(result.content.contains("[resource <test://r/1>]\nhello"));
        assert!(
            result
                .content
                .contains("[resource <test://r/2>: application/octet-stream, 3 bytes]")
        );
    }

    #[test]
    fn errors_and_empty_results() {
        let error = to_tool_result(
            &json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
            "s",
            "t",
        );
        assert!(error.is_error);
        assert_eq!(error.content, "boom");
        assert_eq!(to_tool_result(&json!({}), "s", "t").content, EMPTY_RESULT);
    }
}
