//! A tool call's result as the server sent it (MCP `CallToolResult`), read once where it
//! arrives (`client.rs`), so the rest of `src/mcp` matches on types instead of looking
//! up key names in JSON.
//!
//! The content parts are the MCP spec's `ContentBlock`s: text, image, audio, resource
//! link, embedded resource. Each part is read on its own: one this client cannot use (a
//! type it does not know, or a known type without the fields the spec requires)
//! becomes [`Content::Unsupported`], which says what it was and why, and the other
//! parts are kept.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A `tools/call` result.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResult {
    /// The content parts, in order.
    #[serde(default, deserialize_with = "read_parts")]
    pub content: Vec<Content>,
    /// `structuredContent`, when present and not null.
    #[serde(default)]
    pub structured_content: Option<Value>,
    /// `isError` (absent or null: false).
    #[serde(default, deserialize_with = "null_as_false")]
    pub is_error: bool,
}

/// One content part of a result (the spec's `ContentBlock`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Content {
    /// `text`: plain text.
    Text {
        /// The text.
        text: String,
    },
    /// `image`: an image, base64.
    Image {
        /// The bytes, base64.
        data: String,
        /// Its media type as the server names it.
        mime_type: String,
    },
    /// `audio`: a sound, base64.
    Audio {
        /// The bytes, base64.
        data: String,
        /// Its media type as the server names it.
        mime_type: String,
    },
    /// `resource_link`: a resource the server points at without sending it.
    ResourceLink {
        /// Where it is.
        uri: String,
        /// Its name (a server that leaves it out is shown the URI instead).
        #[serde(default)]
        name: Option<String>,
        /// What it is, in the server's words.
        #[serde(default)]
        description: Option<String>,
    },
    /// `resource`: a resource sent whole, its contents inside.
    #[serde(rename = "resource")]
    EmbeddedResource {
        /// The contents.
        resource: ResourceContents,
    },
    /// A part this client cannot use, kept to be named rather than dropped.
    #[serde(skip_deserializing)]
    Unsupported(Unsupported),
}

/// The contents of an embedded resource: text, or a blob (base64).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// Its URI.
    #[serde(default)]
    pub uri: String,
    /// Its media type, when the server gives one.
    #[serde(default)]
    pub mime_type: Option<String>,
    /// Its text (a text resource).
    #[serde(default)]
    pub text: Option<String>,
    /// Its bytes, base64 (a binary resource).
    #[serde(default)]
    pub blob: Option<String>,
}

/// Why a content part cannot be used.
#[derive(Clone, Debug, PartialEq)]
pub enum Unsupported {
    /// Its type is none of those above: a newer spec's, or the server's own.
    UnknownType(String),
    /// It has no `type` string (or is not an object at all).
    Untyped,
    /// It has a known type but not the fields that type requires.
    Malformed {
        /// Its type.
        kind: String,
        /// What is wrong, as the JSON reader put it.
        error: String,
    },
}

/// The part types [`Content`] reads: a part of another type is
/// [`Unsupported::UnknownType`], one of these that does not read is malformed.
const KNOWN_TYPES: [&str; 5] = ["text", "image", "audio", "resource_link", "resource"];

impl Content {
    /// Reads one part; never fails (see [`Unsupported`]).
    fn read(part: Value) -> Self {
        let kind = part.get("type").and_then(Value::as_str).map(str::to_owned);
        match serde_json::from_value(part) {
            Ok(content) => content,
            Err(error) => Content::Unsupported(match kind {
                None => Unsupported::Untyped,
                Some(kind) if !KNOWN_TYPES.contains(&kind.as_str()) => {
                    Unsupported::UnknownType(kind)
                }
                Some(kind) => Unsupported::Malformed {
                    kind,
                    error: error.to_string(),
                },
            }),
        }
    }
}

fn read_parts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Content>, D::Error> {
    let parts = Option::<Vec<Value>>::deserialize(deserializer)?;
    Ok(parts
        .unwrap_or_default()
        .into_iter()
        .map(Content::read)
        .collect())
}

fn null_as_false<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or_default())
}

impl CallResult {
    /// Reads a result's JSON. A `null` result is an empty one; a result that is not
    /// an object, or whose `content` is not a list or `isError` not a boolean, is
    /// refused with the reason.
    pub fn from_json(json: Value) -> Result<Self, String> {
        if json.is_null() {
            return Ok(Self::default());
        }
        serde_json::from_value(json).map_err(|e| format!("it is not a tool result ({e})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parts(content: Value) -> Vec<Content> {
        CallResult::from_json(json!({ "content": content }))
            .unwrap()
            .content
    }

    #[test]
    fn every_part_type_of_the_spec_reads_as_its_variant() {
        let read = parts(json!([
            {"type": "text", "text": "hi", "annotations": {"audience": ["user"]}},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a", "name": "a", "description": "A"},
            {"type": "resource", "resource": {"uri": "test://r", "text": "body"}},
        ]));
        assert_eq!(
            read,
            [
                Content::Text { text: "hi".into() },
                Content::Image {
                    data: "AAAA".into(),
                    mime_type: "image/png".into()
                },
                Content::Audio {
                    data: "AAAA".into(),
                    mime_type: "audio/wav".into()
                },
                Content::ResourceLink {
                    uri: "file:///a".into(),
                    name: Some("a".into()),
                    description: Some("A".into())
                },
                Content::EmbeddedResource {
                    resource: ResourceContents {
                        uri: "test://r".into(),
                        text: Some("body".into()),
                        ..ResourceContents::default()
                    }
                },
            ]
        );
        assert_eq!(read.len(), KNOWN_TYPES.len(), "one sample per known type");
    }

    #[test]
    fn a_part_that_cannot_be_used_says_why_and_the_others_stay() {
        let read = parts(json!([
            {"type": "video", "data": "AAAA"},
            {"type": "text", "text": 5},
            {"text": "no type"},
            "not an object",
            {"type": "text", "text": "kept"},
        ]));
        assert_eq!(
            read[0],
            Content::Unsupported(Unsupported::UnknownType("video".into()))
        );
        let Content::Unsupported(Unsupported::Malformed { kind, error }) = &read[1] else {
            panic!("{:?}", read[1]);
        };
        assert_eq!(kind, "text");
        assert!(error.contains("expected a string"), "{error}");
        assert_eq!(read[2], Content::Unsupported(Unsupported::Untyped));
        assert_eq!(read[3], Content::Unsupported(Unsupported::Untyped));
        assert_eq!(
            read[4],
            Content::Text {
                text: "kept".into()
            }
        );
    }

    #[test]
    fn the_envelope_is_lenient_about_absence_and_strict_about_shape() {
        assert_eq!(
            CallResult::from_json(json!({})).unwrap(),
            CallResult::default()
        );
        assert_eq!(
            CallResult::from_json(Value::Null).unwrap(),
            CallResult::default()
        );
        let nulls = json!({"content": null, "structuredContent": null, "isError": null});
        assert_eq!(CallResult::from_json(nulls).unwrap(), CallResult::default());
        for bad in [
            json!({"content": "text"}),
            json!({"isError": "yes"}),
            json!([1]),
        ] {
            let error = CallResult::from_json(bad.clone()).unwrap_err();
            assert!(
                error.starts_with("it is not a tool result ("),
                "{bad}: {error}"
            );
        }
    }
}
