//! A request's body on its way out: bytes written once, or a body written while it is
//! sent, in chunks of [`CHUNK`] bytes on a blocking thread as the HTTP client takes
//! them. Each attempt writes it anew; the exact length goes ahead as `Content-Length`
//! (some servers refuse a chunked upload).

use crate::body::{BodyOut, BodySource};
use bytes::Bytes;
use futures::Stream;
use std::io;
use tokio::sync::mpsc;

/// Bytes per chunk of a body written while it is sent.
pub(crate) const CHUNK: usize = 64 * 1024;
/// Chunks written ahead of the HTTP client: what a body being sent holds at most.
const AHEAD: usize = 2;

/// A request body.
#[derive(Clone, Debug)]
pub(crate) enum Payload {
    /// Written once, sent as it is by every attempt.
    Bytes(Bytes),
    /// Written anew for each attempt while it is sent.
    Written(BodySource),
}

impl Payload {
    /// Its length in bytes.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Bytes(bytes) => bytes.len(),
            Self::Written(source) => source.size(),
        }
    }

    /// The body for one attempt. A written one is produced as the client reads it (it
    /// must be polled inside a Tokio runtime).
    pub(crate) fn body(&self) -> reqwest::Body {
        match self {
            Self::Bytes(bytes) => reqwest::Body::from(bytes.clone()),
            Self::Written(source) => reqwest::Body::wrap_stream(chunks(source.clone())),
        }
    }
}

/// `source` as chunks of [`CHUNK`] bytes, written on a blocking thread no further than
/// [`AHEAD`] chunks before the reader. When the reader goes away (the call ended or was
/// cut), the writing stops at its next chunk.
fn chunks(source: BodySource) -> impl Stream<Item = io::Result<Bytes>> + Send + 'static {
    let (tx, mut rx) = mpsc::channel(AHEAD);
    tokio::task::spawn_blocking(move || {
        let mut out = Chunks {
            chunk: Vec::with_capacity(CHUNK),
            tx: tx.clone(),
        };
        let written = source
            .write_to(&mut out)
            .map_err(io::Error::other)
            .and_then(|()| out.send());
        if let Err(e) = written {
            // The reader learns why its body stopped short (it is gone if that is why).
            let _ = tx.blocking_send(Err(e));
        }
    });
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// Cuts what is written into chunks and hands each to the reader as it fills.
struct Chunks {
    chunk: Vec<u8>,
    tx: mpsc::Sender<io::Result<Bytes>>,
}

impl Chunks {
    /// Hands the chunk so far to the reader, waiting while it is [`AHEAD`] chunks behind.
    fn send(&mut self) -> io::Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(CHUNK));
        self.tx
            .blocking_send(Ok(Bytes::from(chunk)))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the request was dropped"))
    }
}

impl io::Write for Chunks {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // A long string comes in one write: it is cut, so no chunk passes the size.
        let room = CHUNK - self.chunk.len();
        let taken = buf.len().min(room);
        self.chunk.extend_from_slice(&buf[..taken]);
        if self.chunk.len() == CHUNK {
            self.send()?;
        }
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl BodyOut for Chunks {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{BodyPlan, Measured, WriteBody, measure};
    use futures::StreamExt;
    use serde_json::{Map, json};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// A body of `elements` list elements of 10 KB, counting the bytes written.
    struct Counted {
        elements: usize,
        written: AtomicUsize,
        ended: AtomicBool,
    }

    impl WriteBody for Counted {
        fn write_to(&self, out: &mut dyn BodyOut) -> Result<(), serde_json::Error> {
            let mut fields = Map::new();
            fields.insert("model".into(), json!("m"));
            let mut out = Counting {
                out,
                written: &self.written,
            };
            let result = BodyPlan::new(fields, "messages").write(&mut out, |list| {
                for n in 0..self.elements {
                    // Quotes and a line break, which JSON escapes.
                    list.write(&format!("{n}: \"x\"\n").repeat(1_000));
                }
            });
            self.ended.store(true, Ordering::SeqCst);
            result
        }
    }

    /// Counts the bytes `out` took.
    struct Counting<'a> {
        out: &'a mut dyn BodyOut,
        written: &'a AtomicUsize,
    }

    impl io::Write for Counting<'_> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = self.out.write(buf)?;
            self.written.fetch_add(n, Ordering::SeqCst);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            self.out.flush()
        }
    }

    impl BodyOut for Counting<'_> {}

    fn counted(elements: usize) -> Arc<Counted> {
        Arc::new(Counted {
            elements,
            written: AtomicUsize::new(0),
            ended: AtomicBool::new(false),
        })
    }

    fn source(body: Arc<Counted>) -> BodySource {
        match measure(body, CHUNK).unwrap() {
            Measured::Source(source) => source,
            Measured::Whole(bytes) => panic!("kept whole: {} bytes", bytes.len()),
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_long_body_comes_in_chunks_that_add_up_to_it() {
        let source = source(counted(40));
        let chunks: Vec<Bytes> = chunks(source.clone())
            .map(|chunk| chunk.unwrap())
            .collect()
            .await;
        let (last, full) = chunks.split_last().unwrap();
        assert!(full.iter().all(|c| c.len() == CHUNK));
        assert!(!last.is_empty() && last.len() <= CHUNK);
        let sent: Vec<u8> = chunks.concat();
        assert_eq!(sent.len(), source.size());
        assert_eq!(sent, source.to_vec().unwrap());
        let value: serde_json::Value = serde_json::from_slice(&sent).unwrap();
        assert_eq!(value["messages"].as_array().unwrap().len(), 40);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_body_nobody_reads_is_written_no_further() {
        let body = counted(1_000);
        let source = source(body.clone());
        body.written.store(0, Ordering::SeqCst);
        body.ended.store(false, Ordering::SeqCst);
        let mut sending = Box::pin(chunks(source));
        assert_eq!(sending.next().await.unwrap().unwrap().len(), CHUNK);
        drop(sending);
        // The writer notices at its next chunk and stops.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !body.ended.load(Ordering::SeqCst) {
            assert!(std::time::Instant::now() < deadline, "the writer went on");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        // 10 MB in all; what was written is what fits in the chunks ahead.
        let written = body.written.load(Ordering::SeqCst);
        assert!(written <= (AHEAD + 2) * CHUNK, "{written} bytes written");
    }

    #[test]
    fn a_body_of_one_chunk_is_kept_whole() {
        let Ok(Measured::Whole(bytes)) = measure(counted(2), CHUNK) else {
            panic!("not kept");
        };
        assert!(bytes.len() < CHUNK);
        assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_ok());
    }
}
