//! Seeing what went on the wire: which agent sent a call, and the place every HTTP call
//! is reported to (the session's request log, once one is attached). The provider hands
//! over the exact body bytes it sends, the URL and the headers with every secret
//! redacted, then how the call ended.

use super::{CallOrigin, LlmEvent, LlmRequest, LlmStream, Provider, WireFormat};
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

/// What replaces a secret header value or URL parameter in the record.
pub const REDACTED: &str = "[redacted]";

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
    /// The body exactly as sent (every attempt sends these bytes).
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
        body: &Bytes,
    ) -> Option<CallWatch> {
        let Attached { sink, turn, .. } = self.tap.attached()?;
        let (provider, format, model, url) = target;
        let id = self.tap.inner.next_id.fetch_add(1, Ordering::Relaxed);
        sink.sent(SentCall {
            id,
            agent: self.agent.clone(),
            turn: turn(),
            provider: provider.to_owned(),
            format,
            model: model.to_owned(),
            url: redact_url(url),
            headers: redact_headers(headers),
            body: body.clone(),
            time_ms: claw_agent::now_ms(),
        });
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

/// Headers as recorded: a value the client marked sensitive, or whose name says it
/// carries a credential, is replaced by [`REDACTED`].
pub fn redact_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_owned();
            let shown = if value.is_sensitive() || is_secret_name(&name) {
                REDACTED.to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, shown)
        })
        .collect()
}

fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "authorization",
        "auth",
        "cookie",
        "key",
        "token",
        "secret",
        "signature",
        "sig",
        "pass",
        "credential",
        "code",
        "session",
        "jwt",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// `url` with its credentials redacted: the user name and password of
/// `user:password@host`, and the values of query parameters named like credentials
/// (`?key=`, `api_key=`, `token=`: some gateways take the key there). Wherever a base
/// URL is shown (the request log, errors, `/status`, the log file) it goes through here.
pub fn redact_url(url: &str) -> String {
    let (rest, fragment) = match url.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (url, None),
    };
    let (base, query) = match rest.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (rest, None),
    };
    let mut out = redact_userinfo(base);
    if let Some(query) = query {
        let parts: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if is_secret_name(name) => format!("{name}={REDACTED}"),
                _ => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&parts.join("&"));
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// `base` (a URL without query) with the `user:password@` of its authority redacted.
fn redact_userinfo(base: &str) -> String {
    let start = base.find("://").map_or(0, |i| i + 3);
    let authority_end = base[start..].find('/').map_or(base.len(), |i| start + i);
    match base[start..authority_end].rfind('@') {
        Some(at) => format!("{}{REDACTED}{}", &base[..start], &base[start + at..]),
        None => base.to_owned(),
    }
}

/// `text` (an error's words) with `url`, wherever it appears, redacted.
pub fn redact_url_in(text: &str, url: &str) -> String {
    let shown = redact_url(url);
    if shown == url || url.is_empty() {
        return text.to_owned();
    }
    text.replace(url, &shown)
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

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, super::ModelListError>> {
        self.inner.list_models()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{AUTHORIZATION, HeaderValue};

    #[test]
    fn secrets_are_redacted() {
        let mut headers = HeaderMap::new();
        let mut auth = HeaderValue::from_static("Bearer sk-live-1");
        auth.set_sensitive(true);
        headers.insert(AUTHORIZATION, auth);
        headers.insert("x-api-key", HeaderValue::from_static("sk-ant-2"));
        headers.insert("x-goog-token", HeaderValue::from_static("t-3"));
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        let shown = format!("{:?}", redact_headers(&headers));
        for secret in ["sk-live-1", "sk-ant-2", "t-3"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(shown.contains("text/event-stream"), "{shown}");
        assert_eq!(
            redact_url("https://h/v1?alt=sse&key=abc&api_key=d"),
            "https://h/v1?alt=sse&key=[redacted]&api_key=[redacted]"
        );
        assert_eq!(redact_url("https://h/v1/messages"), "https://h/v1/messages");
        assert_eq!(
            redact_url("http://user:pa@ss@gw.example:8080/v1?token=t&model=m#top"),
            "http://[redacted]@gw.example:8080/v1?token=[redacted]&model=m#top"
        );
        assert_eq!(
            redact_url("https://h/v1?sig=s&x=1&password=p"),
            "https://h/v1?sig=[redacted]&x=1&password=[redacted]"
        );
        assert_eq!(
            redact_url("https://h/v1?pass=p&code=c&session=s&api-version=2024"),
            "https://h/v1?pass=[redacted]&code=[redacted]&session=[redacted]&api-version=2024"
        );
        assert_eq!(
            redact_url_in("error for url (http://u:p@h/v1)", "http://u:p@h/v1"),
            "error for url (http://[redacted]@h/v1)"
        );
    }
}
