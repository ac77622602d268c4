//! Drawing the inspector: the list, and the three views of a request (pure).

use super::{Detail, Inspector, Tab};
use crate::theme::{Theme, Token};
use crate::widgets::{centered, compact, dialog, fit_width, scrolled};
use crate::wrap::{StyledLine, wrap};
use claw_runtime::inspect::cli::millis;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Draws the inspector over `area`.
pub(in crate::overlay) fn draw(area: Rect, buf: &mut Buffer, theme: &Theme, inspector: &Inspector) {
    let rect = centered(area, 96, area.height.saturating_sub(2));
    match &inspector.detail {
        None => draw_list(rect, buf, theme, inspector),
        Some(detail) => draw_detail(rect, buf, theme, inspector, detail),
    }
}

fn draw_list(rect: Rect, buf: &mut Buffer, theme: &Theme, inspector: &Inspector) {
    let title = format!(
        " Requests ({}) · ↑↓ select · Enter opens · Esc closes ",
        inspector.rows.len()
    );
    let body = dialog(theme, rect, title, buf);
    let head = format!(
        "{:>4} {:>4}  {:<12} {:<22} {:>7} {:>7} {:>7} {:>7} {:>7}  status",
        "#", "turn", "agent", "model", "input", "output", "cached", "ttft", "time"
    );
    let mut lines = vec![Line::from(Span::styled(head, theme.dim()))];
    if inspector.rows.is_empty() {
        lines.push(Line::from(Span::styled(
            "No requests recorded in this session yet.",
            theme.dim(),
        )));
    }
    let height = usize::from(body.height.saturating_sub(1)).max(1);
    let top = inspector.selected.saturating_sub(height.saturating_sub(1));
    for (i, row) in inspector.rows.iter().enumerate().skip(top).take(height) {
        let text = format!(
            "{:>4} {:>4}  {:<12} {:<22} {:>7} {:>7} {:>7} {:>7} {:>7}  {}",
            row.index,
            row.turn,
            fit_width(&row.agent, 12),
            fit_width(&row.model, 22),
            compact(row.input),
            compact(row.output),
            compact(row.cached),
            millis(row.ttft_ms),
            millis(row.duration_ms),
            row.status
        );
        let failed = row.status.contains("error") || row.status == "aborted";
        let mut style = if failed {
            theme.fg(Token::Error)
        } else {
            theme.text()
        };
        if i == inspector.selected {
            style = style.patch(theme.selection());
        }
        lines.push(Line::from(Span::styled(text, style)));
    }
    scrolled(&lines, body, 0, buf);
}

fn draw_detail(
    rect: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    inspector: &Inspector,
    detail: &Detail,
) {
    let row = inspector.rows.get(detail.n);
    let tabs = [
        (Tab::Breakdown, "1 Breakdown"),
        (Tab::Body, "2 Body"),
        (Tab::Diff, "3 Diff"),
    ]
    .iter()
    .map(|(tab, name)| {
        if *tab == detail.tab {
            format!("[{name}]")
        } else {
            name.to_string()
        }
    })
    .collect::<Vec<_>>()
    .join(" ");
    let title = match row {
        Some(r) => format!(
            " Request {} · turn {} · {} · {} · {tabs} · Esc: list ",
            r.index, r.turn, r.agent, r.model
        ),
        None => format!(" Request · {tabs} "),
    };
    let body = dialog(theme, rect, title, buf);
    let (lines, scroll) = match detail.tab {
        Tab::Breakdown => (
            wrap(&breakdown_lines(theme, inspector, detail), body.width),
            detail.scroll,
        ),
        Tab::Diff => (wrap(&diff_lines(theme, detail), body.width), detail.scroll),
        // Only the rows on screen are styled: a body holds the whole history.
        Tab::Body => (body_lines(theme, detail, body), 0),
    };
    scrolled(&lines, body, scroll, buf);
}

