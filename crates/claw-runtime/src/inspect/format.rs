//! The lines of a request log (`<session>.requests.jsonl`).
//!
//! A request body repeats the whole history, so it is not stored whole: each top-level
//! field of the body is kept in order, an array field (messages, input, tools, system
//! blocks) as its elements, and each element or large value is a *blob* stored once
//! under its content hash. A request lists its fields; an array lists, for each stretch
//! it shares with the previous request of the same agent, only `[start, length]` there,
//! and for the rest the blobs' hashes. So the usual request (the previous one plus the
//! new messages) costs a few dozen bytes besides its new messages, and the log grows
//! linearly with the conversation. Reassembling gives back the exact bytes sent (the
//! writer checks that before it writes, and stores the body whole when it would not).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// One line of the log.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLine {
    /// A piece of a body, stored once.
    Blob(BlobLine),
    /// A request as it was sent.
    Request(Box<RequestLine>),
    /// How a request ended.
    Response(ResponseLine),
}

/// A piece of a body under its hash: JSON as it was sent, or (for text that cannot sit
/// on one line of the log) the same bytes as a string, or an edit of an earlier piece
/// (an element that changed a little since the agent's previous request, such as an
/// Anthropic turn losing its cache marker).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct BlobLine {
    /// The content hash (SHA-256 of the bytes, first 16 bytes in hex).
    pub h: String,
    /// The bytes, when they are JSON without a line break.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<Box<RawValue>>,
    /// The bytes otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The earlier piece this one edits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Where the edit starts in it (bytes).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub at: usize,
    /// How many of its bytes the edit removes there.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut: usize,
    /// What the edit puts there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub put: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A request as sent.
#[derive(Debug, Serialize, Deserialize)]
pub struct RequestLine {
    /// Its number in the session, from 1 in send order (all agents).
    pub index: usize,
    /// `main` or a subagent's id.
    pub agent: String,
    /// The main agent's turn it was sent in (`inspect::main_turn`).
    pub turn: u32,
    /// When it was sent, ms since the epoch.
    pub time_ms: u64,
    /// The provider's name.
    pub provider: String,
    /// The body's wire format (absent in logs written before it was recorded: it is
    /// then told by the endpoint, see [`RequestLine::wire_format`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<crate::llm::WireFormat>,
    /// The model asked for.
    pub model: String,
    /// The endpoint (secret parameters redacted).
    pub url: String,
    /// Headers in send order, secrets redacted; left out when they are those of the
    /// agent's previous request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<(String, String)>>,
    /// How long the body was.
    pub bytes: usize,
    /// The body.
    pub body: BodyRef,
}

impl RequestLine {
    /// The body's wire format: as recorded, else told by the endpoint (each format has
    /// its own path).
    pub fn wire_format(&self) -> crate::llm::WireFormat {
        use crate::llm::WireFormat;
        self.format.unwrap_or_else(|| {
            let path = self.url.split('?').next().unwrap_or_default();
            if path.ends_with("/messages") {
                WireFormat::Anthropic
            } else if path.ends_with("/responses") {
                WireFormat::Responses
            } else {
                WireFormat::ChatCompletions
            }
        })
    }
}

/// A body: whole, or field by field.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BodyRef {
    /// The body is one blob.
    Whole(String),
    /// A JSON object; runs in array fields refer to request `base`.
    Object {
        /// The request runs refer to (the previous one of the same agent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<usize>,
        /// The fields in order.
        fields: Vec<FieldRef>,
    },
}

/// One top-level field of a body; with none of `v`, `h` and `a`, its value is the base
/// request's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FieldRef {
    /// The key.
    pub k: String,
    /// A small value, inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v: Option<Box<RawValue>>,
    /// A large value, by hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h: Option<String>,
    /// An array, element by element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<Vec<Item>>,
}

/// Elements of an array field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Item {
    /// `[start, length]`: that many elements of the base request's same field.
    Run([usize; 2]),
    /// One element, by hash.
    Blob(String),
}

