//! Seeing what went on the wire: which agent sent a call, and the place every HTTP call
//! is reported to (the session's request log, once one is attached). The provider hands
//! over the exact body bytes it sends, the URL and the headers with every secret
//! redacted, then how the call ended.

use super::body::BodySource;
use super::transport::Payload;
use super::{CallOrigin, LlmEvent, LlmRequest, LlmStream, Provider, SharedRequest, WireFormat};
use bytes::Bytes;
use claw_agent::types::{AssistantMessage, Usage};
use futures::Stream;
use futures::future::BoxFuture;
use reqwest::header::HeaderMap;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

mod redact;

pub use redact::{REDACTED, redact_headers, redact_url, redact_url_in};

/// One call as it was sent.
#[derive(Clone, Debug)]
pub struct SentCall {
    /// Process-local id pairing this with its [`FinishedCall`].
    pub id: u64,
    /// `main` or a subagent's id.
    pub agent: String,
    /// The main agent's turn the call was sent in (from 1 through the session; see
    /// `inspect::main_turn`).
    pub turn: u32,
    /// The provider's name, e.g. `Anthropic`.
    pub provider: String,
    /// The wire format of the body (which says how the body divides into sections).
    pub format: WireFormat,
    /// The model asked for.
    pub model: String,
    /// The endpoint, with secret query parameters redacted.
    pub url: String,
    /// The headers in send order, secrets redacted.
    pub headers: Vec<(String, String)>,
    /// The body exactly as sent (every attempt sends these bytes); empty when the body
    /// is written as it is sent, which [`CallSink::sent_from`] then hands over.
    pub body: Bytes,
    /// When it was sent, ms since the epoch.
    pub time_ms: u64,
}

/// How a call ended.
#[derive(Clone, Debug, Default)]
pub struct FinishedCall {
    /// The [`SentCall::id`].
    pub id: u64,
    /// The HTTP status of the last attempt (`None`: no response came).
    pub status: Option<u16>,
    /// What the provider reported.
    pub usage: Option<Usage>,
    /// `stop`, `length`, `tool_use`, `error` or `aborted`.
    pub stop_reason: String,
    /// The failure, when it failed.
    pub error: Option<String>,
    /// From sending to the first streamed change.
    pub ttft_ms: Option<u64>,
    /// From sending to the end.
    pub duration_ms: u64,
    /// Retries made.
    pub retries: u32,
}

/// Receives the calls of a process (the session's request log).
pub trait CallSink: Send + Sync {
    /// A call was sent.
    fn sent(&self, call: SentCall);
    /// A call was sent whose body is written as it goes out (a long one, written from
    /// the request rather than kept): `call.body` is empty and `body` writes the bytes
    /// sent, field by field and element by element. A sink that wants the bytes whole
    /// gets them from the default, which writes them into `call.body`.
    fn sent_from(&self, mut call: SentCall, body: BodySource) {
        match body.to_vec() {
            Ok(bytes) => call.body = Bytes::from(bytes),
            // The body was written once before it was sent, so this does not happen.
            Err(e) => tracing::warn!("a request body could not be written again: {e}"),
        }
        self.sent(call);
    }
    /// A call ended.
    fn finished(&self, call: FinishedCall);
    /// Resolves once everything reported before is written.
    fn sync(&self) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

type TurnSource = Arc<dyn Fn() -> u32 + Send + Sync>;

/// A sink and where the turn numbers come from.
#[derive(Clone)]
struct Attached {
    sink: Arc<dyn CallSink>,
    turn: TurnSource,
    path: Option<PathBuf>,
}

#[derive(Default)]
struct TapInner {
    attached: RwLock<Option<Attached>>,
    next_id: AtomicU64,
}

/// Where a runtime's HTTP calls are reported: nowhere until a sink is attached. Cheap
/// to clone; clones share the sink.
#[derive(Clone, Default)]
pub struct RequestTap {
    inner: Arc<TapInner>,
}

impl std::fmt::Debug for RequestTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestTap").finish_non_exhaustive()
    }
}

impl RequestTap {
    /// Reports calls to `sink` from now on, numbering turns with `turn` (the main
    /// agent's turn under way). Detach before dropping what `turn` holds (an agent whose
    /// provider holds this tap would otherwise never be freed).
    /// `path` is where the sink writes, for readers of the log.
    pub fn attach(
        &self,
        sink: Arc<dyn CallSink>,
        turn: impl Fn() -> u32 + Send + Sync + 'static,
        path: Option<PathBuf>,
    ) {
        *self
            .inner
            .attached
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(Attached {
            sink,
            turn: Arc::new(turn),
            path,
        });
    }

    /// Where the attached sink writes (`None`: nothing is recorded now).
    pub fn log_path(&self) -> Option<PathBuf> {
        self.attached().and_then(|a| a.path)
    }

    /// Waits until every call reported so far is written.
    pub async fn sync(&self) {
        if let Some(attached) = self.attached() {
            attached.sink.sync().await;
        }
    }

