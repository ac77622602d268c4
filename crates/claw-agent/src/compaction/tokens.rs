//! How many tokens the next request uses: the last answer's reported usage (which
//! counts everything the provider saw) plus an estimate of what was added since, about
//! four bytes of text a token.

use super::{Compaction, ContextBudget, summary_text};
use crate::History;
use crate::ImageData;
use crate::tool::ToolDefinition;
use crate::types::{Block, Message, ThinkingSignature};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bytes of text counted as one token.
const BYTES_PER_TOKEN: u64 = 4;
/// Tokens a message costs besides its text (role, separators).
const MESSAGE_OVERHEAD: u64 = 4;

/// How full the context window is for the next request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextUsage {
    /// Tokens the next request will use (reported plus estimated).
    pub tokens: u64,
    /// The model's context window.
    pub window: u64,
    /// `tokens` as a percentage of `window` (may pass 100).
    pub percent: u64,
    /// Above this many tokens the next request compacts first (`window - reserve`).
    pub threshold: u64,
}

impl ContextUsage {
    /// `tokens` of `budget`'s window.
    pub fn new(tokens: u64, budget: &ContextBudget) -> Self {
        let window = budget.window.max(1);
        Self {
            tokens,
            window,
            percent: tokens.saturating_mul(100) / window,
            threshold: budget.threshold(),
        }
    }

    /// Whether the next request would start a compaction (the status bar's warning).
    pub fn above_threshold(&self) -> bool {
        self.tokens > self.threshold
    }
}

/// Tokens of a text.
pub fn estimate_text(text: &str) -> u64 {
    (text.len() as u64).div_ceil(BYTES_PER_TOKEN)
}

/// Bytes a JSON value takes when written compactly, without writing it.
fn json_len(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(_) => 5,
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => s.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|v| json_len(v) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| k.len() + 4 + json_len(v))
                .sum::<usize>()
        }
    }
}

/// Tokens one message costs in a request; zero for what the model never sees (notices,
/// failed answers, which are dropped before sending).
pub fn estimate_message(message: &Message) -> u64 {
    let images: u64 = match message {
        Message::User(u) => u.images.iter().map(ImageData::estimated_tokens).sum(),
        Message::ToolResult(r) => r.images.iter().map(ImageData::estimated_tokens).sum(),
        _ => 0,
    };
    let bytes = match message {
        Message::User(u) => u.content.len(),
        Message::Notification(n) => n.content.len(),
        Message::ToolResult(r) => r.content.len() + r.tool_call_id.len(),
        Message::Notice(_) => return 0,
        Message::Assistant(a) if a.is_failed() => return 0,
        Message::Assistant(a) => a
            .content
            .iter()
            .map(|block| match block {
                Block::Text { text } => text.len(),
                Block::Thinking {
                    thinking,
                    signature,
                } => thinking.len() + signature.as_ref().map_or(0, ThinkingSignature::stored_len),
                Block::ToolCall { id, name, args } => id.len() + name.len() + json_len(args),
            })
            .sum(),
    };
    (bytes as u64).div_ceil(BYTES_PER_TOKEN) + MESSAGE_OVERHEAD + images
}

/// Tokens the tool definitions cost in every request.
pub fn estimate_tools(tools: &[ToolDefinition]) -> u64 {
    tools
        .iter()
        .map(|t| {
            let bytes = t.name.len() + t.description.len() + json_len(&t.parameters);
            (bytes as u64).div_ceil(BYTES_PER_TOKEN) + MESSAGE_OVERHEAD
        })
        .sum()
}

