//! Server-sent events from a response body: `eventsource-stream` over the raw bytes, with
//! an idle timeout that fires when no byte arrives for too long.

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures::stream::{BoxStream, Stream, StreamExt};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

pub use eventsource_stream::Event;

/// Why reading an event stream stopped short.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseError {
    /// The connection failed while the body was read (reset, closed mid-body...).
    Transport(String),
    /// No byte arrived for this long.
    Idle(Duration),
    /// The body was not UTF-8.
    Utf8(String),
    /// The body was not an event stream.
    Parse(String),
}

/// Decoded events of one response body.
pub type SseStream = BoxStream<'static, Result<Event, SseError>>;

/// Largest slice handed to the parser at once. `eventsource-stream` copies the unparsed
/// rest of its buffer after every line, so big reads would cost quadratic time; cutting
/// them up (zero-copy with `Bytes`) keeps decoding linear whatever the read size.
const MAX_SLICE: usize = 1024;

/// Decodes `body` into events; with `idle`, a silence longer than it ends the stream
/// with [`SseError::Idle`]. Comments (keep-alives) count as activity but yield nothing.
pub fn events<S, E>(body: S, idle: Option<Duration>) -> SseStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::fmt::Display,
{
    let bytes = body
        .map(|chunk| chunk.map_err(|e| SseError::Transport(e.to_string())))
        .flat_map(|chunk| futures::stream::iter(slices(chunk)))
        .boxed();
    let bytes: BoxStream<'static, Result<Bytes, SseError>> = match idle {
        Some(limit) => IdleTimeout::new(bytes, limit).boxed(),
        None => bytes,
    };
    bytes
        .eventsource()
        .map(|event| {
            event.map_err(|e| match e {
                EventStreamError::Transport(e) => e,
                EventStreamError::Utf8(e) => SseError::Utf8(e.to_string()),
                EventStreamError::Parser(e) => SseError::Parse(e.to_string()),
            })
        })
        .boxed()
}

fn slices(chunk: Result<Bytes, SseError>) -> Vec<Result<Bytes, SseError>> {
    match chunk {
        Ok(mut bytes) if bytes.len() > MAX_SLICE => {
            let mut out = Vec::with_capacity(bytes.len() / MAX_SLICE + 1);
            while bytes.len() > MAX_SLICE {
                out.push(Ok(bytes.split_to(MAX_SLICE)));
            }
            out.push(Ok(bytes));
            out
        }
        other => vec![other],
    }
}

/// Ends a byte stream with [`SseError::Idle`] when it stays silent for `limit`.
struct IdleTimeout<S> {
    inner: S,
    limit: Duration,
    last_activity: Instant,
    // Armed lazily and re-armed only when it fires early: resetting a timer on every
    // chunk would cost a timer-wheel update per read.
    sleep: Option<Pin<Box<Sleep>>>,
    done: bool,
}

impl<S> IdleTimeout<S> {
    fn new(inner: S, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            last_activity: Instant::now(),
            sleep: None,
            done: false,
        }
    }
}

impl<S> Stream for IdleTimeout<S>
where
    S: Stream<Item = Result<Bytes, SseError>> + Unpin,
{
    type Item = Result<Bytes, SseError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if let Poll::Ready(item) = this.inner.poll_next_unpin(cx) {
            this.last_activity = Instant::now();
            this.done = item.is_none();
            return Poll::Ready(item);
        }
        // Without a Tokio timer (polled outside a runtime) there is no idle limit rather
        // than a panic.
        if tokio::runtime::Handle::try_current().is_err() {
            return Poll::Pending;
        }
        loop {
            let deadline = this.last_activity + this.limit;
            let sleep = this
                .sleep
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
            if sleep.deadline() != deadline {
                sleep.as_mut().reset(deadline);
            }
            match sleep.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(()) if Instant::now() >= deadline => {
                    this.done = true;
                    return Poll::Ready(Some(Err(SseError::Idle(this.limit))));
                }
                Poll::Ready(()) => {}
            }
        }
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
            events(body, None)
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
        // A bare CR may be the first half of a CRLF, so the parser needs the next byte
        // to end a line; here a keep-alive comment supplies it.
        let cr = b"event: a\rdata: 1\r\rdata: 2\r\r: bye\n";
        assert_split_invariant(cr, &[ok("a", "1"), ok("message", "2")]);
    }

    #[test]
    fn comments_and_keep_alives_are_skipped() {
        let stream =
            b": keep-alive\n\n: OPENROUTER PROCESSING\n\ndata: {\"x\":1}\n: mid-event comment\n\n";
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
        for i in 0..500 {
            let data = format!("{{\"i\":{i},\"pad\":\"{}\"}}", "é".repeat(i % 7));
            stream.extend_from_slice(format!("event: e{i}\ndata: {data}\n\n").as_bytes());
            expected.push(ok(&format!("e{i}"), &data));
        }
        assert!(stream.len() > 4 * MAX_SLICE);
        assert_eq!(decode(vec![stream]), expected);
    }

    #[test]
    fn an_unterminated_event_is_not_emitted() {
        assert_eq!(decode(vec![b"data: cut".to_vec()]), []);
    }

    #[test]
    fn transport_errors_pass_through() {
        let body = futures::stream::iter(vec![
            Ok(Bytes::from_static(b"data: 1\n\n")),
            Err(std::io::Error::other("connection reset")),
        ]);
        let out: Vec<_> = block_on(events(body, None).collect());
        assert_eq!(out.len(), 2);
        assert_eq!(out[1], Err(SseError::Transport("connection reset".into())));
    }

    #[tokio::test(start_paused = true)]
    async fn silence_longer_than_the_idle_limit_ends_the_stream() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<Result<Bytes, std::io::Error>>();
        tx.unbounded_send(Ok(Bytes::from_static(b": ping\n\ndata: 1\n\n")))
            .unwrap();
        let mut stream = events(rx, Some(Duration::from_millis(500)));
        assert_eq!(stream.next().await.unwrap().unwrap().data, "1");
        tokio::time::advance(Duration::from_millis(400)).await;
        tx.unbounded_send(Ok(Bytes::from_static(b": keep-alive\n\n")))
            .unwrap();
        let started = Instant::now();
        let end = stream.next().await;
        // The keep-alive at 400 ms restarted the clock: the timeout fires 500 ms later.
        assert_eq!(end, Some(Err(SseError::Idle(Duration::from_millis(500)))));
        assert_eq!(started.elapsed(), Duration::from_millis(500));
        assert!(stream.next().await.is_none());
    }
}
