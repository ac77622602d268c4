//! The tool-call tree pane: turns, calls with status, duration and a result preview,
//! live output under running calls, a subagent's calls under its `spawn`.

use super::{focused, pane_frame, put_line};
use crate::tui::app::{App, SPINNER};
use crate::tui::calls::{CallStatus, TreeRow};
use crate::tui::entry::{format_duration, status_symbol};
use crate::tui::layout::{Focus, inner};
use crate::tui::theme::Token;
use crate::tui::wrap::clean;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

/// Draws the tree into `area`.
pub fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    let is_focused = focused(app, Focus::Tree);
    pane_frame(app, area, " Tools ", is_focused, buf);
    let body = inner(area);
    let rows = app.calls.rows();
    if rows.is_empty() {
        let line = Line::from(Span::styled("No tool calls yet.", theme.dim()));
        buf.set_line(body.x, body.y, &line, body.width);
        return;
    }
    let height = usize::from(body.height);
    let selected_row = app
        .tree_selected
        .as_deref()
        .filter(|_| is_focused)
        .and_then(|sel| {
            rows.iter()
                .position(|r| matches!(r, TreeRow::Call { id, .. } if id == sel))
        });
    let top = match selected_row {
        // Keep the selection in view, with its preview line when there is room.
        Some(row) => (row + 2).saturating_sub(height).min(row),
        None => rows.len().saturating_sub(height),
    };
    for (i, row) in rows.iter().skip(top).take(height).enumerate() {
        let y = body.y + i as u16;
        let line = row_line(app, row);
        put_line(buf, body.x, y, &line, body.width);
        if Some(top + i) == selected_row {
            buf.set_style(Rect::new(body.x, y, body.width, 1), theme.selection());
        }
    }
}

fn row_line(app: &App, row: &TreeRow) -> Line<'static> {
    let theme = app.theme();
    let indent = |depth: usize| "  ".repeat(depth);
    match row {
        TreeRow::Turn(n) => Line::from(Span::styled(
            format!("Turn {n}"),
            theme.fg(Token::Accent).add_modifier(Modifier::BOLD),
        )),
        TreeRow::Call { id, depth } => {
            let Some(node) = app.calls.node(id) else {
                return Line::default();
            };
            let (symbol, token) = status_symbol(node.status);
            let symbol = if node.status == CallStatus::Running {
                SPINNER[app.spinner % SPINNER.len()]
            } else {
                symbol
            };
            let mut spans = vec![
                Span::raw(indent(*depth)),
                Span::styled(format!("{symbol} "), theme.fg(token)),
                Span::styled(
                    node.name.clone(),
                    theme.fg(Token::Tool).add_modifier(Modifier::BOLD),
                ),
            ];
            if !node.summary.is_empty() {
                spans.push(Span::styled(
                    format!(" {}", clean(&node.summary)),
                    theme.text(),
                ));
            }
            let timing = match node.status {
                CallStatus::Skipped => Some("skipped".to_owned()),
                CallStatus::Queued => Some("queued".to_owned()),
                _ => node.elapsed(app.now).map(format_duration),
            };
            if let Some(t) = timing {
                spans.push(Span::styled(format!("  {t}"), theme.dim()));
            }
            Line::from(spans)
        }
        TreeRow::Live { depth, text } => Line::from(vec![
            Span::raw(indent(*depth)),
            Span::styled("  │ ", theme.dim()),
            Span::styled(clean(text), theme.dim()),
        ]),
        TreeRow::Preview { depth, text } => Line::from(vec![
            Span::raw(indent(*depth)),
            Span::styled("  └ ", theme.dim()),
            Span::styled(clean(text), theme.dim()),
        ]),
    }
}
