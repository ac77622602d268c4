//! What one chat entry looks like as styled logical lines: user messages, assistant
//! blocks (markdown text, thinking, inline tool cards), notices, notifications,
//! outbound messages and retries.

use super::card::{CardInfo, card_lines};
use crate::highlight::HighlightCache;
use crate::markdown::{self, MdContext};
use crate::msg::HighlightRequest;
use crate::recorded::Recorded;
use crate::shell::split_shell_blocks;
use crate::theme::{Theme, Token};
use crate::wrap::{StyledLine, WrapKind, clean};
use claw_agent::{AssistantMessage, Block, NoticeLevel, StopReason};
use claw_text::{clip, short_tokens};
use claw_tools::message::OutboundMessage;
use ratatui::style::Modifier;
use ratatui::text::Span;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Everything entry rendering reads besides the entry.
pub(super) struct RenderCtx<'a> {
    /// Colours.
    pub(super) theme: &'a Theme,
    /// Highlighted code blocks.
    pub(super) highlights: &'a HighlightCache,
    /// Tool call states by id.
    pub(super) cards: &'a HashMap<String, CardInfo>,
    /// Whether thinking blocks are expanded.
    pub(super) expand_thinking: bool,
    /// For the elapsed time of running calls.
    pub(super) now: Instant,
    /// The spinner frame of running calls.
    pub(super) spinner: usize,
    /// The key that expands a card's output, as the footer names it.
    pub(super) expand_key: &'a str,
    /// The pane's text width (tables are laid out to fit it).
    pub(super) width: u16,
    /// Whether compaction summaries are expanded.
    pub(super) expand_summaries: bool,
}

/// The kinds of chat entries.
#[derive(Clone, Debug)]
pub enum EntryKind {
    /// The user's message.
    User(String),
    /// A model answer, possibly still arriving (boxed: most entries are not answers
    /// made in this process, and the enum is as large as its largest variant).
    Assistant(Box<AssistantMessage>),
    /// The user's message or an answer of a resumed history, read where the agent's
    /// history holds it (not copied).
    Recorded(Recorded),
    /// A notice from the agent or the app.
    Notice(NoticeLevel, String),
    /// A subagent or cron notification delivered to the model.
    Notification {
        /// Who sent it (`subagent`, `cron`).
        source: String,
        /// Its text.
        text: String,
    },
    /// A message the agent sent with the `message` tool.
    Outbound(OutboundMessage),
    /// Where the user interrupted the run.
    Interrupted,
    /// A shell command the user ran (`!command`), shown as a card.
    Shell {
        /// Its call id.
        id: String,
        /// The command.
        command: String,
        /// Its output goes with the next message.
        keep: bool,
    },
    /// A compaction is running: the live line.
    Compacting {
        /// The request's size before.
        tokens_before: u64,
    },
    /// The history above was compacted: the divider, with the summary under it.
    Compacted {
        /// The request's size before.
        tokens_before: u64,
        /// Its size after.
        tokens_after: u64,
        /// What the model reads instead of the history above.
        summary: String,
    },
    /// A failed request that will be retried.
    Retry {
        /// 1-based retry number.
        attempt: u32,
        /// Retries allowed.
        max_attempts: u32,
        /// Wait before it, in milliseconds.
        delay_ms: u64,
        /// Why the previous attempt failed.
        reason: String,
        /// When the wait began (the line counts down from it while `live`).
        since: Instant,
        /// Whether the wait is going on now.
        live: bool,
    },
}

/// Kinds of assistant blocks, for deciding gaps between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BlockTag {
    /// Markdown text.
    Text,
    /// Thinking.
    Thinking,
    /// A tool card.
    Tool,
}

/// The tag of a block.
pub(super) fn block_tag(block: &Block) -> BlockTag {
    match block {
        Block::Text { .. } => BlockTag::Text,
        Block::Thinking { .. } => BlockTag::Thinking,
        Block::ToolCall { .. } => BlockTag::Tool,
    }
}

/// Whether a blank line separates a block of kind `next` from one of kind `prev`.
pub(super) fn gap_between(prev: Option<BlockTag>, next: BlockTag) -> bool {
    match prev {
        None => false,
        Some(BlockTag::Tool) => next != BlockTag::Tool,
        Some(_) => true,
    }
}

