//! One streamed LLM call over HTTP: send, retry, decode the SSE body, watch for silence
//! and abort. Wire formats plug in a [`Decoder`]; everything else is shared.

use super::accumulate::Out;
use super::messages::{after_retries, describe, human, server_message, status_message};
use super::retry::{RetryPolicy, is_retryable_status, retry_after};
use super::sse::{self, Event, SseError, SseStream};
use super::{LlmEvent, LlmStream};
use crate::agent::run_loop::ABORTED_MESSAGE;
use crate::agent::types::{AssistantMessage, StopReason};
use bytes::Bytes;
use futures::{FutureExt, StreamExt};
use reqwest::header::HeaderMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What a decoder makes of one event.
pub(crate) enum Flow {
    /// Keep reading.
    More,
    /// The message is complete (a failed one, e.g. a refusal, becomes `Error`).
    Finished(AssistantMessage),
}

/// A failure reported by the wire format.
pub(crate) struct Failure {
    /// What the user reads.
    pub message: String,
    /// Whether a retry may help (only honoured before any content streamed).
    pub retryable: bool,
}

impl Failure {
    /// A failure that a retry cannot fix.
    pub(crate) fn fatal(message: String) -> Self {
        Self {
            message,
            retryable: false,
        }
    }
}

/// Turns the events of one wire format into provider events.
pub(crate) trait Decoder: Send + 'static {
    /// Handles one event, pushing deltas to `out`.
    fn event(&mut self, event: &Event, out: &mut Out) -> Result<Flow, Failure>;
    /// The body ended without the format's end marker: the final message if the format
    /// allows that, `None` when the stream was cut.
    fn end_of_stream(&mut self) -> Option<AssistantMessage>;
    /// Whether content was streamed (then a failure is not retried).
    fn has_content(&self) -> bool;
    /// The message so far, for a failure.
    fn partial(&self) -> AssistantMessage;
    /// Forgets everything, before a retry.
    fn reset(&mut self);
}

/// Who is being called, for error messages.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// Provider name, e.g. `Anthropic`.
    pub provider: String,
    /// Requested model.
    pub model: String,
    /// Endpoint URL.
    pub url: String,
    /// Whether a key was sent.
    pub key_sent: bool,
    /// Where the key came from (or where one is expected).
    pub key_source: String,
}

/// A prepared HTTP request.
pub(crate) struct HttpRequest {
    /// Shared client.
    pub client: reqwest::Client,
    /// Headers including the (sensitive) key.
    pub headers: HeaderMap,
    /// Serialised JSON body.
    pub body: Bytes,
    /// Who is called.
    pub target: Target,
}

/// Timeouts and retries of a call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Longest silence accepted while waiting for headers or body bytes.
    pub idle_timeout: Duration,
    /// Retry policy.
    pub retry: RetryPolicy,
}

/// Builds a reqwest client; the connect timeout bounds a hung TCP or TLS handshake.
pub(crate) fn client(connect_timeout: Duration) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .build()
        .map_err(|e| format!("Cannot set up the HTTP client: {}", describe(&e)))
}

fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// False only for bodies that are certainly something else (JSON, HTML); servers that
/// send no or an odd content type still get parsed as events.
fn is_event_stream(response: &reqwest::Response) -> bool {
    let kind = content_type(response);
    !(kind.starts_with("application/json") || kind.starts_with("text/html"))
}

/// Streams one call: `request` is sent (with retries) and its body decoded.
pub(crate) fn stream<D: Decoder>(
    request: HttpRequest,
    decoder: D,
    limits: Limits,
    cancel: CancellationToken,
) -> LlmStream {
    Call::new(Phase::Send, Some(request), decoder, limits, cancel).into_stream()
}

/// Decodes an already received body (the decode half of [`stream`], used by benches).
pub(crate) fn decode<D: Decoder>(
    body: SseStream,
    decoder: D,
    limits: Limits,
    cancel: CancellationToken,
) -> LlmStream {
    let mut call = Call::new(Phase::Body(body), None, decoder, limits, cancel);
    call.queue.push_back(LlmEvent::Start);
    call.into_stream()
}

/// A stream holding one failure: for errors found before any request is sent.
pub(crate) fn failed(model: &str, message: String) -> LlmStream {
    let mut m = AssistantMessage::empty(model);
    m.stop_reason = StopReason::Error;
    m.error_message = Some(message);
    futures::stream::iter([LlmEvent::Start, LlmEvent::Error(m)]).boxed()
}

enum Phase {
    Send,
    Wait { attempt: u32, delay: Duration },
    Body(SseStream),
    Finished,
}

struct Call<D> {
    request: Option<HttpRequest>,
    decoder: D,
    limits: Limits,
    cancel: CancellationToken,
    retries: u32,
    started: bool,
    queue: Out,
    phase: Phase,
}

