//! One streamed LLM call over HTTP: send, retry, decode the SSE body, watch for silence,
//! the overall deadline and abort. Wire formats plug in a [`Decoder`]; everything else is
//! shared. What the responses mean (HTTP errors, bodies that are not streams, the body's
//! events) is in `transport/response.rs`.

mod payload;
mod response;

pub(crate) use payload::{CHUNK, Payload};

use super::accumulate::{Accumulator, Out, malformed};
use super::messages::{
    REQUEST_TIMEOUT_SETTING, after_retries, cause_first, describe, human, retry_reason,
    tls_mismatch,
};
use super::retry::RetryPolicy;
use super::sse::{self, Event, SseOptions, SseStream};
use super::tap::redact_url;
use super::{LlmEvent, LlmStream};
use crate::SetupError;
use claw_agent::run_loop::ABORTED_MESSAGE;
use claw_agent::types::{AssistantMessage, ErrorKind, StopReason};
use futures::StreamExt;
use reqwest::header::{CONTENT_LENGTH, HeaderMap};
use std::sync::Arc;
use std::sync::atomic::AtomicU16;
use std::time::Duration;
use tokio::time::Instant;
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
    /// What kind of failure it is, when the server's words say so.
    pub kind: Option<ErrorKind>,
}

impl Failure {
    /// A failure that a retry cannot fix.
    pub(crate) fn fatal(message: String) -> Self {
        Self {
            message,
            retryable: false,
            kind: None,
        }
    }
}

/// Turns the events of one wire format into provider events.
pub(crate) trait Decoder: Send + 'static {
    /// Handles one event, pushing deltas to `out`.
    fn event(&mut self, event: &Event, out: &mut Out) -> Result<Flow, Failure>;
    /// The message being built.
    fn accumulator(&self) -> &Accumulator;
    /// The body ended without the format's end marker: the final message if the format
    /// allows that, `None` when the stream was cut.
    fn end_of_stream(&mut self) -> Option<AssistantMessage> {
        None
    }
    /// Whether content was streamed (then a failure is not retried).
    fn has_content(&self) -> bool {
        self.accumulator().has_content()
    }
    /// The message so far, for a failure.
    fn partial(&self) -> AssistantMessage {
        self.accumulator().snapshot(StopReason::Error)
    }
    /// Forgets everything, before a retry.
    fn reset(&mut self);
    /// A complete JSON answer sent where a stream was asked for, as the events a stream
    /// would have carried (see `whole`); `None`: not an answer this format knows whole.
    fn whole(&self, _body: &str) -> Option<Vec<Event>> {
        None
    }
}

/// The JSON of an event whose data names its own type; a malformed one is a fatal
/// failure naming the event (`unnamed` when the stream has no `event:` lines).
pub(crate) fn parse_event<'a, T: serde::Deserialize<'a>>(
    event: &Event,
    data: &'a str,
    unnamed: &str,
) -> Result<T, Failure> {
    serde_json::from_str(data).map_err(|e| {
        let name = if event.event == "message" {
            unnamed
        } else {
            &event.event
        };
        Failure::fatal(malformed(name, data, &e))
    })
}

impl Decoder for Box<dyn Decoder> {
    fn event(&mut self, event: &Event, out: &mut Out) -> Result<Flow, Failure> {
        (**self).event(event, out)
    }
    fn accumulator(&self) -> &Accumulator {
        (**self).accumulator()
    }
    fn end_of_stream(&mut self) -> Option<AssistantMessage> {
        (**self).end_of_stream()
    }
    fn has_content(&self) -> bool {
        (**self).has_content()
    }
    fn partial(&self) -> AssistantMessage {
        (**self).partial()
    }
    fn reset(&mut self) {
        (**self).reset();
    }
    fn whole(&self, body: &str) -> Option<Vec<Event>> {
        (**self).whole(body)
    }
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
    /// The JSON body.
    pub body: Payload,
    /// Who is called.
    pub target: Target,
    /// Where the last response's status is stored, for the request log.
    pub status: Option<Arc<AtomicU16>>,
}

/// Timeouts, size limits and retries of a call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Longest silence accepted while waiting for headers or body bytes.
    pub idle_timeout: Duration,
    /// Longest a whole call may take, retries included, however busy the server keeps
    /// the connection (keep-alive comments reset the idle timeout, not this).
    pub request_timeout: Duration,
    /// Largest single event accepted.
    pub max_event_bytes: usize,
    /// Retry policy.
    pub retry: RetryPolicy,
}

impl Limits {
    /// How the response body is read.
    pub(crate) fn sse(&self) -> SseOptions {
        SseOptions {
            idle: Some(self.idle_timeout),
            max_event_bytes: self.max_event_bytes,
        }
    }
}