/// Renders the part `range` of an assistant block (text blocks render in pieces while
/// they stream; other blocks always whole).
pub(super) fn render_block_part(
    block: &Block,
    range: std::ops::Range<usize>,
    ctx: &RenderCtx<'_>,
    out: &mut Vec<StyledLine>,
    missing: &mut Vec<HighlightRequest>,
) {
    let theme = ctx.theme;
    match block {
        Block::Text { text } => {
            let end = range.end.min(text.len());
            let start = range.start.min(end);
            let md = MdContext {
                theme,
                highlights: ctx.highlights,
                base: theme.fg(Token::Assistant),
                request_highlights: true,
                width: ctx.width,
            };
            markdown::render(&text[start..end], &md, out, missing);
        }
        Block::Thinking { thinking, .. } => thinking_lines(thinking, ctx, out),
        Block::ToolCall { id, name, args } => card_lines(id, name, args, ctx, out, missing),
    }
}

fn thinking_lines(thinking: &str, ctx: &RenderCtx<'_>, out: &mut Vec<StyledLine>) {
    let style = ctx
        .theme
        .fg(Token::Thinking)
        .add_modifier(Modifier::ITALIC | Modifier::DIM);
    let text = clean(thinking.trim());
    let words = text.split_whitespace().count();
    if !ctx.expand_thinking {
        let first = text.lines().next().unwrap_or_default();
        out.push(StyledLine::plain(
            format!("▸ thinking ({words} words): {}", clip(first, 100)),
            style,
        ));
        return;
    }
    out.push(StyledLine::plain(
        format!("▾ thinking ({words} words)"),
        style,
    ));
    for line in text.lines() {
        out.push(StyledLine::plain(line.to_owned(), style).with_prefix(vec![Span::raw("  ")]));
    }
}

/// Lines shown after an assistant message that failed or was interrupted.
pub(super) fn ending_lines(message: &AssistantMessage, theme: &Theme, out: &mut Vec<StyledLine>) {
    match message.stop_reason {
        StopReason::Aborted => match message.error_message.as_deref() {
            // Cut short some other way than by the user (the process stopped mid-run).
            Some(why) if why != claw_agent::ABORTED_MESSAGE => out.push(hanging(
                format!("■ interrupted: {}", clean(why)),
                theme.fg(Token::Warning),
            )),
            _ => out.push(interrupted_line(theme)),
        },
        StopReason::Error => {
            let why = message
                .error_message
                .as_deref()
                .unwrap_or("the request failed");
            let style = theme.fg(Token::Error);
            out.push(hanging(format!("✗ {}", clean(why)), style));
            // An overflow's text says itself what happened and what to do; other
            // advice is said once: most provider errors already end with what to do.
            if !message.is_context_overflow() {
                let advice = if why.to_lowercase().contains("try again") {
                    "  Your conversation is kept; /retry sends the request again."
                } else {
                    "  Your conversation is kept: /retry sends the request again, or send a message."
                };
                out.push(StyledLine::plain(advice, theme.dim()));
            }
        }
        StopReason::Length => out.push(StyledLine::plain(
            "⚠ the answer hit the output token limit; ask the model to continue",
            theme.fg(Token::Warning),
        )),
        StopReason::Stop | StopReason::ToolUse => {}
    }
}

/// A shell command's card, and what becomes of its output.
pub(super) fn shell_lines(
    id: &str,
    command: &str,
    keep: bool,
    ctx: &RenderCtx<'_>,
    out: &mut Vec<StyledLine>,
) {
    let name = if keep { "!" } else { "!!" };
    let args = serde_json::json!({ "command": command });
    // A command's card has no diff, so nothing to highlight.
    card_lines(id, name, &args, ctx, out, &mut Vec::new());
    let pending = ctx.cards.get(id).is_none_or(CardInfo::is_pending);
    let fate = match (keep, pending) {
        (true, true) => "its output will go with your next message",
        (true, false) => "its output goes with your next message",
        (false, _) => "not added to the conversation (!!)",
    };
    out.push(StyledLine::plain(format!("    ↳ {fate}"), ctx.theme.dim()));
}

/// The marker where the user interrupted a run.
fn interrupted_line(theme: &Theme) -> StyledLine {
    StyledLine::plain("■ interrupted", theme.fg(Token::Warning))
}

