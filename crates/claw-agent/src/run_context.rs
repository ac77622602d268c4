//! The loop's context stage: before each LLM call the request's size is checked against
//! the window and the history compacted when it would pass `window - reserve_tokens`;
//! a provider's context overflow is compacted and the call sent once more. Both happen
//! at a turn boundary (the turn's own input already in, no tool call running).

use super::compaction::{
    CompactionEnd, CompactionJob, CompactionOutcome, CompactionReason, CompactionResult,
    ContextUsage, context_tokens, estimate_text, estimate_tools, summarize,
};
use super::event::AgentEvent;
use super::run_loop::Run;
use super::types::{AssistantMessage, now_ms};

/// What the user can do about an overflow that was not compacted away.
const COMPACT_OR_NEW: &str = "Compact it with /compact (over RPC: the compact command), or \
                              start a new session with /new (headless: run without -c).";

/// Added to an overflow error when automatic compaction is off.
const COMPACTION_OFF: &str = "Automatic compaction is off ([compaction] enabled = false), so \
                              nothing was compacted.";

impl CompactionOutcome {
    /// Whether the history was compacted.
    pub(crate) fn is_done(&self) -> bool {
        matches!(self, CompactionOutcome::Done(_))
    }
}

/// The advice for a window that is smaller than the one assumed (a local server started
/// with less context than its model's table entry).
fn window_hint(window: u64) -> String {
    format!(
        "If the server's window is smaller than the {window} tokens assumed here, set \
         context_window in the provider's config section."
    )
}

/// Appends `note` to a failed message's error text.
fn add_note(message: &mut AssistantMessage, note: &str) {
    let text = message.error_message.take().unwrap_or_default();
    message.error_message = Some(format!("{} {note}", text.trim_end()).trim().to_owned());
}