/// Builds a reqwest client; the connect timeout bounds a hung TCP or TLS handshake.
pub(crate) fn client(connect_timeout: Duration) -> Result<reqwest::Client, SetupError> {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .build()
        .map_err(|e| SetupError::HttpClient(describe(&e)))
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
    /// When the whole call must be over.
    deadline: Instant,
    retries: u32,
    /// How long this call has waited between retries so far.
    waited: Duration,
    started: bool,
    /// Whether any event arrived in the current body (keep-alives do not count).
    got_event: bool,
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
            deadline: Instant::now() + limits.request_timeout,
            retries: 0,
            waited: Duration::ZERO,
            started: false,
            got_event: false,
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
            let deadline = self.deadline;
            // Each phase only changes the call after its awaits, so one cut short by the
            // deadline leaves nothing half done (a body it held is dropped, closing the
            // connection).
            let in_time = match std::mem::replace(&mut self.phase, Phase::Finished) {
                Phase::Finished => return None,
                Phase::Send => tokio::time::timeout_at(deadline, self.send()).await,
                Phase::Wait { attempt, delay } => {
                    tokio::time::timeout_at(deadline, self.wait(attempt, delay)).await
                }
                Phase::Body(body) => tokio::time::timeout_at(deadline, self.read(body)).await,
            };
            if in_time.is_err() {
                self.out_of_time();
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
        let mut sending = request
            .client
            .post(&request.target.url)
            .headers(request.headers.clone());
        if let Payload::Written(_) = &request.body {
            // Known ahead: a body written while it is sent would otherwise go chunked.
            sending = sending.header(CONTENT_LENGTH, request.body.len());
        }
        let sending = sending.body(request.body.body()).send();
        let idle = self.limits.idle_timeout;
        let response = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return self.abort(),
            r = tokio::time::timeout(idle, sending) => r,
        };
        match response {
            Err(_) => self.silent_server(idle),
            Ok(Err(e)) if e.is_builder() => {
                let message = format!(
                    "Cannot send the request to {}: {}. Check the base URL.",
                    redact_url(&request.target.url),
                    describe(&e)
                );
                self.fail(message, StopReason::Error);
            }
            Ok(Err(e)) => match tls_mismatch(&request.target.url, &e) {
                // A TLS handshake answered in plain HTTP fails the same way every time.
                Some(message) => self.fail(message, StopReason::Error),
                None => {
                    let reason = retry_reason(&e);
                    let url = redact_url(&request.target.url);
                    let detail = describe(&e);
                    self.retry_or_fail(reason, None, false, |_, retries| {
                        format!(
                            "Could not reach {url} ({detail}){}. Check that the server is \
                             running, the base URL is right and the network is up, then try \
                             again.",
                            after_retries(retries)
                        )
                    });
                }
            },
            Ok(Ok(response)) => self.respond(response).await,
        }
    }

    /// A success status with an event stream: read its body next.
    fn start_body(&mut self, response: reqwest::Response) {
        if !self.started {
            self.started = true;
            self.queue.push_back(LlmEvent::Start);
        }
        self.got_event = false;
        let body = response
            .bytes_stream()
            .map(|chunk| chunk.map_err(|e| cause_first(&e)));
        self.phase = Phase::Body(sse::events(body, self.limits.sse()));
    }

    fn keep_hint(&self) -> &'static str {
        if self.decoder.has_content() {
            "The partial reply is kept; send a message to continue."
        } else {
            "Send a message to try again."
        }
    }

    /// The whole call took longer than `request_timeout`.
    fn out_of_time(&mut self) {
        let what = if self.got_event || self.decoder.has_content() {
            "did not finish its answer"
        } else if self.started {
            "kept the connection open without sending any event (only keep-alives, or \
             nothing)"
        } else {
            "did not answer"
        };
        let message = format!(
            "{} {what} within {} ({REQUEST_TIMEOUT_SETTING}), so the request was given up. \
             {} If answers this long are expected, raise {REQUEST_TIMEOUT_SETTING} in the \
             config file.",
            self.provider(),
            human(self.limits.request_timeout),
            self.keep_hint()
        );
        self.fail(message, StopReason::Error);
    }

    /// Retries after `wait` (the server's, else the backoff) when the policy allows one
    /// more for a failure of this kind (`rate_limited`: HTTP 429), else fails with
    /// `final_message`.
    fn retry_or_fail(
        &mut self,
        reason: String,
        wait: Option<Duration>,
        rate_limited: bool,
        final_message: impl FnOnce(&str, u32) -> String,
    ) {
        let policy = self.limits.retry;
        let attempt = self.retries + 1;
        let delay = policy.delay(attempt, wait);
        if self.request.is_none() || !policy.allows(attempt, rate_limited, self.waited, delay) {
            let message = final_message(&reason, self.retries);
            return self.fail(message, StopReason::Error);
        }
        self.waited += delay;
        self.queue.push_back(LlmEvent::RetryStart {
            attempt,
            max_attempts: policy.retries_for(rate_limited),
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
        self.fail_as(message, reason, None);
    }

    /// Fails with the kind of failure recorded, so the loop can act on it.
    fn fail_as(&mut self, message: String, reason: StopReason, kind: Option<ErrorKind>) {
        let mut partial = self.decoder.partial();
        partial.stop_reason = reason;
        partial.error_message = Some(message);
        partial.error_kind = kind;
        self.phase = Phase::Finished;
        self.queue.push_back(LlmEvent::Error(partial));
    }

    /// Ends with `aborted`; the body (and so the connection) is dropped by the caller.
    fn abort(&mut self) {
        self.fail(ABORTED_MESSAGE.to_owned(), StopReason::Aborted);
    }
}