/// How a request ended.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ResponseLine {
    /// The request's index.
    pub index: usize,
    /// The last attempt's HTTP status (`None`: no response came).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Input tokens at the normal rate.
    #[serde(default)]
    pub input: u64,
    /// Output tokens.
    #[serde(default)]
    pub output: u64,
    /// Input tokens read from the cache.
    #[serde(default)]
    pub cache_read: u64,
    /// Input tokens written to the cache.
    #[serde(default)]
    pub cache_write: u64,
    /// Whether the provider reported usage at all.
    #[serde(default)]
    pub usage_reported: bool,
    /// `stop`, `length`, `tool_use`, `error` or `aborted`.
    pub stop_reason: String,
    /// What went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Time to the first streamed change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<u64>,
    /// Time to the end.
    pub duration_ms: u64,
    /// Output tokens per second of streaming (after the first token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_s: Option<f64>,
    /// Retries made.
    #[serde(default)]
    pub retries: u32,
}

impl ResponseLine {
    /// All input tokens the provider counted (normal, cache read and cache write).
    pub fn input_total(&self) -> u64 {
        self.input + self.cache_read + self.cache_write
    }
}

/// The content hash of a piece of a request: SHA-256, its first 16 bytes (a collision by
/// chance needs about 2^64 distinct pieces); written in the log as 32 hex digits. Held
/// as bytes, not as its hex: a long session's request log knows one per message, and as
/// strings they held ~0.5 MB per 5,000 messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlobId([u8; 16]);

impl BlobId {
    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(bytes);
        let mut id = [0; 16];
        id.copy_from_slice(&digest[..16]);
        Self(id)
    }

    /// The id a hash written in the log names (`None`: not 32 hex digits).
    pub fn parse(hex: &str) -> Option<Self> {
        if hex.len() != 32 || !hex.is_ascii() {
            return None;
        }
        let mut id = [0; 16];
        for (byte, pair) in id.iter_mut().zip(hex.as_bytes().chunks(2)) {
            let pair = std::str::from_utf8(pair).ok()?;
            *byte = u8::from_str_radix(pair, 16).ok()?;
        }
        Some(Self(id))
    }
}

impl std::fmt::Display for BlobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_id_reads_back_from_its_hex_and_nothing_else_does() {
        let id = BlobId::of(b"some text");
        let hex = id.to_string();
        assert_eq!(hex.len(), 32);
        assert!(
            hex.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(BlobId::parse(&hex), Some(id));
        assert_eq!(BlobId::parse(&hex[1..]), None);
        assert_eq!(BlobId::parse(&format!("{}zz", &hex[2..])), None);
        assert_eq!(BlobId::parse(&"é".repeat(16)), None);
    }
    use crate::llm::WireFormat;

    /// A line as written before the wire format was recorded, for `url`.
    fn old_line(url: &str) -> RequestLine {
        serde_json::from_value(serde_json::json!({
            "index": 1, "agent": "main", "turn": 1, "time_ms": 0, "provider": "P",
            "model": "m", "url": url, "bytes": 2, "body": {"whole": "h"},
        }))
        .unwrap()
    }

    #[test]
    fn the_wire_format_is_read_or_told_by_the_endpoint() {
        let mut line = old_line("https://api.anthropic.com/v1/messages");
        assert_eq!(line.format, None);
        assert_eq!(line.wire_format(), WireFormat::Anthropic);
        assert_eq!(
            old_line("https://api.openai.com/v1/responses?x=1").wire_format(),
            WireFormat::Responses
        );
        assert_eq!(
            old_line("http://localhost:11434/v1/chat/completions").wire_format(),
            WireFormat::ChatCompletions
        );
        // Recorded, it wins; and it is written back as recorded.
        line.format = Some(WireFormat::Responses);
        assert_eq!(line.wire_format(), WireFormat::Responses);
        let text = serde_json::to_string(&line).unwrap();
        assert!(text.contains(r#""format":"responses""#), "{text}");
    }
}
