//! An MCP `CallToolResult` (its JSON, as the protocol spells it) turned into the result
//! the model reads.
//!
//! Text parts stay text; `structuredContent` becomes pretty JSON unless a text part
//! already carries the same value; images become image blocks (scaled like every image
//! sent; a model that takes no images gets a note instead when the request is made),
//! with a line naming each; images that cannot be decoded and audio become a line naming
//! their type and size; resource links and embedded resources become text with their
//! URI; `isError: true` makes an error result.

use crate::agent::{ImageData, ToolResult};
use base64::Engine;
use serde_json::{Value, json};

/// Result text when a server returned nothing at all.
pub const EMPTY_RESULT: &str = "(the tool returned no content)";

/// Bytes encoded by a base64 string of this length.
fn decoded_len(base64: &str) -> usize {
    let padding = base64.bytes().rev().take_while(|b| *b == b'=').count();
    (base64.len() / 4 * 3).saturating_sub(padding)
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// What one content part gives the model: its text, a note for the details when it was
/// binary, and the image it carries.
struct Part {
    text: String,
    note: Option<Value>,
    image: Option<ImageData>,
}

impl Part {
    fn text(text: String) -> Self {
        Self {
            text,
            note: None,
            image: None,
        }
    }
}

/// Why an image part cannot become an image block.
#[derive(Debug, thiserror::Error)]
enum ImagePartError {
    /// Its `data` does not decode as base64.
    #[error("its data is not base64 ({0})")]
    NotBase64(#[source] base64::DecodeError),
    /// The decoded bytes are no image we send.
    #[error(transparent)]
    Image(#[from] crate::images::ImageError),
}

/// An image part as an image block, or why it cannot be one.
fn image_part(part: &Value, name: &str) -> Result<ImageData, ImagePartError> {
    let data = str_field(part, "data").unwrap_or_default();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(ImagePartError::NotBase64)?;
    Ok(crate::images::from_bytes(name, bytes)?)
}

/// A binary part the model does not get, as a line naming its type and size.
fn binary_line(kind: &str, part: &Value, why: &str) -> Part {
    let mime = str_field(part, "mimeType").unwrap_or("unknown type");
    let bytes = decoded_len(str_field(part, "data").unwrap_or_default());
    Part {
        text: format!(
            "[{kind}: {mime}, {}; {why}]",
            crate::text::byte_size(bytes as u64)
        ),
        note: Some(json!({"type": kind, "mime_type": mime, "bytes": bytes})),
        image: None,
    }
}

/// One content part of `tool`'s result; an image is named by its number among the
/// result's images.
fn part_of(part: &Value, tool: &str, image_number: usize) -> Part {
    let kind = str_field(part, "type").unwrap_or_default();
    match kind {
        "text" => Part::text(str_field(part, "text").unwrap_or_default().to_owned()),
        "image" => match image_part(part, &format!("{tool}-{image_number}")) {
            Ok(image) => Part {
                text: format!(
                    "[image {}: {}, {}×{}, {}]",
                    image.name,
                    image.mime,
                    image.width,
                    image.height,
                    crate::text::byte_size(image.size)
                ),
                note: Some(
                    json!({"type": "image", "mime_type": image.mime, "bytes": image.size,
                                  "width": image.width, "height": image.height}),
                ),
                image: Some(image),
            },
            Err(why) => binary_line(kind, part, &format!("not shown to the model: {why}")),
        },
        "audio" => binary_line(kind, part, "not passed to the model, which takes no audio"),
        "resource_link" => {
            let uri = str_field(part, "uri").unwrap_or_default();
            let name = str_field(part, "name").unwrap_or(uri);
            let mut text = format!("[resource link: {name} <{uri}>]");
            if let Some(description) = str_field(part, "description") {
                text.push(' ');
                text.push_str(description);
            }
            Part::text(text)
        }
        "resource" => {
            let resource = part.get("resource").unwrap_or(&Value::Null);
            let uri = str_field(resource, "uri").unwrap_or_default();
            match (str_field(resource, "text"), str_field(resource, "blob")) {
                (Some(text), _) => Part::text(format!("[resource <{uri}>]\n{text}")),
                (None, Some(blob)) => {
                    let mime = str_field(resource, "mimeType").unwrap_or("unknown type");
                    let bytes = decoded_len(blob);
                    Part {
                        text: format!(
                            "[resource <{uri}>: {mime}, {}]",
                            crate::text::byte_size(bytes as u64)
                        ),
                        note: Some(
                            json!({"type": "resource", "uri": uri, "mime_type": mime, "bytes": bytes}),
                        ),
                        image: None,
                    }
                }
                (None, None) => Part::text(format!("[resource <{uri}>]")),
            }
        }
        other => Part::text(format!("[content of unknown type \"{other}\" left out]")),
    }
}

/// The model's view of a `CallToolResult` from `server`'s tool `tool`.
pub fn to_tool_result(result: &Value, server: &str, tool: &str) -> ToolResult {
    let mut texts = Vec::new();
    let mut binary = Vec::new();
    let mut images = Vec::new();
    let parts = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for part in parts {
        let part = part_of(part, tool, images.len() + 1);
        texts.push(part.text);
        binary.extend(part.note);
        images.extend(part.image);
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
    result.with_images(images).with_details(details)
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

    /// A 1×1 PNG.
    const PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

    #[test]
    fn images_become_image_blocks_with_a_line_naming_them() {
        let result = to_tool_result(
            &json!({"content": [{"type": "image", "data": PIXEL_PNG, "mimeType": "image/png"}]}),
            "s",
            "shot",
        );
        assert_eq!(result.images.len(), 1);
        let image = &result.images[0];
        assert_eq!(
            (image.mime.as_str(), image.width, image.height),
            ("image/png", 1, 1)
        );
        assert!(image.is_loaded());
        assert_eq!(result.content, "[image shot-1: image/png, 1×1, 70 B]");
        assert_eq!(result.details["binary"][0]["width"], 1);
    }

    #[test]
    fn undecodable_images_and_audio_become_a_line_naming_the_size() {
        // 8 base64 characters with one padding byte: 5 bytes, and no image format.
        let result = to_tool_result(
            &json!({"content": [
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "image", "data": "not base64!", "mimeType": "image/png"},
                {"type": "audio", "data": "aGVsbG8=", "mimeType": "audio/wav"}
            ]}),
            "s",
            "t",
        );
        assert!(result.images.is_empty());
        let lines: Vec<&str> = result.content.lines().collect();
        assert!(
            lines[0].starts_with("[image: image/png, 5 B; not shown to the model: "),
            "{}",
            result.content
        );
        assert!(lines[1].contains("not base64"), "{}", result.content);
        assert_eq!(
            lines[2],
            "[audio: audio/wav, 5 B; not passed to the model, which takes no audio]"
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
                .contains("[resource <test://r/2>: application/octet-stream, 3 B]")
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
