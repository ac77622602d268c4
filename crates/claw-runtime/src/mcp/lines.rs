//! A stdio server's output as lines, within a limit, and what a line that is not a
//! message says about itself: which request it answers (its top-level `id`, found even in
//! a line too long to keep) and why it cannot be read. No rmcp type here; the transport
//! in `client/stdio.rs` turns an unreadable reply into a failed call.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest line kept (one message); longer ones are read through and dropped, and the
/// request they answer fails with the reason. As rmcp's own limit and its HTTP client's.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of an `id` kept; a longer one is no id any request of ours has.
const ID_BYTES: usize = 256;

/// One line of output, without its newline.
#[derive(Debug)]
pub enum Line {
    /// A line within the limit.
    Whole(Vec<u8>),
    /// A line over the limit: its length and its top-level keys (the rest is gone).
    TooLong {
        /// Its length in bytes.
        bytes: u64,
        /// What it says at the top level.
        keys: TopLevel,
    },
}

/// Reads lines of at most `max` bytes; cancel-safe (a read interrupted between two
/// chunks goes on where it stopped), as a transport's `receive` must be.
pub struct LineReader<R> {
    inner: R,
    max: usize,
    buf: Vec<u8>,
    /// The line being read is over the limit: its length so far and its keys.
    too_long: Option<(u64, TopLevel)>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Lines of `inner`, each at most `max` bytes kept.
    pub fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            max,
            buf: Vec::new(),
            too_long: None,
        }
    }

    /// The next line; `Ok(None)` at the end of the output (an unfinished last line is
    /// no message and is dropped).
    pub async fn next(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(None);
            }
            let end = available.iter().position(|b| *b == b'\n');
            let chunk = &available[..end.unwrap_or(available.len())];
            match &mut self.too_long {
                Some((bytes, keys)) => {
                    keys.feed(chunk);
                    *bytes += chunk.len() as u64;
                }
                None if self.buf.len() + chunk.len() > self.max => {
                    let mut keys = TopLevel::default();
                    keys.feed(&self.buf);
                    keys.feed(chunk);
                    let bytes = (self.buf.len() + chunk.len()) as u64;
                    // What was kept of it goes now, not when the line ends.
                    self.buf = Vec::new();
                    self.too_long = Some((bytes, keys));
                }
                None => self.buf.extend_from_slice(chunk),
            }
            let used = chunk.len() + usize::from(end.is_some());
            self.inner.consume(used);
            if end.is_some() {
                return Ok(Some(match self.too_long.take() {
                    Some((bytes, keys)) => Line::TooLong { bytes, keys },
                    None => Line::Whole(std::mem::take(&mut self.buf)),
                }));
            }
        }
    }
}

/// What a JSON object says at its top level, read byte by byte without keeping it: the
/// text of its first `id` and whether it has a `method` (a request or notification of
/// the server's, not a reply).
#[derive(Debug, Default)]
pub struct TopLevel {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At the top level, the next string is a key.
    expect_key: bool,
    reading_key: bool,
    key: Vec<u8>,
    last_key: Vec<u8>,
    /// After `"id":` at the top level, until its value begins.
    id_next: bool,
    /// The `id`'s text while it is read, and whether it is a string.
    id_text: Option<Vec<u8>>,
    id_in_string: bool,
    id: Option<Vec<u8>>,
    has_method: bool,
}

impl TopLevel {
    /// The keys of `line` (a whole line).
    pub fn of(line: &[u8]) -> Self {
        let mut keys = Self::default();
        keys.feed(line);
        keys
    }

    /// Reads the next bytes of the object.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    /// The JSON text of the top-level `id`, if it has one.
    pub fn id(&self) -> Option<&[u8]> {
        self.id.as_deref()
    }

    /// Whether it has a top-level `method`: the server's request or notification.
    pub fn has_method(&self) -> bool {
        self.has_method
    }

    fn byte(&mut self, b: u8) {
        if self.id_text.is_some() && self.read_id(b) {
            return;
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.reading_key {
                    self.reading_key = false;
                    self.last_key = std::mem::take(&mut self.key);
                }
                return;
            }
            if self.reading_key && self.key.len() < 8 {
                self.key.push(b);
            }
            return;
        }
        if self.id_next && self.depth == 1 && !b.is_ascii_whitespace() {
            self.id_next = false;
            if self.id.is_none() && !matches!(b, b'{' | b'[') {
                self.id_text = Some(vec![b]);
                self.id_in_string = b == b'"';
                return;
            }
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.expect_key = false;
                    self.reading_key = true;
                    self.key.clear();
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.expect_key = self.depth == 1 && b == b'{';
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.expect_key = true,
            b':' if self.depth == 1 => match self.last_key.as_slice() {
                b"id" => self.id_next = true,
                b"method" => self.has_method = true,
                _ => {}
            },
            _ => {}
        }
    }

    /// One byte of the `id`'s value; false when the value ended before it (the byte is
    /// then read as usual).
    fn read_id(&mut self, b: u8) -> bool {
        let Some(text) = self.id_text.as_mut() else {
            return false;
        };
        if self.id_in_string {
            if text.len() < ID_BYTES {
                text.push(b);
            }
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.finish_id();
            }
            return true;
        }
        if matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace() {
            self.finish_id();
            return false;
        }
        if text.len() < ID_BYTES {
            text.push(b);
        }
        true
    }

    fn finish_id(&mut self) {
        if let Some(text) = self.id_text.take()
            && text.len() < ID_BYTES
        {
            self.id = Some(text);
        }
    }
}

