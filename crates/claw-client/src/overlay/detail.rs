//! The detail overlay of one tool call: the diff of a file it changed, its arguments
//! (highlighted JSON), its result or the output so far, and the result's details.

use crate::diff;
use crate::highlight::{HighlightCache, highlight_key};
use crate::theme::{Theme, Token};
use crate::tool_tree::{CallNode, CallStatus, pretty_json};
use crate::widgets::{centered, dialog, format_duration, scrolled};
use crate::wrap::{StyledLine, WrapKind, clean, wrap};
use claw_tools::fs::FileChange;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Span;
use std::time::Instant;

/// Draws `node`'s details from row `scroll` on.
pub(super) fn draw(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    node: &CallNode,
    highlights: &HighlightCache,
    now: Instant,
    (scroll, unfolded): (u16, bool),
) {
    let rect = centered(area, 80, area.height.saturating_sub(4));
    let (symbol, _) = node.status.symbol();
    let timing = node.elapsed(now).map(format_duration).unwrap_or_default();
    let change = node
        .result
        .as_ref()
        .and_then(|r| FileChange::from_details(r.details()));
    let fold_key = match &change {
        Some(c) if c.hunks.iter().any(|h| h.lines.len() > diff::FOLD_OVER) => " · f folds",
        _ => "",
    };
    let title = format!(
        " {symbol} {} {timing} · ↑↓ scroll{fold_key} · Esc closes ",
        node.name
    );
    let body = dialog(theme, rect, title, buf);
    let head = theme.fg(Token::Accent).add_modifier(Modifier::BOLD);
    let mut lines = Vec::new();
    if let Some(change) = &change {
        let mut heading = vec![Span::styled(format!("Diff of {} ", change.path), head)];
        heading.extend(diff::stat_spans(change, theme));
        lines.push(StyledLine {
            spans: heading,
            ..StyledLine::default()
        });
        let highlighted = diff::highlighted(change, theme, highlights);
        lines.extend(diff::diff_lines(change, theme, highlighted, !unfolded));
        lines.push(StyledLine::blank());
    }
    lines.push(StyledLine::plain("Arguments", head));
    let args = node.pretty_args();
    let key = highlight_key(&theme.syntax_theme, "json", &args);
    let highlighted = highlights.get(&key);
    for (i, text) in args.split('\n').enumerate() {
        let spans = match highlighted.and_then(|h| h.get(i)) {
            Some(pieces) => pieces
                .iter()
                .map(|(s, t)| Span::styled(t.clone(), *s))
                .collect(),
            None => vec![Span::styled(text.to_owned(), theme.fg(Token::Code))],
        };
        lines.push(StyledLine {
            spans,
            wrap: WrapKind::Char,
            ..StyledLine::default()
        });
    }
    lines.push(StyledLine::blank());
    let (label, body_text, style) = match (&node.result, node.status) {
        (Some(r), _) => (
            if r.is_error() {
                "Result (error)"
            } else {
                "Result"
            },
            r.content().to_owned(),
            if r.is_error() {
                theme.fg(Token::Error)
            } else {
                theme.text()
            },
        ),
        (None, CallStatus::Running) => (
            "Output so far",
            node.live.iter().cloned().collect::<Vec<_>>().join("\n"),
            theme.text(),
        ),
        (None, _) => ("Result", "(none yet)".to_owned(), theme.dim()),
    };
    lines.push(StyledLine::plain(label, head));
    for text in clean(&body_text).split('\n') {
        lines.push(StyledLine {
            spans: vec![Span::styled(text.to_owned(), style)],
            wrap: WrapKind::Char,
            ..StyledLine::default()
        });
    }
    // The diff above is what a change's details hold: not repeated as JSON.
    if let Some(details) = node
        .result
        .as_ref()
        .map(|r| r.details())
        .filter(|d| !d.is_null() && change.is_none())
    {
        lines.push(StyledLine::blank());
        lines.push(StyledLine::plain("Details", head));
        for text in clean(&pretty_json(details)).split('\n') {
            lines.push(StyledLine {
                spans: vec![Span::styled(text.to_owned(), theme.dim())],
                wrap: WrapKind::Char,
                ..StyledLine::default()
            });
        }
    }
    scrolled(&wrap(&lines, body.width), body, scroll, buf);
}