    /// Reports calls to nobody from now on.
    pub fn detach(&self) {
        *self
            .inner
            .attached
            .write()
            .unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// `provider` whose calls are reported as `agent`'s.
    pub fn tagged(&self, provider: Arc<dyn Provider>, agent: &str) -> Arc<dyn Provider> {
        Arc::new(Tagged {
            inner: provider,
            origin: CallOrigin::new(RequestOrigin {
                agent: agent.to_owned(),
                tap: self.clone(),
            }),
        })
    }

    fn attached(&self) -> Option<Attached> {
        self.inner
            .attached
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Which agent a call is made for, and where it is reported.
#[derive(Clone, Debug)]
pub struct RequestOrigin {
    /// `main` or a subagent's id.
    pub agent: String,
    /// Where the call is reported.
    pub tap: RequestTap,
}

impl RequestOrigin {
    /// Reports a call about to be sent; the returned watch reports its end (`None`: no
    /// sink is attached, nothing is recorded).
    pub(crate) fn sent(
        &self,
        target: (&str, WireFormat, &str, &str),
        headers: &HeaderMap,
        body: &Payload,
    ) -> Option<CallWatch> {
        let Attached { sink, turn, .. } = self.tap.attached()?;
        let (provider, format, model, url) = target;
        let id = self.tap.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let call = SentCall {
            id,
            agent: self.agent.clone(),
            turn: turn(),
            provider: provider.to_owned(),
            format,
            model: model.to_owned(),
            url: redact_url(url),
            headers: redact_headers(headers),
            body: match body {
                Payload::Bytes(bytes) => bytes.clone(),
                Payload::Written(_) => Bytes::new(),
            },
            time_ms: claw_agent::now_ms(),
        };
        match body {
            Payload::Bytes(_) => sink.sent(call),
            Payload::Written(source) => sink.sent_from(call, source.clone()),
        }
        Some(CallWatch {
            sink,
            call: FinishedCall {
                id,
                ..FinishedCall::default()
            },
            status: Arc::default(),
            started: None,
            done: false,
        })
    }
}

/// Follows one call's events and reports how it ended (also when the stream is dropped
/// before its end: the call then counts as aborted).
pub(crate) struct CallWatch {
    sink: Arc<dyn CallSink>,
    call: FinishedCall,
    status: Arc<AtomicU16>,
    started: Option<Instant>,
    done: bool,
}

impl CallWatch {
    /// Where the transport stores the last response's status.
    pub(crate) fn status_cell(&self) -> Arc<AtomicU16> {
        self.status.clone()
    }

    /// Wraps `stream` so that its events are followed.
    pub(crate) fn watch(self, stream: LlmStream) -> LlmStream {
        Box::pin(Watched {
            inner: stream,
            watch: self,
        })
    }

    fn elapsed_ms(&self) -> u64 {
        self.started.map_or(0, |t| {
            u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
        })
    }

    fn see(&mut self, event: &LlmEvent) {
        match event {
            LlmEvent::Delta(_) if self.call.ttft_ms.is_none() => {
                self.call.ttft_ms = Some(self.elapsed_ms());
            }
            LlmEvent::RetryStart { .. } => self.call.retries += 1,
            LlmEvent::Done(message) | LlmEvent::Error(message) => self.end(Some(message)),
            _ => {}
        }
    }

    fn end(&mut self, message: Option<&AssistantMessage>) {
        if self.done {
            return;
        }
        self.done = true;
        self.call.duration_ms = self.elapsed_ms();
        let status = self.status.load(Ordering::Relaxed);
        self.call.status = (status != 0).then_some(status);
        match message {
            Some(message) => {
                self.call.stop_reason = serde_json::to_value(message.stop_reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                self.call.error = message.error_message.clone();
                let usage = &message.usage;
                let reported = usage.input + usage.output + usage.cache_read + usage.cache_write;
                self.call.usage = (reported > 0).then(|| usage.clone());
            }
            None => {
                self.call.stop_reason = "aborted".to_owned();
                self.call.error = Some("the call was dropped before it ended".to_owned());
            }
        }
        self.sink.finished(std::mem::take(&mut self.call));
    }
}

impl Drop for CallWatch {
    fn drop(&mut self) {
        self.end(None);
    }
}

struct Watched {
    inner: LlmStream,
    watch: CallWatch,
}

impl Stream for Watched {
    type Item = LlmEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<LlmEvent>> {
        let this = &mut *self;
        // The request goes out on the first poll: time is counted from there.
        this.watch.started.get_or_insert_with(Instant::now);
        let polled = this.inner.as_mut().poll_next(cx);
        if let Poll::Ready(Some(event)) = &polled {
            this.watch.see(event);
        }
        polled
    }
}

/// A provider whose calls are made for one agent.
struct Tagged {
    inner: Arc<dyn Provider>,
    /// A [`RequestOrigin`].
    origin: CallOrigin,
}

impl Provider for Tagged {
    fn stream(&self, request: LlmRequest, cancel: CancellationToken) -> LlmStream {
        self.inner.stream_for(request, cancel, &self.origin)
    }

    fn stream_for(
        &self,
        request: LlmRequest,
        cancel: CancellationToken,
        _outer: &CallOrigin,
    ) -> LlmStream {
        // The innermost tag names the agent that actually calls.
        self.inner.stream_for(request, cancel, &self.origin)
    }

    fn stream_shared(
        &self,
        request: Arc<SharedRequest>,
        cancel: CancellationToken,
        _outer: Option<&CallOrigin>,
    ) -> LlmStream {
        self.inner
            .stream_shared(request, cancel, Some(&self.origin))
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, super::ModelListError>> {
        self.inner.list_models()
    }
}
