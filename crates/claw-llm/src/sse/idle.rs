//! Ends a byte stream with [`SseError::Idle`] when no chunk arrives for too long.

use super::SseError;
use bytes::Bytes;
use futures::stream::{Stream, StreamExt};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// Ends a byte stream with [`SseError::Idle`] when it stays silent for `limit`.
pub(super) struct IdleTimeout<S> {
    inner: S,
    limit: Duration,
    last_activity: Instant,
    // Armed lazily and re-armed only when it fires early: resetting a timer on every
    // chunk would cost a timer-wheel update per read.
    sleep: Option<Pin<Box<Sleep>>>,
    done: bool,
}

impl<S> IdleTimeout<S> {
    pub(super) fn new(inner: S, limit: Duration) -> Self {
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
    use super::super::{SseOptions, events};
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn silence_longer_than_the_idle_limit_ends_the_stream() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<Result<Bytes, std::io::Error>>();
        tx.unbounded_send(Ok(Bytes::from_static(b": ping\n\ndata: 1\n\n")))
            .unwrap();
        let options = SseOptions {
            idle: Some(Duration::from_millis(500)),
            ..SseOptions::default()
        };
        let mut stream = events(rx, options);
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
