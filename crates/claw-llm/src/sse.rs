//! Server-sent events from a response body, decoded by `sse-stream` (linear in the body
//! size whatever the reads and events look like) behind a feed that caps the size of
//! one event, pauses now and then so that an abort is seen even inside a huge event, and
//! recognises HTML or JSON bodies; with an idle timeout that fires when no byte arrives
//! for too long.

mod feed;
mod idle;

use bytes::Bytes;
use feed::{EventBytes, Feed};
use futures::stream::{BoxStream, Stream, StreamExt};
use idle::IdleTimeout;
use sse_stream::SseByteStream;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

/// Default cap on the size of one event (its lines, as received): 16 MiB.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One decoded event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field, `message` when there was none.
    pub event: String,
    /// The `data:` lines joined with newlines.
    pub data: String,
}

/// What a body that is not an event stream looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    /// It starts with `<`: a web page (a login portal, a proxy's error page...).
    Html,
    /// It starts with `{` or `[`: a JSON document.
    Json,
}

impl BodyKind {
    /// The kind as people name it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Html => "HTML",
            Self::Json => "JSON",
        }
    }
}

/// Why reading an event stream stopped short.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// The connection failed while the body was read (reset, closed mid-body...).
    #[error("{0}")]
    Transport(String),
    /// No byte arrived for this long.
    #[error("no data for {0:?}")]
    Idle(Duration),
    /// A field was not UTF-8.
    #[error("{0}")]
    Utf8(String),
    /// The body was not an event stream.
    #[error("{0}")]
    Parse(String),
    /// One event grew past the cap without ending.
    #[error("an event is larger than {limit} bytes")]
    TooLarge {
        /// The cap, in bytes.
        limit: usize,
    },
    /// The body is a web page or a JSON document, not events.
    #[error("the body is {} rather than an event stream", kind.name())]
    NotAStream {
        /// What it looks like.
        kind: BodyKind,
        /// Its start, as text.
        body: String,
    },
}

/// How a body is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseOptions {
    /// A silence longer than this ends the stream with [`SseError::Idle`].
    pub idle: Option<Duration>,
    /// An event larger than this ends the stream with [`SseError::TooLarge`].
    pub max_event_bytes: usize,
}

impl Default for SseOptions {
    fn default() -> Self {
        Self {
            idle: None,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
        }
    }
}

/// Decoded events of one response body.
pub type SseStream = BoxStream<'static, Result<Event, SseError>>;

/// Decodes `body` into events. Comments (keep-alives) count as activity for the idle
/// timeout but yield nothing; blocks without data (e.g. only `event: ping`) are skipped.
pub fn events<S, E>(body: S, options: SseOptions) -> SseStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::fmt::Display,
{
    let bytes = body
        .map(|chunk| chunk.map_err(|e| SseError::Transport(e.to_string())))
        .boxed();
    let bytes: BoxStream<'static, Result<Bytes, SseError>> = match options.idle {
        Some(limit) => IdleTimeout::new(bytes, limit).boxed(),
        None => bytes,
    };
    let event_bytes = EventBytes::default();
    let feed = Feed::new(bytes, options.max_event_bytes, event_bytes.clone());
    Decoded {
        parser: SseByteStream::new(feed),
        event_bytes,
    }
    .boxed()
}

/// The parser's blocks as [`Event`]s, resetting the feed's count of one event's bytes.
struct Decoded<S: futures::TryStream> {
    parser: SseByteStream<S>,
    event_bytes: EventBytes,
}

impl<S> Stream for Decoded<S>
where
    S: Stream<Item = Result<Bytes, SseError>> + Unpin,
{
    type Item = Result<Event, SseError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            let block = match self.parser.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(error(e)))),
                Poll::Ready(Some(Ok(block))) => block,
            };
            self.event_bytes.store(0, Ordering::Relaxed);
            if let Some(data) = block.data {
                let event = block
                    .event
                    .filter(|name| !name.is_empty())
                    .unwrap_or_else(|| "message".to_owned());
                return Poll::Ready(Some(Ok(Event { event, data })));
            }
        }
    }
}

