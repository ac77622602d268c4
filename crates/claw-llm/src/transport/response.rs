//! What a call makes of the server's answer: the status and content type, error bodies,
//! a `Retry-After` longer than it will wait, and the events (or failures) of the body.

use super::{Call, Decoder, Flow, Phase};
use crate::messages::{
    IDLE_TIMEOUT_SETTING, after_retries, human, not_a_stream, overflow_message, server_message,
    status_message, too_long_a_wait,
};
use crate::overflow::is_context_overflow;
use crate::retry::{is_retryable_status, retry_after};
use crate::sse::{BodyKind, SseError, SseStream};
use claw_agent::types::{ErrorKind, StopReason};
use futures::{FutureExt, StreamExt};
use std::time::Duration;

fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// What a success status's body certainly is when it is not events: servers that send
/// no or an odd content type still get parsed as events (the feed then recognises HTML
/// and JSON by their first byte).
fn declared_kind(kind: &str) -> Option<BodyKind> {
    if kind.starts_with("application/json") {
        Some(BodyKind::Json)
    } else if kind.starts_with("text/html") {
        Some(BodyKind::Html)
    } else {
        None
    }
}

impl<D: Decoder> Call<D> {
    /// Handles the response headers: an error status, a body that is not events, or the
    /// stream.
    pub(super) async fn respond(&mut self, response: reqwest::Response) {
        if let Some(cell) = self.request.as_ref().and_then(|r| r.status.as_ref()) {
            cell.store(
                response.status().as_u16(),
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        if !response.status().is_success() {
            return self.http_error(response).await;
        }
        let kind = content_type(&response);
        match declared_kind(&kind) {
            Some(declared) => {
                let Some(body) = self.read_text(response).await else {
                    return;
                };
                if let Some(events) = self.decoder.whole(&body) {
                    return self.decode_whole(events);
                }
                let message = not_a_stream(self.provider(), declared, &kind, &body);
                self.fail(message, StopReason::Error);
            }
            None => self.start_body(response),
        }
    }

    /// Decodes the events of a whole answer (see `Decoder::whole`) as a stream's.
    fn decode_whole(&mut self, events: Vec<crate::sse::Event>) {
        self.got_event = true;
        for event in &events {
            match self.decoder.event(event, &mut self.queue) {
                Ok(Flow::More) => {}
                Ok(Flow::Finished(message)) => return self.finish(message),
                Err(failure) => {
                    return self.fail_as(failure.message, StopReason::Error, failure.kind);
                }
            }
        }
        match self.decoder.end_of_stream() {
            Some(message) => self.finish(message),
            None => self.cut(Some("the whole answer ended without its end".into())),
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
            Ok(Ok(body)) => body,
            _ => "(the response body could not be read)".to_owned(),
        })
    }

    async fn http_error(&mut self, response: reqwest::Response) {
        let status = response.status().as_u16();
        let wait = retry_after(response.headers());
        let Some(raw) = self.read_text(response).await else {
            return;
        };
        let body = server_message(&raw);
        let Some(target) = self.target().cloned() else {
            return;
        };
        // Checked before retrying: llama.cpp answers an overflow with HTTP 500 at times.
        // The raw body is read, since OpenAI's `code` is not part of the message; a 429
        // ("too many tokens per minute") is a rate limit, never an overflow.
        if matches!(status, 400 | 413 | 422 | 500) && is_context_overflow(&raw) {
            let message = overflow_message(status, &body, &target);
            return self.fail_as(message, StopReason::Error, Some(ErrorKind::ContextOverflow));
        }
        if !is_retryable_status(status) {
            return self.fail(status_message(status, &body, &target), StopReason::Error);
        }
        let what = if status == 429 {
            "rate-limited the request"
        } else {
            "is overloaded or failing"
        };
        let reason = format!("HTTP {status}: {body}");
        let cap = self.limits.retry.max_retry_after;
        if let Some(wait) = wait.filter(|w| *w > cap) {
            // Waiting less than asked would only be refused again; waiting that long
            // unasked would look like a hang.
            let message = too_long_a_wait(&target.provider, what, &reason, wait, cap);
            return self.fail(message, StopReason::Error);
        }
        let provider = target.provider;
        self.retry_or_fail(reason, wait, status == 429, |reason, retries| {
            format!(
                "{provider} {what} ({reason}){}. Wait a little, then send a message to try \
                 again.",
                after_retries(retries)
            )
        });
    }

    /// Reads and decodes the next event of the body.
    pub(super) async fn read(&mut self, mut body: SseStream) {
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
        let error = match next {
            Some(Ok(event)) => {
                self.got_event = true;
                return match self.decoder.event(&event, &mut self.queue) {
                    Ok(Flow::More) => self.phase = Phase::Body(body),
                    Ok(Flow::Finished(message)) => self.finish(message),
                    Err(failure)
                        if failure.retryable
                            && failure.kind.is_none()
                            && !self.decoder.has_content() =>
                    {
                        drop(body);
                        self.retry_or_fail(failure.message, None, false, |reason, retries| {
                            format!(
                                "{reason}{}. Wait a little, then send a message to try again.",
                                after_retries(retries)
                            )
                        });
                    }
                    Err(failure) => {
                        self.fail_as(failure.message, StopReason::Error, failure.kind);
                    }
                };
            }
            None => {
                return match self.decoder.end_of_stream() {
                    Some(message) => self.finish(message),
                    None => self.cut(None),
                };
            }
            Some(Err(error)) => error,
        };
        let provider = self.provider().to_owned();
        let hint = self.keep_hint();
        let message = match error {
            SseError::Transport(detail) => return self.cut(Some(detail)),
            SseError::Idle(limit) => format!(
                "{provider} sent nothing for {} (idle timeout, {IDLE_TIMEOUT_SETTING}), so \
                 the stream was given up. {hint} If the server is just slow, raise \
                 {IDLE_TIMEOUT_SETTING} in the config file.",
                human(limit)
            ),
            SseError::TooLarge { limit } => format!(
                "{provider} sent a single event larger than {}, more than claw-tui accepts, \
                 so the stream was given up. {hint}",
                claw_text::byte_size(limit as u64)
            ),
            SseError::NotAStream { kind, body } => {
                let declared = "no event-stream content type";
                not_a_stream(&provider, kind, declared, &body)
            }
            SseError::Utf8(detail) | SseError::Parse(detail) => format!(
                "{provider} sent a response that is not a valid event stream ({detail}). {hint}"
            ),
        };
        self.fail(message, StopReason::Error);
    }

    /// The body broke off: retried when nothing was shown yet, else the partial is kept.
    fn cut(&mut self, detail: Option<String>) {
        let detail = detail.unwrap_or_else(|| "the server closed the stream early".into());
        if !self.decoder.has_content() && self.request.is_some() {
            let reason = format!("the stream broke before any content: {detail}");
            let provider = self.provider().to_owned();
            self.retry_or_fail(reason, None, false, |reason, retries| {
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

    /// No response headers within the idle timeout.
    pub(super) fn silent_server(&mut self, idle: Duration) {
        let message = format!(
            "{} sent no response within {} (idle timeout, {IDLE_TIMEOUT_SETTING}). Check the \
             server, or raise {IDLE_TIMEOUT_SETTING} in the config file if it is just slow.",
            self.provider(),
            human(idle)
        );
        self.fail(message, StopReason::Error);
    }
}
