//! One compaction: the cut, then one streamed summary request per chunk on the agent's
//! provider (each updating the summary so far), then the record.

use super::cut::choose_cut;
use super::prompt::{
    SUMMARY_SYSTEM_PROMPT, SummaryChunk, plan_summary, request_overhead, summary_request_text,
};
use super::tokens::{estimate_message, estimate_text};
use super::{Compaction, CompactionReason, ContextBudget, summary_text};
use crate::History;
use crate::event::{AgentEvent, EventSink};
use crate::provider::{LlmEvent, LlmMessage, LlmRequest, Provider, SharedRequest};
use crate::types::{Message, StopReason, ThinkingLevel, Usage, UserMessage, now_ms};
use futures::StreamExt;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// How often a summary request the provider refuses as too long is planned again with
/// half the room.
const SHRINK_ATTEMPTS: u32 = 2;

/// What one compaction works on.
pub(crate) struct CompactionJob<'a> {
    /// The whole history.
    pub history: &'a History,
    /// The compaction in force, whose summary the new one updates.
    pub previous: Option<&'a Compaction>,
    /// Messages from here on are kept whatever they cost (the request's own input).
    pub protected_from: usize,
    /// The window and the settings applied to it.
    pub budget: ContextBudget,
    /// What started it.
    pub reason: CompactionReason,
    /// What the user wants the summary to keep (`/compact FOCUS`).
    pub focus: Option<&'a str>,
    /// Tokens of the system prompt and tool definitions.
    pub fixed_tokens: u64,
    /// The request's size now.
    pub tokens_before: u64,
    /// The model that writes the summary.
    pub model: String,
}

impl CompactionJob<'_> {
    /// The compaction in force, if it fits the history.
    fn previous(&self) -> Option<&Compaction> {
        self.previous.filter(|c| c.fits(self.history.len()))
    }

    /// The first message to keep, when there is anything before it to summarise.
    pub(crate) fn cut(&self) -> Option<usize> {
        let start = self.previous().map_or(0, |c| c.first_kept_message);
        let cut = choose_cut(
            self.history,
            start,
            self.protected_from,
            self.budget.keep_recent,
            self.budget.threshold() / 2,
        );
        (cut > start).then_some(cut)
    }
}

/// How a compaction ended.
#[derive(Debug)]
pub(crate) enum CompactionOutcome {
    /// The history is compacted.
    Done(Compaction),
    /// There was nothing to summarise (why, for the user).
    Nothing(String),
    /// A summary request failed (why).
    Failed(String),
    /// The user cancelled it.
    Aborted,
}

/// How one summary request ended.
enum Call {
    Summary(String),
    Overflow(String),
    Failed(String),
    Aborted,
}

/// The provider side of a compaction: where requests go, what they cost.
struct Caller<'a> {
    provider: &'a dyn Provider,
    cancel: &'a CancellationToken,
    sink: &'a EventSink,
    usage: Usage,
}

/// Runs `job` on `provider`; returns the outcome and what the requests cost.
pub(crate) async fn summarize(
    job: &CompactionJob<'_>,
    provider: &dyn Provider,
    cancel: &CancellationToken,
    sink: &EventSink,
) -> (CompactionOutcome, Usage) {
    let history = job.history;
    let previous = job.previous();
    let start = previous.map_or(0, |c| c.first_kept_message);
    let mut caller = Caller {
        provider,
        cancel,
        sink,
        usage: Usage::default(),
    };
    let Some(cut) = job.cut() else {
        let why = "nothing older than the recent messages kept verbatim is left to summarise";
        return (CompactionOutcome::Nothing(why.to_owned()), caller.usage);
    };
    let mut room = job.budget.threshold();
    let mut attempt = 0;
    let summary = loop {
        match caller
            .range(
                job,
                history.iter_from(start).take(cut - start),
                previous,
                room,
            )
            .await
        {
            Call::Summary(summary) => break summary,
            Call::Overflow(_) if attempt < SHRINK_ATTEMPTS => {
                attempt += 1;
                room /= 2;
            }
            Call::Overflow(why) | Call::Failed(why) => {
                return (CompactionOutcome::Failed(why), caller.usage);
            }
            Call::Aborted => return (CompactionOutcome::Aborted, caller.usage),
        }
    };
    let kept: u64 = history.iter_from(cut).map(estimate_message).sum();
    let summary_tokens = estimate_text(&summary_text(&summary)) + 4;
    let compaction = Compaction {
        summary,
        first_kept_message: cut,
        history_len: history.len(),
        tokens_before: job.tokens_before,
        tokens_after: job.fixed_tokens + summary_tokens + kept,
        reason: job.reason,
        usage: caller.usage.clone(),
        timestamp: now_ms(),
    };
    (CompactionOutcome::Done(compaction), caller.usage)
}

