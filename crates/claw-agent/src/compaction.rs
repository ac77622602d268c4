//! Long sessions: the model's context window, how much of it the next request uses, and
//! compaction, which replaces the older history with a summary the model writes.
//!
//! The history itself is never shortened: a [`Compaction`] records the summary and the
//! first message kept verbatim, and [`compacted_view`] builds what the model sees from
//! the two (summary first, then the kept messages). The session file records the
//! compaction, so a resumed session rebuilds exactly that view while the chat shows
//! everything.

mod cut;
mod prompt;
mod run;
mod tokens;
mod window;

pub use cut::choose_cut;
pub use prompt::{
    MAX_TOOL_TEXT_CHARS, SUMMARY_SECTIONS, SUMMARY_SYSTEM_PROMPT, SummaryChunk, plan_summary,
};
pub(crate) use run::{CompactionJob, CompactionOutcome, summarize};
pub use tokens::{ContextUsage, context_tokens, estimate_message, estimate_text, estimate_tools};
pub use window::{
    DEFAULT_CONTEXT_WINDOW, context_window_for, known_context_window, resolve_window,
};

use super::History;
use super::types::{Message, Usage, UserMessage};
use serde::{Deserialize, Serialize};

/// Default room left for the reply and for the compaction call (`reserve_tokens`).
pub const DEFAULT_RESERVE_TOKENS: u64 = 16_384;
/// Default size of the newest history kept verbatim (`keep_recent_tokens`).
pub const DEFAULT_KEEP_RECENT_TOKENS: u64 = 20_000;
/// How the summary message the model reads begins.
pub const SUMMARY_PREFIX: &str = "[CONTEXT SUMMARY]";

/// `[compaction]`: when and how the history is compacted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionSettings {
    /// Compact on its own when the window fills or the provider says it overflowed;
    /// `false` means never (a manual `/compact` still works).
    pub enabled: bool,
    /// Room left for the reply and the compaction call; compaction starts when the next
    /// request would use more than `window - reserve_tokens`.
    pub reserve_tokens: u64,
    /// The newest history kept verbatim.
    pub keep_recent_tokens: u64,
    /// The model that writes summaries (same provider); `None`: the agent's model.
    pub model: Option<String>,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            reserve_tokens: DEFAULT_RESERVE_TOKENS,
            keep_recent_tokens: DEFAULT_KEEP_RECENT_TOKENS,
            model: None,
        }
    }
}

/// The settings applied to one window: a reserve of at most half the window and a kept
/// part of at most half of what remains, so a small window (a local model with 8k)
/// still compacts sensibly with the defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextBudget {
    /// The model's context window in tokens.
    pub window: u64,
    /// Room left for the reply and the compaction call.
    pub reserve: u64,
    /// The newest history kept verbatim.
    pub keep_recent: u64,
}

impl ContextBudget {
    /// The budget of `window` under `settings`.
    pub fn new(window: u64, settings: &CompactionSettings) -> Self {
        let window = window.max(1);
        let reserve = settings.reserve_tokens.min(window / 2);
        let keep_recent = settings.keep_recent_tokens.min((window - reserve) / 2);
        Self {
            window,
            reserve,
            keep_recent,
        }
    }

    /// Requests larger than this start a compaction first.
    pub fn threshold(&self) -> u64 {
        self.window - self.reserve
    }
}

/// What started a compaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionReason {
    /// The next request would have passed `window - reserve_tokens`.
    Threshold,
    /// The provider refused a request as too long for the window.
    Overflow,
    /// The user asked (`/compact`, RPC `compact`).
    Manual,
}

/// One compaction, as the session records it and the loop applies it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// The summary of everything before `first_kept_message` (it includes the previous
    /// compaction's summary).
    pub summary: String,
    /// The position in the history (the session's message list) of the first message
    /// kept verbatim: its id.
    pub first_kept_message: usize,
    /// How many messages the history held when it was compacted: the chat marks the
    /// compaction after them, and only answers after them report the compacted size.
    pub history_len: usize,
    /// The request's estimated size before, in tokens.
    pub tokens_before: u64,
    /// The request's estimated size after, in tokens.
    pub tokens_after: u64,
    /// What started it.
    pub reason: CompactionReason,
    /// What the summary calls cost.
    #[serde(default)]
    pub usage: Usage,
    /// When it finished, ms since the epoch.
    pub timestamp: u64,
}

impl Compaction {
    /// The message that stands for the summarised history in the model's context.
    pub fn summary_message(&self) -> Message {
        Message::User(UserMessage {
            content: summary_text(&self.summary),
            images: Vec::new(),
            timestamp: self.timestamp,
        })
    }

    /// Whether it fits a history of `len` messages (a file cut short cannot use it).
    pub fn fits(&self, len: usize) -> bool {
        self.first_kept_message <= self.history_len && self.history_len <= len
    }
}