impl<D: Decoder> Call<D> {
    fn new(
        phase: Phase,
        request: Option<HttpRequest>,
        decoder: D,
        limits: Limits,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            request,
            decoder,
            limits,
            cancel,
            retries: 0,
            started: false,
            queue: Out::with_capacity(16),
            phase,
        }
    }

    fn into_stream(self) -> LlmStream {
        futures::stream::unfold(Box::new(self), |mut call| async move {
            let event = call.next().await?;
            Some((event, call))
        })
        .boxed()
    }

    async fn next(&mut self) -> Option<LlmEvent> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            match std::mem::replace(&mut self.phase, Phase::Finished) {
                Phase::Finished => return None,
                Phase::Send => self.send().await,
                Phase::Wait { attempt, delay } => self.wait(attempt, delay).await,
                Phase::Body(body) => self.read(body).await,
            }
        }
    }

    fn target(&self) -> Option<&Target> {
        self.request.as_ref().map(|r| &r.target)
    }

    fn provider(&self) -> &str {
        self.target().map_or("The server", |t| t.provider.as_str())
    }

    async fn send(&mut self) {
        let Some(request) = &self.request else {
            return;
        };
        let sending = request
            .client
            .post(&request.target.url)
            .headers(request.headers.clone())
            .body(request.body.clone())
            .send();
        let idle = self.limits.idle_timeout;
        let response = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return self.abort(),
            r = tokio::time::timeout(idle, sending) => r,
        };
        match response {
            Err(_) => {
                let message = format!(
                    "{} sent no response within {} (idle timeout). Check the server, or raise \
                     the idle timeout if it is just slow.",
                    self.provider(),
                    human(idle)
                );
                self.fail(message, StopReason::Error);
            }
            Ok(Err(e)) if e.is_builder() => {
                let message = format!(
                    "Cannot send the request to {}: {}. Check the base URL.",
                    request.target.url,
                    describe(&e)
                );
                self.fail(message, StopReason::Error);
            }
            Ok(Err(e)) => {
                let reason = format!("connection failed: {}", describe(&e));
                let url = request.target.url.clone();
                self.retry_or_fail(reason, None, |reason, retries| {
                    format!(
                        "Could not reach {url} ({reason}){}. Check that the server is running, \
                         the base URL is right and the network is up, then try again.",
                        after_retries(retries)
                    )
                });
            }
            Ok(Ok(response)) if response.status().is_success() && !is_event_stream(&response) => {
                self.not_a_stream(response).await;
            }
            Ok(Ok(response)) if response.status().is_success() => {
                if !self.started {
                    self.started = true;
                    self.queue.push_back(LlmEvent::Start);
                }
                let body = response
                    .bytes_stream()
                    .map(|chunk| chunk.map_err(|e| describe(&e)));
                self.phase = Phase::Body(sse::events(body, Some(idle)));
            }
            Ok(Ok(response)) => self.http_error(response).await,
        }
    }

    /// Reads a (small, non-streamed) response body; `None` once aborted.
    async fn read_text(&mut self, response: reqwest::Response) -> Option<String> {
        let text = tokio::select! {
            biased;
            () = self.cancel.cancelled() => {
                self.abort();
                return None;
            }
            r = tokio::time::timeout(self.limits.idle_timeout, response.text()) => r,
        };
        Some(match text {
            Ok(Ok(body)) => server_message(&body),
            _ => "(the response body could not be read)".to_owned(),
        })
    }

    /// A success status with a JSON or HTML body: a proxy that ignores `stream`, or a
    /// base URL pointing at a web page. Retrying would only repeat it.
    async fn not_a_stream(&mut self, response: reqwest::Response) {
        let kind = content_type(&response);
        let Some(body) = self.read_text(response).await else {
            return;
        };
        let message = format!(
            "{} answered with {kind} instead of an event stream: {body}. Check that the base \
             URL points at the API itself (for OpenAI-compatible servers it usually ends in \
             /v1) and that the server supports streaming.",
            self.provider()
        );
        self.fail(message, StopReason::Error);
    }

    async fn http_error(&mut self, response: reqwest::Response) {
        let status = response.status().as_u16();
        let wait = retry_after(response.headers());
        let Some(body) = self.read_text(response).await else {
            return;
        };
        let Some(target) = self.target().cloned() else {
            return;
        };
        if is_retryable_status(status) {
            let reason = format!("HTTP {status}: {body}");
            let provider = target.provider.clone();
            self.retry_or_fail(reason, wait, |reason, retries| {
                let what = if status == 429 {
                    "rate-limited the request"
                } else {
                    "is overloaded or failing"
                };
                format!(
                    "{provider} {what} ({reason}){}. Wait a little, then send a message to \
                     try again.",
                    after_retries(retries)
                )
            });
            return;
        }
        self.fail(status_message(status, &body, &target), StopReason::Error);
    }

    async fn read(&mut self, mut body: SseStream) {
        // Poll without registering on the token first: cheap on a hot stream, and an
        // abort is still seen before the next event.
        let next = if self.cancel.is_cancelled() {
            return self.abort();
        } else if let Some(ready) = body.next().now_or_never() {
            ready
        } else {
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => return self.abort(),
                next = body.next() => next,
            }
        };
        match next {
            Some(Ok(event)) => match self.decoder.event(&event, &mut self.queue) {
                Ok(Flow::More) => self.phase = Phase::Body(body),
                Ok(Flow::Finished(message)) => self.finish(message),
                Err(failure) if failure.retryable && !self.decoder.has_content() => {
                    drop(body);
                    self.retry_or_fail(failure.message, None, |reason, retries| {
                        format!(
                            "{reason}{}. Wait a little, then send a message to try again.",
                            after_retries(retries)
                        )
                    });
                }
                Err(failure) => self.fail(failure.message, StopReason::Error),
            },
            Some(Err(SseError::Idle(limit))) => {
                let message = format!(
                    "{} sent nothing for {} (idle timeout), so the stream was given up. {}",
                    self.provider(),
                    human(limit),
                    self.keep_hint()
                );
                self.fail(message, StopReason::Error);
            }
            Some(Err(SseError::Transport(detail))) => self.cut(Some(detail)),
            Some(Err(SseError::Utf8(detail) | SseError::Parse(detail))) => {
                let message = format!(
                    "{} sent a response that is not a valid event stream ({detail}). {}",
                    self.provider(),
                    self.keep_hint()
                );
                self.fail(message, StopReason::Error);
            }
            None => match self.decoder.end_of_stream() {
                Some(message) => self.finish(message),
                None => self.cut(None),
            },
        }
    }

    /// The body broke off: retried when nothing was shown yet, else the partial is kept.
    fn cut(&mut self, detail: Option<String>) {
        let detail = detail.unwrap_or_else(|| "the server closed the stream early".into());
        if !self.decoder.has_content() && self.request.is_some() {
            let reason = format!("the stream broke before any content: {detail}");
            let provider = self.provider().to_owned();
            self.retry_or_fail(reason, None, |reason, retries| {
                format!(
                    "{provider} failed: {reason}{}. Send a message to try again.",
                    after_retries(retries)
                )
            });
            return;
        }
        let message = format!(
            "The response stream from {} was cut off before the message was complete \
             ({detail}). {}",
            self.provider(),
            self.keep_hint()
        );
        self.fail(message, StopReason::Error);
    }

    fn keep_hint(&self) -> &'static str {
        if self.decoder.has_content() {
            "The partial reply is kept; send a message to continue."
        } else {
            "Send a message to try again."
        }
    }

    fn retry_or_fail(
        &mut self,
        reason: String,
        wait: Option<Duration>,
        final_message: impl FnOnce(&str, u32) -> String,
    ) {
        let policy = self.limits.retry;
        if self.request.is_none() || self.retries >= policy.max_retries {
            let message = final_message(&reason, self.retries);
            return self.fail(message, StopReason::Error);
        }
        let attempt = self.retries + 1;
        let delay = policy.delay(attempt, wait);
        self.queue.push_back(LlmEvent::RetryStart {
            attempt,
            max_attempts: policy.max_retries,
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            reason,
        });
        self.phase = Phase::Wait { attempt, delay };
    }

    async fn wait(&mut self, attempt: u32, delay: Duration) {
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => return self.abort(),
            () = tokio::time::sleep(delay) => {}
        }
        self.retries = attempt;
        self.decoder.reset();
        self.queue.push_back(LlmEvent::RetryEnd { attempt });
        self.phase = Phase::Send;
    }

    fn finish(&mut self, message: AssistantMessage) {
        self.phase = Phase::Finished;
        self.queue.push_back(if message.is_failed() {
            LlmEvent::Error(message)
        } else {
            LlmEvent::Done(message)
        });
    }

    fn fail(&mut self, message: String, reason: StopReason) {
        let mut partial = self.decoder.partial();
        partial.stop_reason = reason;
        partial.error_message = Some(message);
        self.phase = Phase::Finished;
        self.queue.push_back(LlmEvent::Error(partial));
    }

    /// Ends with `aborted`; the body (and so the connection) is dropped by the caller.
    fn abort(&mut self) {
        self.fail(ABORTED_MESSAGE.to_owned(), StopReason::Aborted);
    }
}
