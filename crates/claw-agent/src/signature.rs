//! What a provider hands back with a thinking block so the block can be replayed with
//! the next request, one variant per kind of state, and its stored form in session
//! files (and wherever messages are written as JSON: exports, RPC `get_state`).
//!
//! The stored form is the one earlier builds wrote, a single string: an Anthropic
//! signature as it is, `redacted_thinking:` followed by a redacted block's data,
//! `openai-responses:` followed by a Responses reasoning item's JSON. It is kept on
//! purpose rather than replaced by a tagged object: a build that knows only strings
//! would count a line holding an object as damaged and skip the whole assistant
//! message, so a session opened again by an older claw-tui (or read by an RPC client
//! written against the string) would lose answers. The string cannot be misread
//! (Anthropic signatures are base64, which has no `:`), so a new shape would gain
//! nothing on disk; the type is for the code, and this module is the only place that
//! knows the prefixes.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::io;

/// Stored-form prefix of an Anthropic redacted thinking block's data.
const REDACTED_PREFIX: &str = "redacted_thinking:";
/// Stored-form prefix of an OpenAI Responses reasoning item's JSON.
const REASONING_PREFIX: &str = "openai-responses:";

/// Provider state that comes with a thinking block and must go back with it when the
/// conversation is replayed, to the API that produced it (others cannot read it).
#[derive(Clone, Debug, PartialEq)]
pub enum ThinkingSignature {
    /// Anthropic's signature of the block's text (base64), sent back with the text as a
    /// `thinking` block. Empty when the stream ended before the signature came: such a
    /// block cannot be replayed.
    Anthropic(String),
    /// The opaque `data` of an Anthropic `redacted_thinking` block (the reasoning was
    /// withheld), sent back as it came.
    AnthropicRedacted(String),
    /// An OpenAI Responses `reasoning` item as it came (its `summary`, the
    /// `encrypted_content` that carries the reasoning across turns, its `id`), sent
    /// back as an input item.
    ResponsesReasoning(Map<String, Value>),
    /// A stored value none of the above reads (a reasoning item whose JSON is
    /// damaged): kept as found, so the session is written back unchanged, and sent
    /// to no provider.
    Unrecognized(String),
}

impl ThinkingSignature {
    /// Reads the stored form (see the module doc).
    fn from_stored(text: String) -> Self {
        if let Some(data) = text.strip_prefix(REDACTED_PREFIX) {
            return Self::AnthropicRedacted(data.to_owned());
        }
        if let Some(json) = text.strip_prefix(REASONING_PREFIX) {
            return match serde_json::from_str::<Map<String, Value>>(json) {
                Ok(item) => Self::ResponsesReasoning(item),
                Err(_) => Self::Unrecognized(text),
            };
        }
        Self::Anthropic(text)
    }

    /// The stored form (see the module doc).
    fn stored(&self) -> Result<Cow<'_, str>, serde_json::Error> {
        Ok(match self {
            Self::Anthropic(signature) => Cow::Borrowed(signature),
            Self::AnthropicRedacted(data) => Cow::Owned(format!("{REDACTED_PREFIX}{data}")),
            Self::ResponsesReasoning(item) => Cow::Owned(format!(
                "{REASONING_PREFIX}{}",
                serde_json::to_string(item)?
            )),
            Self::Unrecognized(text) => Cow::Borrowed(text),
        })
    }

    /// The length in bytes of the stored form, without building it: what the context
    /// estimate counts for the state, which goes back to the model with the block.
    pub fn stored_len(&self) -> usize {
        match self {
            Self::Anthropic(signature) => signature.len(),
            Self::AnthropicRedacted(data) => REDACTED_PREFIX.len() + data.len(),
            Self::ResponsesReasoning(item) => {
                let mut counter = Counter(0);
                // Writing into a counter fails on nothing but a serializer error, which
                // a map of JSON values cannot raise; the prefix is still counted.
                let _ = serde_json::to_writer(&mut counter, item);
                REASONING_PREFIX.len() + counter.0
            }
            Self::Unrecognized(text) => text.len(),
        }
    }
}

/// An `io::Write` that only counts the bytes written to it.
struct Counter(usize);

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Serialize for ThinkingSignature {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let stored = self.stored().map_err(serde::ser::Error::custom)?;
        serializer.serialize_str(&stored)
    }
}

impl<'de> Deserialize<'de> for ThinkingSignature {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from_stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(stored: &str) -> ThinkingSignature {
        serde_json::from_value(json!(stored)).unwrap()
    }

    #[test]
    fn each_stored_form_reads_as_its_variant_and_is_written_back_byte_for_byte() {
        let item = r#"{"encrypted_content":"gAAA","id":"rs_1","summary":[],"type":"reasoning"}"#;
        let cases = [
            (
                "EqQBCgIYAhIM".to_owned(),
                ThinkingSignature::Anthropic("EqQBCgIYAhIM".into()),
            ),
            (String::new(), ThinkingSignature::Anthropic(String::new())),
            (
                "redacted_thinking:b3BhcXVl".to_owned(),
                ThinkingSignature::AnthropicRedacted("b3BhcXVl".into()),
            ),
            (
                format!("openai-responses:{item}"),
                ThinkingSignature::ResponsesReasoning(serde_json::from_str(item).unwrap()),
            ),
            (
                "openai-responses:{\"type\":\"reas".to_owned(),
                ThinkingSignature::Unrecognized("openai-responses:{\"type\":\"reas".into()),
            ),
            (
                "openai-responses:[1]".to_owned(),
                ThinkingSignature::Unrecognized("openai-responses:[1]".into()),
            ),
        ];
        for (stored, variant) in cases {
            assert_eq!(read(&stored), variant, "{stored}");
            assert_eq!(serde_json::to_value(&variant).unwrap(), json!(stored));
            assert_eq!(variant.stored_len(), stored.len(), "{stored}");
        }
    }

    #[test]
    fn a_value_that_is_not_a_string_is_refused() {
        let err = serde_json::from_value::<ThinkingSignature>(json!({"anthropic": "x"}));
        assert!(err.is_err());
    }
}