/// Renders a non-assistant entry.
pub(super) fn render_simple(kind: &EntryKind, ctx: &RenderCtx<'_>, out: &mut Vec<StyledLine>) {
    let theme = ctx.theme;
    match kind {
        EntryKind::User(text) => user_lines(text, theme, out),
        EntryKind::Notice(level, text) => {
            let (symbol, style) = match level {
                NoticeLevel::Info => ("ℹ", theme.dim()),
                NoticeLevel::Warning => ("⚠", theme.fg(Token::Warning)),
                NoticeLevel::Error => ("✗", theme.fg(Token::Error)),
            };
            prefixed_text(&format!("{symbol} "), text, style, out);
        }
        EntryKind::Notification { source, text } => {
            let head = theme.fg(Token::Notify).add_modifier(Modifier::BOLD);
            let (title, body) = notification_parts(text);
            let title = title.map_or_else(|| format!("{source} notification"), clean);
            out.push(StyledLine::plain(format!("◆ {title}"), head));
            if !body.is_empty() {
                prefixed_text("│ ", body, theme.fg(Token::Notify), out);
            }
        }
        EntryKind::Outbound(m) => {
            let head = theme.fg(Token::Message).add_modifier(Modifier::BOLD);
            out.push(StyledLine::plain(
                format!("✉ message to {}:{}", m.channel, m.chat_id),
                head,
            ));
            prefixed_text("┃ ", &m.content, theme.fg(Token::Message), out);
        }
        EntryKind::Retry {
            attempt,
            max_attempts,
            delay_ms,
            reason,
            since,
            live,
        } => {
            // Counts down while the wait lasts (the chat redraws it every second); once
            // over, it says how long the wait was.
            let end = *since + Duration::from_millis(*delay_ms);
            let left = end.saturating_duration_since(ctx.now);
            let when = if !*live {
                format!("in {:.1}s", *delay_ms as f64 / 1000.0)
            } else if left.is_zero() {
                "now".to_owned()
            } else {
                format!("in {}s · Esc cancels", left.as_secs_f64().ceil() as u64)
            };
            let text = format!(
                "↻ retry {attempt}/{max_attempts} {when}: {}",
                clip(reason.lines().next().unwrap_or_default(), 200)
            );
            out.push(hanging(
                text,
                theme.fg(Token::Warning).add_modifier(Modifier::DIM),
            ));
        }
        EntryKind::Interrupted => out.push(interrupted_line(theme)),
        EntryKind::Compacting { tokens_before } => out.push(StyledLine::plain(
            format!(
                "⟳ Compacting {} tokens… Esc cancels",
                short_tokens(*tokens_before)
            ),
            theme.fg(Token::Warning).add_modifier(Modifier::BOLD),
        )),
        EntryKind::Assistant(_)
        | EntryKind::Recorded(_)
        | EntryKind::Shell { .. }
        | EntryKind::Compacted { .. } => {}
    }
}

/// The user's message `text` (with its image chips).
pub(super) fn user_lines(text: &str, theme: &Theme, out: &mut Vec<StyledLine>) {
    let style = theme.fg(Token::User).add_modifier(Modifier::BOLD);
    let marker = Span::styled("› ", theme.fg(Token::User));
    // Shell output sent along is folded to its command.
    let (commands, text) = split_shell_blocks(text);
    let folded = !commands.is_empty();
    for (i, command) in commands.into_iter().enumerate() {
        let first = if i == 0 {
            Span::styled("› ", theme.fg(Token::User))
        } else {
            Span::raw("  ")
        };
        out.push(StyledLine {
            spans: vec![Span::styled(
                format!("$ {} · output sent along", clean(command)),
                theme.dim(),
            )],
            first_prefix: vec![first],
            rest_prefix: vec![Span::raw("  ")],
            ..StyledLine::default()
        });
    }
    for (i, line) in clean(text).split('\n').enumerate() {
        let first = if i == 0 && !folded {
            marker.clone()
        } else {
            Span::raw("  ")
        };
        out.push(StyledLine {
            first_prefix: vec![first],
            rest_prefix: vec![Span::raw("  ")],
            spans: vec![Span::styled(line.to_owned(), style)],
            ..StyledLine::default()
        });
    }
}

