//! What the SSE parser is fed: the body cut into bounded slices, counted against the
//! size cap of one event, with a pause now and then so that an abort is seen during a
//! huge event, and a look at the first bytes to recognise bodies that are HTML or JSON.

use super::{BodyKind, SseError};
use bytes::{Bytes, BytesMut};
use futures::stream::{Stream, StreamExt};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

/// Largest slice handed to the parser at once. The size of one event is counted in
/// slices of at most a sixteenth of the cap: an event no larger than the cap always
/// passes, and one larger than the cap plus one slice never does.
pub(super) const SLICE: usize = 64 * 1024;
/// Smallest slice, so that tiny caps do not mean tiny reads.
const MIN_SLICE: usize = 1024;

/// Bytes handed on without the body ever making the task wait, after which the feed
/// returns `Pending` once (waking itself at once): a body that is always ready (a fast
/// local server, a huge event already buffered) would otherwise keep the task busy, and
/// an abort waiting for it, until the whole event is decoded.
pub(super) const PAUSE_AFTER: usize = 256 * 1024;

/// How much of a body that is not an event stream is kept to show in the error.
pub(super) const PREVIEW: usize = 64 * 1024;

/// Bytes fed to the parser since it last completed an event; the decoder resets it.
pub(super) type EventBytes = Arc<AtomicUsize>;

/// The first significant bytes of the body decide whether it is parsed as events.
enum Sniff {
    /// Only whitespace so far.
    Undecided,
    /// An event stream (or at least not recognisably something else).
    Events,
    /// HTML or JSON: kept (up to [`PREVIEW`]) for the error, never parsed.
    Other(BodyKind, BytesMut),
}

/// Feeds the parser; see the module docs.
pub(super) struct Feed<S> {
    inner: S,
    rest: Bytes,
    event_bytes: EventBytes,
    max_event_bytes: usize,
    slice: usize,
    since_pause: usize,
    sniff: Sniff,
    done: bool,
}

impl<S> Feed<S> {
    pub(super) fn new(inner: S, max_event_bytes: usize, event_bytes: EventBytes) -> Self {
        Self {
            inner,
            rest: Bytes::new(),
            event_bytes,
            max_event_bytes,
            slice: (max_event_bytes / 16).clamp(MIN_SLICE, SLICE),
            since_pause: 0,
            sniff: Sniff::Undecided,
            done: false,
        }
    }

    /// Sorts a chunk: `Some` to parse it, `None` while an HTML or JSON body is kept.
    fn look(&mut self, chunk: Bytes) -> Option<Bytes> {
        match &mut self.sniff {
            Sniff::Events => Some(chunk),
            Sniff::Other(_, kept) => {
                let room = PREVIEW.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
                None
            }
            Sniff::Undecided => {
                let significant = chunk
                    .strip_prefix(b"\xEF\xBB\xBF")
                    .unwrap_or(&chunk)
                    .iter()
                    .find(|b| !b.is_ascii_whitespace());
                let kind = match significant {
                    None => return Some(chunk),
                    Some(b'<') => BodyKind::Html,
                    Some(b'{' | b'[') => BodyKind::Json,
                    Some(_) => {
                        self.sniff = Sniff::Events;
                        return Some(chunk);
                    }
                };
                self.sniff = Sniff::Other(kind, BytesMut::new());
                self.look(chunk)
            }
        }
    }

    /// The error for a body that turned out not to be an event stream, if it was one.
    fn not_a_stream(&mut self) -> Option<SseError> {
        match std::mem::replace(&mut self.sniff, Sniff::Events) {
            Sniff::Other(kind, kept) => Some(SseError::NotAStream {
                kind,
                body: String::from_utf8_lossy(&kept).into_owned(),
            }),
            _ => None,
        }
    }

    fn end(&mut self, item: Option<SseError>) -> Poll<Option<Result<Bytes, SseError>>> {
        self.done = true;
        Poll::Ready(item.map(Err))
    }
}