/// Why a whole line that is no message cannot be read.
pub fn why_unreadable(line: &[u8]) -> String {
    if let Err(e) = std::str::from_utf8(line) {
        return format!(
            "it is not valid UTF-8 (byte {} of the line)",
            e.valid_up_to() + 1
        );
    }
    match serde_json::from_slice::<serde::de::IgnoredAny>(line) {
        Err(e) => format!("it is not valid JSON ({e})"),
        Ok(_) => "it is not a JSON-RPC message this client understands".to_owned(),
    }
}

/// Why a line over the limit cannot be read.
pub fn why_too_long(bytes: u64) -> String {
    format!(
        "it is longer than the {} MiB a reply may be ({:.1} MB)",
        MAX_LINE_BYTES / (1024 * 1024),
        bytes as f64 / 1e6
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(text: &[u8]) -> Option<String> {
        TopLevel::of(text)
            .id()
            .map(|id| String::from_utf8_lossy(id).into_owned())
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is() {
        assert_eq!(
            id_of(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#).as_deref(),
            Some("7")
        );
        assert_eq!(
            id_of(br#"{"result":{"id":1,"text":"a \"quoted\" id: 9"},"id":"req-2"}"#).as_deref(),
            Some(r#""req-2""#)
        );
        assert_eq!(id_of(b"{ \"id\" : 12 }").as_deref(), Some("12"));
        // Inner ids and strings that look like keys are not it.
        assert_eq!(id_of(br#"{"result":{"id":3},"text":"\"id\":4"}"#), None);
        assert_eq!(id_of(b"[1, {\"id\": 5}]"), None);
        assert_eq!(id_of(b"garbage \xff"), None);
        assert_eq!(
            id_of(b"{\"id\":8,\"result\":\"\xff\"}").as_deref(),
            Some("8")
        );
    }

    #[test]
    fn requests_of_the_server_are_told_apart_from_replies() {
        assert!(TopLevel::of(br#"{"id":1,"method":"ping"}"#).has_method());
        assert!(!TopLevel::of(br#"{"id":1,"result":{"method":"x"}}"#).has_method());
    }

    #[test]
    fn keys_are_read_across_chunks() {
        let line = br#"{"result":{"content":[{"text":"xxxxxxxx"}]},"id":42}"#;
        for cut in 0..line.len() {
            let mut keys = TopLevel::default();
            keys.feed(&line[..cut]);
            keys.feed(&line[cut..]);
            keys.feed(b"");
            assert_eq!(keys.id(), Some(&b"42"[..]), "cut at {cut}");
        }
    }

    #[tokio::test]
    async fn lines_over_the_limit_are_measured_and_dropped() {
        let input = b"{\"id\":1}\n{\"id\":2,\"result\":\"0123456789abcdef\"}\n{\"id\":3}\nhalf";
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(4, &input[..]), 16);
        let Some(Line::Whole(first)) = reader.next().await.unwrap() else {
            panic!("no first line");
        };
        assert_eq!(first, b"{\"id\":1}");
        let Some(Line::TooLong { bytes, keys }) = reader.next().await.unwrap() else {
            panic!("the long line was kept");
        };
        assert_eq!(bytes, 36);
        assert_eq!(keys.id(), Some(&b"2"[..]));
        assert!(matches!(reader.next().await.unwrap(), Some(Line::Whole(l)) if l == b"{\"id\":3}"));
        assert!(
            reader.next().await.unwrap().is_none(),
            "an unfinished line is no line"
        );
    }

    #[test]
    fn reasons_say_what_is_wrong() {
        assert_eq!(
            why_unreadable(b"{\"a\":\"\xff\"}"),
            "it is not valid UTF-8 (byte 7 of the line)"
        );
        assert!(why_unreadable(b"{\"a\":").starts_with("it is not valid JSON ("));
        assert_eq!(
            why_too_long(50_000_000),
            "it is longer than the 16 MiB a reply may be (50.0 MB)"
        );
    }
}