/// The divider of a compaction and its summary, collapsed unless expanded.
pub(super) fn compacted_lines(
    kind: &EntryKind,
    ctx: &RenderCtx<'_>,
    out: &mut Vec<StyledLine>,
    missing: &mut Vec<HighlightRequest>,
) {
    let EntryKind::Compacted {
        tokens_before,
        tokens_after,
        summary,
    } = kind
    else {
        return;
    };
    let theme = ctx.theme;
    let rule = theme.fg(Token::Accent).add_modifier(Modifier::BOLD);
    out.push(StyledLine::plain(
        format!(
            "── compacted: {} → {} tokens ──",
            short_tokens(*tokens_before),
            short_tokens(*tokens_after)
        ),
        rule,
    ));
    let words = summary.split_whitespace().count();
    let style = theme.dim();
    if !(ctx.expand_summaries || ctx.expand_thinking) {
        out.push(StyledLine::plain(
            format!("▸ summary ({words} words) · Enter or Ctrl+T expands"),
            style,
        ));
        return;
    }
    out.push(StyledLine::plain(
        format!("▾ summary ({words} words) · sent instead of the history above"),
        style,
    ));
    let md = MdContext {
        theme,
        highlights: ctx.highlights,
        base: theme.text(),
        request_highlights: true,
        // The summary is indented under a two-cell rule.
        width: ctx.width.saturating_sub(2),
    };
    let mut lines = Vec::new();
    markdown::render(summary, &md, &mut lines, missing);
    out.extend(
        lines
            .into_iter()
            .map(|line| line.nested(&[Span::styled("│ ", style)], &[Span::styled("│ ", style)])),
    );
}

/// A line whose wrapped rows are indented under its first character after the symbol.
fn hanging(text: String, style: ratatui::style::Style) -> StyledLine {
    StyledLine {
        spans: vec![Span::styled(text, style)],
        rest_prefix: vec![Span::raw("  ")],
        ..StyledLine::default()
    }
}

fn prefixed_text(
    prefix: &str,
    text: &str,
    style: ratatui::style::Style,
    out: &mut Vec<StyledLine>,
) {
    let pad = " ".repeat(prefix.chars().count());
    let bar = prefix.trim_end().chars().all(|c| "│┃".contains(c));
    for (i, line) in clean(text).split('\n').enumerate() {
        let first = if i == 0 || bar {
            prefix.to_owned()
        } else {
            pad.clone()
        };
        let rest = if bar { prefix.to_owned() } else { pad.clone() };
        out.push(StyledLine {
            first_prefix: vec![Span::styled(first, style)],
            rest_prefix: vec![Span::styled(rest, style)],
            spans: vec![Span::styled(line.to_owned(), style)],
            wrap: WrapKind::Word,
            ..StyledLine::default()
        });
    }
}

/// A notification as the model reads it, split for the chat: the envelope's
/// `[SYSTEM NOTIFICATION]` line is for the model and is dropped; a bracketed first line
/// (`[Subagent "Task 1" (subagent-1) completed]`) is the title; the rest is the body.
fn notification_parts(text: &str) -> (Option<&str>, &str) {
    let text = text
        .strip_prefix(claw_agent::convert::NOTIFICATION_PREFIX)
        .map_or(text, |rest| rest.trim_start_matches(['\r', '\n']));
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    match first
        .trim_end()
        .strip_prefix('[')
        .and_then(|f| f.strip_suffix(']'))
    {
        Some(title) if !title.trim().is_empty() => (Some(title), rest.trim_end()),
        _ => (None, text.trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::notification_parts;

    #[test]
    fn a_notification_shows_its_header_as_the_title_without_the_envelope() {
        let text = "[SYSTEM NOTIFICATION]\n[Subagent \"Task 1\" (subagent-1) completed]\nREADME.md has 120 lines.\n";
        assert_eq!(
            notification_parts(text),
            (
                Some("Subagent \"Task 1\" (subagent-1) completed"),
                "README.md has 120 lines."
            )
        );
        // Without a bracketed header the whole text is the body, under its source.
        assert_eq!(
            notification_parts("[SYSTEM NOTIFICATION]\nplain text"),
            (None, "plain text")
        );
        assert_eq!(notification_parts("[]\nx"), (None, "[]\nx"));
    }
}
