//! A tool call's result ([`CallResult`], read where it arrived) turned into the result
//! the model reads.
//!
//! Text parts stay text; `structuredContent` becomes pretty JSON unless a text part
//! already carries the same value (or its one field's value); images become image blocks (scaled like every image
//! sent; a model that takes no images gets a note instead when the request is made),
//! with a line naming each; images that cannot be decoded and audio become a line naming
//! their type and size; resource links and embedded resources become text with their
//! URI; a part this client cannot use becomes a line saying what it was and why (and is
//! listed in the details); `isError: true` makes an error result.

use super::call_result::{CallResult, Content, ResourceContents, Unsupported};
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

/// What one content part gives the model: its text, a note for the details when it was
/// binary or unusable, and the image it carries.
struct Part {
    text: String,
    note: Option<Note>,
    image: Option<ImageData>,
}

/// A line of the details about a part the model did not get as it was.
enum Note {
    /// Binary content (`details.binary`).
    Binary(Value),
    /// A part this client cannot use (`details.unsupported`).
    Unsupported(Value),
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
fn image_part(data: &str, name: &str) -> Result<ImageData, ImagePartError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(ImagePartError::NotBase64)?;
    Ok(crate::images::from_bytes(name, bytes)?)
}

/// A binary part the model does not get, as a line naming its type and size.
fn binary_line(kind: &str, mime: &str, data: &str, why: &str) -> Part {
    let bytes = decoded_len(data);
    Part {
        text: format!(
            "[{kind}: {mime}, {}; {why}]",
            crate::text::byte_size(bytes as u64)
        ),
        note: Some(Note::Binary(
            json!({"type": kind, "mime_type": mime, "bytes": bytes}),
        )),
        image: None,
    }
}

/// An image part: an image block named by a line, or a line saying why it is not one.
fn image(data: &str, mime: &str, name: &str) -> Part {
    match image_part(data, name) {
        Ok(image) => Part {
            text: format!(
                "[image {}: {}, {}×{}, {}]",
                image.name,
                image.mime,
                image.width,
                image.height,
                crate::text::byte_size(image.size)
            ),
            note: Some(Note::Binary(
                json!({"type": "image", "mime_type": image.mime, "bytes": image.size,
                       "width": image.width, "height": image.height}),
            )),
            image: Some(image),
        },
        Err(why) => binary_line(
            "image",
            mime,
            data,
            &format!("not shown to the model: {why}"),
        ),
    }
}

/// An embedded resource: its text, or a line naming its blob.
fn embedded(resource: &ResourceContents) -> Part {
    let uri = &resource.uri;
    match (&resource.text, &resource.blob) {
        (Some(text), _) => Part::text(format!("[resource <{uri}>]\n{text}")),
        (None, Some(blob)) => {
            let mime = resource.mime_type.as_deref().unwrap_or("unknown type");
            let bytes = decoded_len(blob);
            Part {
                text: format!(
                    "[resource <{uri}>: {mime}, {}]",
                    crate::text::byte_size(bytes as u64)
                ),
                note: Some(Note::Binary(
                    json!({"type": "resource", "uri": uri, "mime_type": mime, "bytes": bytes}),
                )),
                image: None,
            }
        }
        (None, None) => Part::text(format!("[resource <{uri}>]")),
    }
}

/// A part this client cannot use, as a line saying what it was and why.
fn unsupported(why: &Unsupported) -> Part {
    let (text, note) = match why {
        Unsupported::UnknownType(kind) => (
            format!("[content of unknown type \"{kind}\" left out]"),
            json!({"type": kind, "reason": "unknown type"}),
        ),
        Unsupported::Untyped => (
            "[content without a type left out]".to_owned(),
            json!({"type": null, "reason": "no type"}),
        ),
        Unsupported::Malformed { kind, error } => (
            format!("[content of type \"{kind}\" left out: {error}]"),
            json!({"type": kind, "reason": error}),
        ),
    };
    Part {
        text,
        note: Some(Note::Unsupported(note)),
        image: None,
    }
}

/// One content part of `tool`'s result; an image is named by its number among the
/// result's images.
fn part_of(part: &Content, tool: &str, image_number: usize) -> Part {
    match part {
        Content::Text { text } => Part::text(text.clone()),
        Content::Image { data, mime_type } => {
            image(data, mime_type, &format!("{tool}-{image_number}"))
        }
        Content::Audio { data, mime_type } => binary_line(
            "audio",
            mime_type,
            data,
            "not passed to the model, which takes no audio",
        ),
        Content::ResourceLink {
            uri,
            name,
            description,
        } => {
            let name = name.as_deref().unwrap_or(uri);
            let mut text = format!("[resource link: {name} <{uri}>]");
            if let Some(description) = description {
                text.push(' ');
                text.push_str(description);
            }
            Part::text(text)
        }
        Content::EmbeddedResource { resource } => embedded(resource),
        Content::Unsupported(why) => unsupported(why),
    }
}

/// The model's view of a result from `server`'s tool `tool`.
pub fn to_tool_result(result: &CallResult, server: &str, tool: &str) -> ToolResult {
    let mut texts = Vec::new();
    let mut binary = Vec::new();
    let mut unusable = Vec::new();
    let mut images = Vec::new();
    for part in &result.content {
        let part = part_of(part, tool, images.len() + 1);
        texts.push(part.text);
        match part.note {
            Some(Note::Binary(note)) => binary.push(note),
            Some(Note::Unsupported(note)) => unusable.push(note),
            None => {}
        }
        images.extend(part.image);
    }
    if let Some(structured) = result.structured_content.as_ref() {
        let already_there = result.content.iter().any(|p| match p {
            Content::Text { text } => carries(text, structured),
            _ => false,
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
    let mut details = json!({"server": server, "tool": tool});
    if !binary.is_empty() {
        details["binary"] = Value::Array(binary);
    }
    if !unusable.is_empty() {
        details["unsupported"] = Value::Array(unusable);
    }
    let converted = if result.is_error {
        ToolResult::error(content)
    } else {
        ToolResult::text(content)
    };
    converted.with_images(images).with_details(details)
}

/// Whether a text part already carries the structured content: its JSON is the same
/// value, or the value of the structured object's one field (the memory server sends
/// the list of entities as text and `{"entities": [...]}` as structured content, and
/// sending both would double the tokens of every call).
fn carries(text: &str, structured: &Value) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    value == *structured
        || structured
            .as_object()
            .filter(|fields| fields.len() == 1)
            .and_then(|fields| fields.values().next())
            .is_some_and(|only| *only == value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model's view of a result given as its JSON, read as the client reads it.
    fn to_tool_result(json: &Value, server: &str, tool: &str) -> ToolResult {
        let result = CallResult::from_json(json.clone()).unwrap();
        super::to_tool_result(&result, server, tool)
    }

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
        // The memory server's shape: the list as text, the list under a key as structure.
        let memory = to_tool_result(
            &json!({
                "content": [{"type": "text", "text": "[\n  {\"name\": \"Ada\", \"entityType\": \"person\"}\n]"}],
                "structuredContent": {"entities": [{"name": "Ada", "entityType": "person"}]}
            }),
            "memory",
            "create_entities",
        );
        assert!(!memory.content.contains("entities"), "{}", memory.content);
        // Structure that says more than the text is still sent.
        let more = to_tool_result(
            &json!({"content": [{"type": "text", "text": "3"}], "structuredContent": {"sum": 3, "of": [1, 2]}}),
            "s",
            "t",
        );
        assert!(more.content.contains("\"of\""), "{}", more.content);
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