/// A previous summary, cut to half the room if it is larger (the oldest part goes).
fn fit_previous(summary: &str, room: u64) -> String {
    let max = usize::try_from(room.saturating_mul(2)).unwrap_or(usize::MAX);
    if summary.len() <= max {
        return summary.to_owned();
    }
    let from = summary.len() - max;
    let start = (from..summary.len())
        .find(|&i| summary.is_char_boundary(i))
        .unwrap_or(summary.len());
    format!(
        "[… the start of the earlier summary was cut]\n{}",
        &summary[start..]
    )
}

impl Caller<'_> {
    /// Summarises `messages` in requests of at most `room` tokens each, starting from
    /// the previous summary.
    async fn range<'m>(
        &mut self,
        job: &CompactionJob<'_>,
        messages: impl Iterator<Item = &'m Message>,
        previous: Option<&Compaction>,
        room: u64,
    ) -> Call {
        let mut summary = previous.map(|c| fit_previous(&c.summary, room));
        // Room for the summary written back, so the next request still fits with it.
        let summary_room = (job.budget.reserve / 2).clamp(256, 8_000);
        let overhead = request_overhead(summary.as_deref(), job.focus) + summary_room;
        let chunks = plan_summary(messages, room.saturating_sub(overhead).max(256));
        for chunk in &chunks {
            match self.call(job, chunk, summary.as_deref()).await {
                Call::Summary(text) => summary = Some(text),
                other => return other,
            }
        }
        match summary {
            Some(summary) => Call::Summary(summary),
            None => Call::Failed("there was nothing to summarise".into()),
        }
    }

    /// One streamed summary request.
    async fn call(
        &mut self,
        job: &CompactionJob<'_>,
        chunk: &SummaryChunk,
        previous: Option<&str>,
    ) -> Call {
        let request = LlmRequest {
            system_prompt: SUMMARY_SYSTEM_PROMPT.to_owned(),
            messages: vec![LlmMessage::from(UserMessage::new(summary_request_text(
                chunk, previous, job.focus,
            )))],
            tools: Vec::new(),
            model: job.model.clone(),
            thinking: ThinkingLevel::Off,
        };
        // Shared, so the HTTP provider writes the body from this one copy of the text.
        let request = Arc::new(SharedRequest::owned(request));
        let mut stream = self
            .provider
            .stream_shared(request, self.cancel.clone(), None);
        loop {
            let event = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return Call::Aborted,
                event = stream.next() => event,
            };
            match event {
                Some(LlmEvent::Done(message)) => {
                    self.usage.add(&message.usage);
                    let text = message.text().trim().to_owned();
                    return if text.is_empty() {
                        Call::Failed(format!("model \"{}\" wrote an empty summary", job.model))
                    } else {
                        Call::Summary(text)
                    };
                }
                Some(LlmEvent::Error(message)) => {
                    self.usage.add(&message.usage);
                    let why = message
                        .error_message
                        .clone()
                        .unwrap_or_else(|| "the summary request failed".into());
                    return if self.cancel.is_cancelled()
                        || message.stop_reason == StopReason::Aborted
                    {
                        Call::Aborted
                    } else if message.is_context_overflow() {
                        Call::Overflow(why)
                    } else {
                        Call::Failed(why)
                    };
                }
                Some(LlmEvent::RetryStart {
                    attempt,
                    max_attempts,
                    delay_ms,
                    reason,
                }) => self.sink.emit(AgentEvent::AutoRetryStart {
                    attempt,
                    max_attempts,
                    delay_ms,
                    reason,
                }),
                Some(LlmEvent::RetryEnd { attempt }) => {
                    self.sink.emit(AgentEvent::AutoRetryEnd { attempt });
                }
                Some(LlmEvent::Start | LlmEvent::Delta(_)) => {}
                None => {
                    return Call::Failed(
                        "the provider stream ended without the summary".to_owned(),
                    );
                }
            }
        }
    }
}