fn breakdown_lines(theme: &Theme, inspector: &Inspector, detail: &Detail) -> Vec<StyledLine> {
    let mut lines = Vec::new();
    if let Some(request) = inspector.log.requests.get(detail.n) {
        let sent = &request.sent;
        lines.push(StyledLine::plain(
            format!(
                "{} {} · {} · {} bytes",
                sent.provider, sent.model, sent.url, sent.bytes
            ),
            theme.dim(),
        ));
        if let Some(r) = &request.response {
            let per_s = r
                .output_tokens_per_s
                .map_or(String::new(), |v| format!(" · {v:.0} tok/s"));
            lines.push(StyledLine::plain(
                format!(
                    "status {} · ttft {} · {} · {} out{per_s} · retries {}",
                    r.status
                        .map_or_else(|| r.stop_reason.clone(), |s| s.to_string()),
                    millis(r.ttft_ms),
                    millis(Some(r.duration_ms)),
                    r.output,
                    r.retries
                ),
                theme.dim(),
            ));
            if let Some(error) = &r.error {
                lines.push(StyledLine::plain(error.clone(), theme.fg(Token::Error)));
            }
        }
    }
    lines.push(StyledLine::blank());
    let Some(breakdown) = &detail.breakdown else {
        lines.push(StyledLine::plain(
            "The body cannot be rebuilt from the log.",
            theme.fg(Token::Error),
        ));
        return lines;
    };
    let basis = if breakdown.estimated {
        "estimated: no usage reported"
    } else {
        "as the provider reported"
    };
    lines.push(StyledLine::plain(
        format!("Input: {} tokens ({basis})", breakdown.tokens),
        theme.text().add_modifier(Modifier::BOLD),
    ));
    for part in &breakdown.parts {
        let share = breakdown.share(part);
        let bar = "█".repeat((share * 30.0).round() as usize);
        lines.push(StyledLine {
            spans: vec![
                Span::styled(format!("{:<34}", fit_width(&part.label, 34)), theme.text()),
                Span::styled(
                    format!("{:>8} {:>6.1}%  ", part.tokens, share * 100.0),
                    theme.text(),
                ),
                Span::styled(bar, theme.fg(Token::Accent)),
            ],
            ..StyledLine::default()
        });
    }
    lines
}

fn diff_lines(theme: &Theme, detail: &Detail) -> Vec<StyledLine> {
    let Some(changes) = &detail.changes else {
        return vec![StyledLine::plain(
            "This is the agent's first request: nothing to compare.",
            theme.dim(),
        )];
    };
    if changes.is_empty() {
        return vec![StyledLine::plain(
            "Same body as the agent's previous request.",
            theme.dim(),
        )];
    }
    let mut lines = Vec::new();
    for change in changes {
        let (mark, style) = if change.busts_cache {
            ("⚠ ", theme.fg(Token::Warning).add_modifier(Modifier::BOLD))
        } else {
            ("", theme.fg(Token::Success))
        };
        let note = if change.busts_cache {
            " (breaks the prompt cache from here)"
        } else {
            ""
        };
        lines.push(StyledLine::plain(
            format!("{mark}{}: {}{note}", change.field, change.summary),
            style,
        ));
        for line in &change.lines {
            let style = match (change.busts_cache, line.starts_with('-')) {
                (true, _) => theme.fg(Token::Warning),
                (false, true) => theme.fg(Token::Error),
                (false, false) => theme.text(),
            };
            lines.push(StyledLine::plain(
                format!("  {}", fit_width(line, 400)),
                style,
            ));
        }
        lines.push(StyledLine::blank());
    }
    lines
}

fn body_lines(theme: &Theme, detail: &Detail, area: Rect) -> Vec<Line<'static>> {
    let width = area.width;
    let mut lines = Vec::new();
    let search = &detail.search;
    if search.typing || !search.query.is_empty() {
        let missed = if search.missed { "  (not found)" } else { "" };
        let cursor = if search.typing { "▏" } else { "  n: next" };
        lines.push(Line::from(Span::styled(
            format!("/{}{cursor}{missed}", search.query),
            theme.fg(Token::Accent),
        )));
    }
    let query = search.query.to_lowercase();
    let height = usize::from(area.height).saturating_sub(lines.len());
    let total = detail.body.rows().count();
    let top = usize::from(detail.scroll).min(total.saturating_sub(height));
    for (b, row) in detail.body.rows().skip(top).take(height) {
        let clipped = fit_width(row, usize::from(width));
        let mut spans = json_spans(theme, &clipped);
        if !query.is_empty() && clipped.to_lowercase().contains(&query) {
            spans = spans
                .into_iter()
                .map(|s| s.style(theme.selection()))
                .collect();
        }
        let mut line = Line::from(spans);
        if b == detail.cursor {
            line = line.style(Style::default().add_modifier(Modifier::BOLD));
        }
        lines.push(line);
    }
    lines
}

/// A row of JSON coloured: keys, strings, other values, punctuation.
fn json_spans(theme: &Theme, row: &str) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut rest = row;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('"') {
            let end = string_end(after).map_or(rest.len(), |e| e + 2);
            let (text, tail) = rest.split_at(end.min(rest.len()));
            let token = if tail.starts_with(':') {
                Token::Accent
            } else {
                Token::Success
            };
            spans.push(Span::styled(text.to_owned(), theme.fg(token)));
            rest = tail;
        } else {
            let end = rest.find('"').unwrap_or(rest.len());
            let (text, tail) = rest.split_at(end);
            let plain = text.trim_matches(|c: char| "{}[],: ".contains(c) || c == '▸');
            let token = if plain.is_empty() {
                Token::Dim
            } else {
                Token::Code
            };
            spans.push(Span::styled(text.to_owned(), theme.fg(token)));
            rest = tail;
        }
    }
    spans
}

/// Where the string whose text starts `text` ends (the closing quote's byte offset).
fn string_end(text: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '"') => return Some(i),
            _ => {}
        }
    }
    None
}