impl Run<'_, '_, '_> {
    /// Tokens of what every request carries: the system prompt and the tool definitions.
    fn fixed_tokens(&self) -> u64 {
        estimate_text(&self.ctx.system_prompt) + estimate_tools(&self.ctx.tools.definitions())
    }

    /// How full the window is for the next request.
    pub(super) fn context_usage(&self) -> ContextUsage {
        let config = self.env.config;
        let tokens = context_tokens(
            &(self.env.history)(),
            self.ctx.compaction.as_ref(),
            self.fixed_tokens(),
        );
        ContextUsage::new(tokens, &config.budget_for(&config.model))
    }

    /// The turn's answer: compacts first when the request would pass the threshold, and
    /// once more with a retry when the provider says it overflowed. Messages from
    /// `protected_from` on (the turn's input) are never compacted.
    pub(super) async fn answer(&mut self, protected_from: usize) -> AssistantMessage {
        let env = self.env;
        let enabled = env.config.compaction.enabled;
        if enabled && self.context_usage().above_threshold() {
            let outcome = self
                .compact(CompactionReason::Threshold, protected_from, None)
                .await;
            if matches!(outcome, CompactionOutcome::Aborted) {
                return self.aborted_answer();
            }
        }
        let mut message = self.stream_once().await;
        if !message.is_context_overflow() || env.cancel.is_cancelled() {
            self.finish_answer(&message);
            return message;
        }
        if !enabled {
            add_note(&mut message, &format!("{COMPACTION_OFF} {COMPACT_OR_NEW}"));
            self.finish_answer(&message);
            return message;
        }
        // The failed answer stays open while the history is compacted, so what the user
        // reads about it says how it ended.
        let outcome = self
            .compact(CompactionReason::Overflow, protected_from, None)
            .await;
        match outcome {
            CompactionOutcome::Done(_) => {
                let mut recovered = message.clone();
                recovered.error_message = Some(format!(
                    "The request did not fit the context window of model \"{}\", so the \
                     conversation was compacted and the request sent again.",
                    env.config.model
                ));
                self.finish_answer(&recovered);
                let mut retry = self.stream_once().await;
                if retry.is_context_overflow() {
                    let usage = self.context_usage();
                    add_note(
                        &mut retry,
                        &format!(
                            "It still does not fit after compacting (about {} of {} tokens): \
                             the recent messages kept verbatim are too large for this model. \
                             Start a new session with /new, or lower [compaction] \
                             keep_recent_tokens so that less is kept. {}",
                            usage.tokens,
                            usage.window,
                            window_hint(usage.window)
                        ),
                    );
                }
                self.finish_answer(&retry);
                retry
            }
            CompactionOutcome::Nothing(_) => {
                let window = self.context_usage().window;
                add_note(
                    &mut message,
                    &format!(
                        "Nothing older is left to compact: what this turn sends does not fit \
                         the window on its own. Send something shorter, or start a new session \
                         with /new. {}",
                        window_hint(window)
                    ),
                );
                self.finish_answer(&message);
                message
            }
            CompactionOutcome::Failed(why) => {
                add_note(
                    &mut message,
                    &format!(
                        "Compacting it automatically failed, so nothing changed: {}. \
                         {COMPACT_OR_NEW}",
                        why.trim_end_matches('.')
                    ),
                );
                self.finish_answer(&message);
                message
            }
            CompactionOutcome::Aborted => {
                add_note(
                    &mut message,
                    &format!("Compacting it was cancelled, so nothing changed. {COMPACT_OR_NEW}"),
                );
                self.finish_answer(&message);
                message
            }
        }
    }

    /// Compacts the history, announcing it with `compaction_start` and
    /// `compaction_end`. A threshold or overflow compaction with nothing to summarise
    /// says nothing; a manual one reports it.
    pub(super) async fn compact(
        &mut self,
        reason: CompactionReason,
        protected_from: usize,
        focus: Option<&str>,
    ) -> CompactionOutcome {
        let env = self.env;
        let config = env.config;
        let fixed = self.fixed_tokens();
        // Held until the compaction ends: no message is added meanwhile, so the state
        // does not copy it.
        let history = (env.history)();
        let tokens_before = context_tokens(&history, self.ctx.compaction.as_ref(), fixed);
        let mut budget = config.budget_for(&config.model);
        // The system prompt and tools come first in every request: the kept part gets at
        // most half of what they leave below the threshold, or a small window would end
        // up above it again after compacting and compact on every turn.
        budget.keep_recent = budget
            .keep_recent
            .min(budget.threshold().saturating_sub(fixed) / 2);
        if reason == CompactionReason::Overflow {
            // The provider refused about `tokens_before` tokens, so its window is smaller
            // than that whatever the table says: keeping `keep_recent` could refill it.
            budget.keep_recent = budget.keep_recent.min(tokens_before / 4);
        }
        let job = CompactionJob {
            history: &history,
            previous: self.ctx.compaction.as_ref(),
            protected_from,
            budget,
            reason,
            focus,
            fixed_tokens: fixed,
            tokens_before,
            model: config
                .compaction
                .model
                .clone()
                .unwrap_or_else(|| config.model.clone()),
        };
        if job.cut().is_none() && reason != CompactionReason::Manual {
            return CompactionOutcome::Nothing(String::new());
        }
        env.emit(AgentEvent::CompactionStart {
            reason,
            tokens_before,
        });
        let (outcome, usage) = summarize(&job, env.provider, env.cancel, env.sink).await;
        let history_len = history.len();
        drop(history);
        let end = match &outcome {
            CompactionOutcome::Done(compaction) => CompactionEnd::done(compaction),
            other => CompactionEnd {
                reason,
                tokens_before,
                tokens_after: tokens_before,
                summary: String::new(),
                aborted: matches!(other, CompactionOutcome::Aborted),
                outcome: match other {
                    CompactionOutcome::Nothing(_) => CompactionResult::NothingToCompact,
                    CompactionOutcome::Failed(_) => CompactionResult::Failed,
                    _ => CompactionResult::Aborted,
                },
                error: match other {
                    CompactionOutcome::Nothing(why) | CompactionOutcome::Failed(why) => {
                        Some(why.clone())
                    }
                    _ => None,
                },
                first_kept_message: None,
                history_len,
                usage,
                timestamp: now_ms(),
            },
        };
        if let CompactionOutcome::Done(compaction) = &outcome {
            self.ctx.compaction = Some(compaction.clone());
        }
        env.emit(AgentEvent::CompactionEnd(end));
        outcome
    }
}