fn error(e: sse_stream::Error) -> SseError {
    match e {
        sse_stream::Error::Body(source) => match source.downcast::<SseError>() {
            Ok(ours) => *ours,
            Err(other) => SseError::Transport(other.to_string()),
        },
        sse_stream::Error::Utf8Parse(e) => SseError::Utf8(format!("a field is not UTF-8: {e}")),
        other => SseError::Parse(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    /// Feeds `chunks` as separate reads and collects `(event name, data)` pairs.
    fn decode(chunks: Vec<Vec<u8>>) -> Vec<Result<(String, String), SseError>> {
        let body = futures::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, std::io::Error>(Bytes::from(c))),
        );
        block_on(
            events(body, SseOptions::default())
                .map(|e| e.map(|e| (e.event, e.data)))
                .collect(),
        )
    }

    fn ok(event: &str, data: &str) -> Result<(String, String), SseError> {
        Ok((event.to_owned(), data.to_owned()))
    }

    /// Every way of cutting `bytes` in two (and into single bytes) decodes identically.
    fn assert_split_invariant(bytes: &[u8], expected: &[Result<(String, String), SseError>]) {
        assert_eq!(decode(vec![bytes.to_vec()]), expected, "whole");
        for cut in 1..bytes.len() {
            let parts = vec![bytes[..cut].to_vec(), bytes[cut..].to_vec()];
            assert_eq!(decode(parts), expected, "cut at byte {cut}");
        }
        let singles = bytes.iter().map(|b| vec![*b]).collect();
        assert_eq!(decode(singles), expected, "one byte per read");
    }

    #[test]
    fn events_split_across_reads_at_every_byte() {
        let stream = b"event: content_block_delta\ndata: {\"text\":\"h\xc3\xa9llo\"}\n\nevent: ping\ndata: {}\n\n";
        assert_split_invariant(
            stream,
            &[
                ok("content_block_delta", "{\"text\":\"h\u{e9}llo\"}"),
                ok("ping", "{}"),
            ],
        );
    }

    #[test]
    fn crlf_and_cr_line_endings() {
        let crlf = b"event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n";
        assert_split_invariant(crlf, &[ok("a", "1"), ok("message", "2")]);
        let cr = b"event: a\rdata: 1\r\rdata: 2\r\r: bye\n";
        assert_split_invariant(cr, &[ok("a", "1"), ok("message", "2")]);
    }

    #[test]
    fn comments_keep_alives_and_blocks_without_data_are_skipped() {
        let stream = b": keep-alive\n\n: OPENROUTER PROCESSING\n\nevent: ping\n\ndata: {\"x\":1}\n: mid-event comment\n\n";
        assert_split_invariant(stream, &[ok("message", "{\"x\":1}")]);
    }

    #[test]
    fn multi_line_data_fields_join_with_newlines() {
        let stream = b"data: {\"a\":\ndata: 1}\n\ndata:no-space\n\n";
        assert_split_invariant(
            stream,
            &[ok("message", "{\"a\":\n1}"), ok("message", "no-space")],
        );
    }

    #[test]
    fn large_reads_are_sliced_without_losing_bytes() {
        let mut stream = Vec::new();
        let mut expected = Vec::new();
        for i in 0..5000 {
            let data = format!("{{\"i\":{i},\"pad\":\"{}\"}}", "é".repeat(i % 7));
            stream.extend_from_slice(format!("event: e{i}\ndata: {data}\n\n").as_bytes());
            expected.push(ok(&format!("e{i}"), &data));
        }
        assert!(stream.len() > 2 * feed::SLICE);
        assert_eq!(decode(vec![stream]), expected);
    }

    #[test]
    fn one_huge_event_decodes_whole() {
        let text = "é".repeat(3 * feed::SLICE);
        let body = format!("data: {text}\n\ndata: next\n\n");
        let reads = body.as_bytes().chunks(10_000).map(<[u8]>::to_vec).collect();
        assert_eq!(decode(reads), [ok("message", &text), ok("message", "next")]);
    }

    #[test]
    fn an_event_past_the_cap_ends_the_stream_with_an_error() {
        let body = futures::stream::iter([
            Ok::<_, std::io::Error>(Bytes::from_static(b"data: small\n\n")),
            Ok(Bytes::from(format!("data: {}", "x".repeat(300_000)))),
        ]);
        let options = SseOptions {
            max_event_bytes: 200_000,
            ..SseOptions::default()
        };
        let out: Vec<_> = block_on(events(body, options).collect());
        assert_eq!(out.len(), 2, "{:?}", out.get(2));
        assert_eq!(out[0].as_ref().map(|e| e.data.as_str()), Ok("small"));
        assert_eq!(out[1], Err(SseError::TooLarge { limit: 200_000 }));
    }

    #[test]
    fn many_events_adding_up_past_the_cap_are_fine() {
        let event = format!("data: {}\n\n", "y".repeat(1000));
        let reads: Vec<_> = (0..3)
            .map(|_| Ok::<_, std::io::Error>(Bytes::from(event.repeat(100))))
            .collect();
        let options = SseOptions {
            max_event_bytes: 10_000,
            ..SseOptions::default()
        };
        let out: Vec<_> = block_on(events(futures::stream::iter(reads), options).collect());
        assert_eq!(out.len(), 300);
        assert!(out.iter().all(Result::is_ok));
    }

    #[test]
    fn an_unterminated_event_is_not_emitted() {
        assert_eq!(decode(vec![b"data: cut".to_vec()]), []);
    }

    #[test]
    fn invalid_utf8_in_data_is_an_error() {
        let out = decode(vec![b"data: \xff\xfe\n\n".to_vec()]);
        assert!(matches!(&out[..], [Err(SseError::Utf8(_))]), "{out:?}");
    }

    #[test]
    fn an_html_page_is_reported_as_such() {
        let out = decode(vec![b"<html><body>Sign in</body></html>\n".to_vec()]);
        assert_eq!(
            out,
            [Err(SseError::NotAStream {
                kind: BodyKind::Html,
                body: "<html><body>Sign in</body></html>\n".into()
            })]
        );
    }

    #[test]
    fn transport_errors_pass_through() {
        let body = futures::stream::iter(vec![
            Ok(Bytes::from_static(b"data: 1\n\n")),
            Err(std::io::Error::other("connection reset")),
        ]);
        let out: Vec<_> = block_on(events(body, SseOptions::default()).collect());
        assert_eq!(out.len(), 2);
        assert_eq!(out[1], Err(SseError::Transport("connection reset".into())));
    }
}
