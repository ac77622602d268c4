//! Output handling: the capped capture of each stream, line batching for streamed
//! updates, and middle truncation of what the model receives.

use serde_json::{Map, Value};
use std::collections::VecDeque;

/// Results longer than this many characters are cut in the middle.
pub const MAX_RESULT_CHARS: usize = 10_000;
/// Characters kept from the start of a cut result.
pub const KEEP_HEAD_CHARS: usize = 5_000;
/// Characters kept from the end of a cut result.
pub const KEEP_TAIL_CHARS: usize = 5_000;

/// Keeps the first `keep_head` and last `keep_tail` characters of `text` when it is longer
/// than `max_chars`, with a `--- truncated (N chars total) ---` line between them.
///
/// Counts Unicode scalar values, so a multibyte character is never split.
pub fn truncate_middle(text: &str, max_chars: usize, keep_head: usize, keep_tail: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let head_end = text
        .char_indices()
        .nth(keep_head)
        .map_or(text.len(), |(i, _)| i);
    let tail_start = match keep_tail {
        0 => text.len(),
        n => text
            .char_indices()
            .nth_back(n - 1)
            .map_or(0, |(i, _)| i)
            .max(head_end),
    };
    format!(
        "{}\n--- truncated ({total} chars total) ---\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// One output stream, kept up to a limit: the first half of the limit from the start
/// and the second half as a rolling window of the end. What falls between is counted.
///
/// Keeping the end matters because errors and summaries are usually printed last.
#[derive(Debug)]
pub(crate) struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_limit: usize,
    tail_limit: usize,
    total: u64,
}

impl Capture {
    /// A capture keeping at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        let head_limit = limit / 2;
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_limit,
            tail_limit: limit - head_limit,
            total: 0,
        }
    }

    /// Records `bytes`: kept while there is room, otherwise only counted.
    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_limit - self.head.len();
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        if rest.len() >= self.tail_limit {
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - self.tail_limit..]);
        } else {
            let overflow = (self.tail.len() + rest.len()).saturating_sub(self.tail_limit);
            self.tail.drain(..overflow);
            self.tail.extend(rest);
        }
    }

    /// Bytes received but not kept.
    pub fn dropped(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// Whether nothing was received.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Every byte received, when none was dropped.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        if self.dropped() > 0 {
            return None;
        }
        let mut bytes = self.head.clone();
        bytes.extend(self.tail.iter());
        Some(bytes)
    }

    /// The kept text (invalid UTF-8 replaced), with a marker where bytes were dropped.
    pub fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        let dropped = self.dropped();
        if dropped > 0 {
            text.push_str(&format!(
                "\n[... {dropped} bytes dropped here (output capture limit) ...]\n"
            ));
        }
        let (a, b) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(a.len() + b.len());
        tail.extend_from_slice(a);
        tail.extend_from_slice(b);
        text.push_str(&String::from_utf8_lossy(&tail));
        text
    }
}

/// Text waiting without a newline longer than this is streamed anyway (progress bars).
const MAX_PENDING_LINE: usize = 4096;

/// Collects output into complete lines for streamed updates, up to a budget.
#[derive(Debug)]
pub(crate) struct LineBatcher {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    budget: usize,
}

impl LineBatcher {
    /// A batcher that streams at most `budget` bytes in all.
    pub fn new(budget: usize) -> Self {
        Self {
            stdout: Vec::new(),
            stderr: Vec::new(),
            budget,
        }
    }

    /// Adds output of one stream.
    pub fn push(&mut self, stderr: bool, bytes: &[u8]) {
        let take = bytes.len().min(self.budget);
        self.budget -= take;
        let buffer = if stderr {
            &mut self.stderr
        } else {
            &mut self.stdout
        };
        buffer.extend_from_slice(&bytes[..take]);
    }

    /// Whether a batch is ready to send.
    pub fn ready(&self) -> bool {
        [&self.stdout, &self.stderr]
            .iter()
            .any(|b| b.contains(&b'\n') || b.len() > MAX_PENDING_LINE)
    }

    /// The complete lines of each stream as `{"stdout": ..., "stderr": ...}` (keys only
    /// for streams with lines), or `None` when no line is complete.
    pub fn take(&mut self) -> Option<Value> {
        let mut batch = Map::new();
        for (key, buffer) in [("stdout", &mut self.stdout), ("stderr", &mut self.stderr)] {
            let end = if buffer.len() > MAX_PENDING_LINE {
                buffer.len()
            } else {
                match buffer.iter().rposition(|&b| b == b'\n') {
                    Some(i) => i + 1,
                    None => continue,
                }
            };
            let lines: Vec<u8> = buffer.drain(..end).collect();
            batch.insert(
                key.to_owned(),
                Value::String(String::from_utf8_lossy(&lines).into_owned()),
            );
        }
        (!batch.is_empty()).then_some(Value::Object(batch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut capture = Capture::new(10);
        capture.push(b"abc");
        capture.push(b"defghijk");
        capture.push(b"lmnop");
        assert_eq!(capture.dropped(), 6);
        assert_eq!(
            capture.text(),
            "abcde\n[... 6 bytes dropped here (output capture limit) ...]\nlmnop"
        );
        let mut small = Capture::new(10);
        small.push(b"0123456789");
        assert_eq!(
            (small.dropped(), small.text()),
            (0, "0123456789".to_owned())
        );
    }

    #[test]
    fn batcher_sends_complete_lines() {
        let mut batcher = LineBatcher::new(1 << 20);
        batcher.push(false, b"one\ntw");
        batcher.push(true, b"err");
        assert!(batcher.ready());
        assert_eq!(batcher.take(), Some(serde_json::json!({"stdout": "one\n"})));
        assert!(!batcher.ready());
        batcher.push(false, b"o\n");
        batcher.push(true, b"!\n");
        assert_eq!(
            batcher.take(),
            Some(serde_json::json!({"stdout": "two\n", "stderr": "err!\n"}))
        );
        assert_eq!(batcher.take(), None);
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate_middle("short", 10, 2, 2), "short");
        assert_eq!(
            truncate_middle("ééééabcdèèèè", 8, 3, 2),
            "ééé\n--- truncated (12 chars total) ---\nèè"
        );
    }
}