/// What a compaction came to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionResult {
    /// The history is compacted.
    #[default]
    Compacted,
    /// Cancelled by the user: nothing changed.
    Aborted,
    /// A summary request failed: nothing changed.
    Failed,
    /// Everything is recent enough to be kept verbatim: nothing changed.
    NothingToCompact,
}

/// How a compaction ended (the `compaction_end` event).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompactionEnd {
    /// What started it.
    pub reason: CompactionReason,
    /// The request's estimated size before, in tokens.
    pub tokens_before: u64,
    /// Its size after (the same as before when nothing changed).
    pub tokens_after: u64,
    /// The new summary (empty when nothing changed).
    pub summary: String,
    /// Cancelled by the user: nothing changed.
    pub aborted: bool,
    /// What it came to.
    #[serde(default)]
    pub outcome: CompactionResult,
    /// Why nothing changed, when it failed or had nothing to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The first message kept verbatim, when the history was compacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_kept_message: Option<usize>,
    /// How many messages the history held.
    pub history_len: usize,
    /// What the summary calls cost.
    #[serde(default)]
    pub usage: Usage,
    /// When it ended, ms since the epoch.
    pub timestamp: u64,
}

impl CompactionEnd {
    /// The end of a compaction that happened.
    pub fn done(compaction: &Compaction) -> Self {
        Self {
            reason: compaction.reason,
            tokens_before: compaction.tokens_before,
            tokens_after: compaction.tokens_after,
            summary: compaction.summary.clone(),
            aborted: false,
            outcome: CompactionResult::Compacted,
            error: None,
            first_kept_message: Some(compaction.first_kept_message),
            history_len: compaction.history_len,
            usage: compaction.usage.clone(),
            timestamp: compaction.timestamp,
        }
    }

    /// The compaction this end records, when the history was compacted.
    pub fn record(&self) -> Option<Compaction> {
        if self.outcome != CompactionResult::Compacted || self.aborted {
            return None;
        }
        Some(Compaction {
            summary: self.summary.clone(),
            first_kept_message: self.first_kept_message?,
            history_len: self.history_len,
            tokens_before: self.tokens_before,
            tokens_after: self.tokens_after,
            reason: self.reason,
            usage: self.usage.clone(),
            timestamp: self.timestamp,
        })
    }
}

/// The text of the summary message.
pub fn summary_text(summary: &str) -> String {
    format!(
        "{SUMMARY_PREFIX} The earlier part of this conversation was compacted to make room \
         in the context window. This summary stands for it; the messages after it are \
         verbatim.\n\n<summary>\n{}\n</summary>",
        summary.trim()
    )
}

/// What the model sees of `history`: everything, or after a compaction the summary and
/// the messages from the first kept one on.
pub fn compacted_view(history: &History, compaction: Option<&Compaction>) -> Vec<Message> {
    match compaction.filter(|c| c.fits(history.len())) {
        None => history.to_vec(),
        Some(c) => {
            let kept = history.len() - c.first_kept_message;
            let mut view = Vec::with_capacity(kept + 1);
            view.push(c.summary_message());
            view.extend(history.iter_from(c.first_kept_message).cloned());
            view
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_windows_get_a_proportionate_budget() {
        let defaults = CompactionSettings::default();
        let big = ContextBudget::new(200_000, &defaults);
        assert_eq!((big.reserve, big.keep_recent), (16_384, 20_000));
        assert_eq!(big.threshold(), 183_616);
        let small = ContextBudget::new(8_000, &defaults);
        assert_eq!((small.reserve, small.keep_recent), (4_000, 2_000));
        let tiny = ContextBudget::new(0, &defaults);
        assert_eq!(tiny.window, 1);
    }

    #[test]
    fn the_view_is_the_summary_then_the_kept_messages() {
        let history: Vec<Message> = (0..5).map(|i| Message::user(format!("m{i}"))).collect();
        let compaction = Compaction {
            summary: "the gist".into(),
            first_kept_message: 3,
            history_len: 4,
            tokens_before: 100,
            tokens_after: 10,
            reason: CompactionReason::Manual,
            usage: Usage::default(),
            timestamp: 7,
        };
        let view = compacted_view(&History::from(history.clone()), Some(&compaction));
        let texts: Vec<String> = view.iter().map(Message::preview_text).collect();
        assert!(texts[0].starts_with(SUMMARY_PREFIX) && texts[0].contains("the gist"));
        assert_eq!(texts[1..], ["m3", "m4"]);
        // A compaction recorded past the end of the history (a file cut short) is ignored.
        let beyond = Compaction {
            history_len: 9,
            ..compaction
        };
        assert_eq!(
            compacted_view(&History::from(history.clone()), Some(&beyond)).len(),
            5
        );
    }
}