/// The tokens of the next request built from `history` (after `compaction`), with
/// `fixed` tokens for the system prompt and the tools. Anchored on the newest answer
/// that reports usage and came after the compaction (its input and output are what the
/// provider counted); without one, everything is estimated.
pub fn context_tokens(history: &History, compaction: Option<&Compaction>, fixed: u64) -> u64 {
    let compaction = compaction.filter(|c| c.fits(history.len()));
    let fresh_from = compaction.map_or(0, |c| c.history_len);
    let anchor = (fresh_from..history.len())
        .rev()
        .find_map(|i| match &history[i] {
            Message::Assistant(a) if !a.is_failed() => {
                let u = &a.usage;
                let reported = u.input + u.cache_read + u.cache_write + u.output;
                (reported > 0).then_some((i, reported))
            }
            _ => None,
        });
    match anchor {
        Some((i, reported)) => {
            reported + history.iter_from(i + 1).map(estimate_message).sum::<u64>()
        }
        None => {
            let (start, summary) = match compaction {
                Some(c) => (
                    c.first_kept_message,
                    estimate_text(&summary_text(&c.summary)) + MESSAGE_OVERHEAD,
                ),
                None => (0, 0),
            };
            fixed + summary + history.iter_from(start).map(estimate_message).sum::<u64>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::{CompactionReason, CompactionSettings};
    use crate::types::{AssistantMessage, StopReason, Usage};

    fn answer(input: u64, output: u64) -> Message {
        Message::Assistant(AssistantMessage {
            content: vec![Block::Text {
                text: "x".repeat(400),
            }],
            usage: Usage {
                input,
                output,
                ..Usage::default()
            },
            ..AssistantMessage::default()
        })
    }

    #[test]
    fn the_last_reported_usage_plus_what_came_after() {
        let history = vec![
            Message::user("a".repeat(4000)),
            answer(1200, 100),
            Message::user("b".repeat(400)),
        ];
        assert_eq!(
            context_tokens(&History::from(history.clone()), None, 50),
            1300 + 100 + 4
        );
        // Without usage, everything is estimated, the fixed part included.
        let plain = vec![Message::user("a".repeat(4000)), answer(0, 0)];
        assert_eq!(
            context_tokens(&History::from(plain.clone()), None, 50),
            50 + 1004 + 104
        );
    }

    #[test]
    fn images_count_by_their_pixels() {
        let image = crate::ImageData {
            name: "shot.png".into(),
            mime: "image/png".into(),
            width: 750,
            height: 100,
            size: 1,
            sha256: String::new(),
            data: bytes::Bytes::new(),
        };
        let text = Message::user("a".repeat(40));
        let with_image = Message::User(
            crate::UserMessage::new("a".repeat(40)).with_images(vec![image.clone(), image]),
        );
        assert_eq!(estimate_message(&with_image), estimate_message(&text) + 200);
    }

    #[test]
    fn usage_from_before_a_compaction_is_not_trusted() {
        let history = vec![
            Message::user("a".repeat(4000)),
            answer(9000, 100),
            Message::user("b".repeat(400)),
        ];
        let compaction = Compaction {
            summary: "s".into(),
            first_kept_message: 2,
            history_len: 3,
            tokens_before: 9200,
            tokens_after: 200,
            reason: CompactionReason::Threshold,
            usage: Usage::default(),
            timestamp: 0,
        };
        let tokens = context_tokens(&History::from(history.clone()), Some(&compaction), 50);
        assert!(tokens < 300, "{tokens}");
    }

    #[test]
    fn failed_answers_and_notices_cost_nothing() {
        let failed = Message::Assistant(AssistantMessage {
            stop_reason: StopReason::Error,
            content: vec![Block::Text {
                text: "x".repeat(4000),
            }],
            ..AssistantMessage::default()
        });
        assert_eq!(estimate_message(&failed), 0);
        let notice = Message::notice(crate::NoticeLevel::Info, "x".repeat(400));
        assert_eq!(estimate_message(&notice), 0);
    }

    #[test]
    fn usage_reads_as_a_share_of_the_window() {
        let budget = ContextBudget::new(8_000, &CompactionSettings::default());
        let usage = ContextUsage::new(3_440, &budget);
        assert_eq!((usage.percent, usage.threshold), (43, 4_000));
        assert!(!usage.above_threshold());
        assert!(ContextUsage::new(4_001, &budget).above_threshold());
    }
}
