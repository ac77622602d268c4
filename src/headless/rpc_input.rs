//! RPC input, one line at a time: a line that is not UTF-8 or longer than the limit is
//! a bad line like any other (an error response, then the next line), and an oversize
//! line is skipped as it streams in, never held in memory.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// The default longest input line: 16 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// What the next read found.
#[derive(Debug, PartialEq, Eq)]
pub enum Input {
    /// A line (without its line ending).
    Line(String),
    /// A line that cannot be used; why, for the error response.
    Bad(String),
    /// The end of input.
    End,
}

/// Reads lines of at most `max` bytes from an async reader.
pub struct LineReader<R> {
    reader: BufReader<R>,
    max: usize,
    line: Vec<u8>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader of `input` that refuses lines longer than `max` bytes.
    pub fn new(input: R, max: usize) -> Self {
        Self {
            reader: BufReader::with_capacity(1 << 16, input),
            max,
            line: Vec::new(),
        }
    }

    /// The next line, bad line or the end; `Err` only when reading itself fails.
    pub async fn next(&mut self) -> std::io::Result<Input> {
        self.line.clear();
        // Bytes of a line over the limit, counted instead of kept.
        let mut oversize: Option<u64> = None;
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                if oversize.is_none() && self.line.is_empty() {
                    return Ok(Input::End);
                }
                // A last line without a newline is still a line.
                break;
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            match oversize.as_mut() {
                Some(bytes) => *bytes += chunk.len() as u64,
                None if self.line.len() + chunk.len() > self.max => {
                    oversize = Some((self.line.len() + chunk.len()) as u64);
                    // Let the memory go now: the line may be far longer still.
                    self.line = Vec::new();
                }
                None => self.line.extend_from_slice(chunk),
            }
            let used = newline.map_or(available.len(), |i| i + 1);
            self.reader.consume(used);
            if newline.is_some() {
                break;
            }
        }
        if let Some(bytes) = oversize {
            return Ok(Input::Bad(format!(
                "the line is {bytes} bytes, longer than the limit of {} bytes; it was skipped \
                 (--max-line-bytes raises the limit)",
                self.max
            )));
        }
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        match String::from_utf8(std::mem::take(&mut self.line)) {
            Ok(text) => Ok(Input::Line(text)),
            Err(e) => Ok(Input::Bad(format!(
                "the line is not valid UTF-8 (bad byte at offset {}); send UTF-8 JSON, one \
                 object per line",
                e.utf8_error().valid_up_to()
            ))),
        }
    }
}