impl<S> Stream for Feed<S>
where
    S: Stream<Item = Result<Bytes, SseError>> + Unpin,
{
    type Item = Result<Bytes, SseError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        loop {
            if !this.rest.is_empty() {
                if this.since_pause >= PAUSE_AFTER {
                    this.since_pause = 0;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                let slice = this.rest.split_to(this.rest.len().min(this.slice));
                this.since_pause += slice.len();
                let fed = this.event_bytes.fetch_add(slice.len(), Ordering::Relaxed) + slice.len();
                if fed > this.max_event_bytes {
                    let limit = this.max_event_bytes;
                    return this.end(Some(SseError::TooLarge { limit }));
                }
                return Poll::Ready(Some(Ok(slice)));
            }
            match this.inner.poll_next_unpin(cx) {
                Poll::Pending => {
                    this.since_pause = 0;
                    return Poll::Pending;
                }
                Poll::Ready(None) => {
                    let error = this.not_a_stream();
                    return this.end(error);
                }
                Poll::Ready(Some(Err(e))) => {
                    let error = this.not_a_stream().unwrap_or(e);
                    return this.end(Some(error));
                }
                Poll::Ready(Some(Ok(chunk))) => {
                    if let Some(chunk) = this.look(chunk) {
                        this.rest = chunk;
                    } else if matches!(&this.sniff, Sniff::Other(_, kept) if kept.len() >= PREVIEW)
                    {
                        let error = this.not_a_stream();
                        return this.end(error);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    fn feed(
        chunks: Vec<&'static [u8]>,
        max: usize,
    ) -> Feed<impl Stream<Item = Result<Bytes, SseError>> + Unpin> {
        let inner = futures::stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from_static(c))));
        Feed::new(inner, max, EventBytes::default())
    }

    fn drain<S: Stream<Item = Result<Bytes, SseError>> + Unpin>(
        feed: Feed<S>,
    ) -> (Vec<u8>, Option<SseError>) {
        block_on(async {
            let mut feed = feed;
            let mut bytes = Vec::new();
            while let Some(item) = feed.next().await {
                match item {
                    Ok(slice) => {
                        assert!(slice.len() <= SLICE);
                        bytes.extend_from_slice(&slice);
                    }
                    Err(e) => return (bytes, Some(e)),
                }
            }
            (bytes, None)
        })
    }

    #[test]
    fn big_reads_are_handed_on_whole_in_bounded_slices() {
        let big: &'static [u8] = Box::leak(vec![b'x'; 5 * SLICE + 17].into_boxed_slice());
        let (bytes, error) = drain(feed(vec![b"data: ", big, b"\n\n"], usize::MAX));
        assert_eq!(error, None);
        assert_eq!(bytes.len(), 6 + big.len() + 2);
    }

    #[test]
    fn bytes_past_the_cap_without_a_complete_event_fail() {
        let big: &'static [u8] = Box::leak(vec![b'x'; 4 * SLICE].into_boxed_slice());
        let (bytes, error) = drain(feed(vec![b"data: ", big], 2 * SLICE));
        assert_eq!(error, Some(SseError::TooLarge { limit: 2 * SLICE }));
        assert!(bytes.len() <= 2 * SLICE, "{}", bytes.len());
    }

    #[test]
    fn html_and_json_bodies_are_recognised_and_kept_for_the_error() {
        let (bytes, error) = drain(feed(
            vec![b"\r\n  <!DOCTYPE html>", b"<title>Login</title>"],
            SLICE,
        ));
        assert_eq!(bytes, b"");
        assert_eq!(
            error,
            Some(SseError::NotAStream {
                kind: BodyKind::Html,
                body: "\r\n  <!DOCTYPE html><title>Login</title>".into()
            })
        );
        let (_, error) = drain(feed(vec![b"\xEF\xBB\xBF{\"error\":", b"\"no\"}"], SLICE));
        assert_eq!(
            error,
            Some(SseError::NotAStream {
                kind: BodyKind::Json,
                body: "\u{feff}{\"error\":\"no\"}".into()
            })
        );
    }

    #[test]
    fn event_streams_pass_unchanged_whatever_they_start_with() {
        for body in [
            &b"\n\n: ping\n\n"[..],
            b"event: a\ndata: <b>\n\n",
            b"data: {}\n\n",
            b"  \n",
        ] {
            let (bytes, error) = drain(feed(vec![body], SLICE));
            assert_eq!((bytes.as_slice(), error), (body, None));
        }
    }

    #[test]
    fn an_always_ready_body_pauses_the_task_now_and_then() {
        let big: &'static [u8] = Box::leak(vec![b'x'; 3 * PAUSE_AFTER].into_boxed_slice());
        let mut feed = feed(vec![big], usize::MAX);
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut polls = Vec::new();
        loop {
            match Pin::new(&mut feed).poll_next(&mut cx) {
                Poll::Ready(None) => break,
                Poll::Ready(Some(item)) => polls.push(item.map(|b| b.len()).ok()),
                Poll::Pending => polls.push(None),
            }
        }
        let pauses = polls.iter().filter(|p| p.is_none()).count();
        assert_eq!(pauses, 2, "{polls:?}");
    }
}
