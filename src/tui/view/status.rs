//! The status bar: provider and model, the one state word, turn, tokens, context use,
//! cost, queue modes, the workspace, and a short hint when there is one.

use super::dashboard::compact;
use crate::agent::QueueMode;
use crate::tui::app::{App, SPINNER};
use crate::tui::theme::Token;
use crate::tui::wrap::str_width;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

fn mode(m: QueueMode) -> &'static str {
    match m {
        QueueMode::OneAtATime => "one",
        QueueMode::All => "all",
    }
}

/// The status bar's text pieces, left to right (also used by tests).
pub fn parts(app: &App) -> Vec<String> {
    let usage = &app.totals.usage;
    let mut parts = vec![
        format!("{} · {}", app.config.provider, app.model),
        app.state_word().to_owned(),
        format!("turn {}", app.turn),
        format!(
            "↑{} ↓{}",
            compact(usage.input + usage.cache_read + usage.cache_write),
            compact(usage.output)
        ),
    ];
    if let Some(window) = app.config.context_window.filter(|w| *w > 0) {
        parts.push(format!("ctx {}%", app.totals.context_tokens * 100 / window));
    }
    parts.push(format!("${:.4}", usage.cost));
    parts.push(format!(
        "queues steer:{} follow-up:{}",
        mode(app.steering_mode),
        mode(app.follow_up_mode)
    ));
    // Right after the state word, so narrow terminals show it too.
    if app.unsaved.is_some() {
        parts.insert(2, UNSAVED.to_owned());
    }
    parts
}

/// The status bar's part while the session cannot be written.
const UNSAVED: &str = "⚠ session not saved";

/// Draws the bar into `area` (one row).
pub fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    let base = theme.status();
    buf.set_style(area, base);
    let parts = parts(app);
    let sep = Span::styled(" │ ", base.patch(theme.dim()));
    let mut spans = Vec::new();
    for (i, part) in parts.into_iter().enumerate() {
        if i > 0 {
            spans.push(sep.clone());
        }
        if part == UNSAVED {
            spans.push(Span::styled(
                part,
                base.patch(theme.fg(Token::Error))
                    .add_modifier(Modifier::BOLD),
            ));
            continue;
        }
        if i == 1 {
            let token = match app.state_word() {
                "idle" => Token::Success,
                "retrying" => Token::Warning,
                _ => Token::Tool,
            };
            let spinner = if app.running {
                format!("{} ", SPINNER[app.spinner % SPINNER.len()])
            } else {
                String::new()
            };
            spans.push(Span::styled(
                format!("{spinner}{part}"),
                base.patch(theme.fg(token)).add_modifier(Modifier::BOLD),
            ));
            // The hint goes right after the state word, so narrow terminals show it too.
            if let Some((hint, _)) = &app.hint {
                spans.push(sep.clone());
                spans.push(Span::styled(
                    hint.clone(),
                    base.patch(theme.fg(Token::Warning))
                        .add_modifier(Modifier::BOLD),
                ));
            }
        } else {
            spans.push(Span::styled(part, base));
        }
    }
    let mut line = Line::from(spans);
    line.spans.insert(0, Span::styled(" ", base));
    buf.set_line(area.x, area.y, &line, area.width);
    let used: usize = line.spans.iter().map(|s| str_width(&s.content)).sum();
    let workspace = format!(" {} ", app.config.workspace);
    let room = usize::from(area.width).saturating_sub(used + 2);
    if room >= 8 {
        let shown = if str_width(&workspace) > room {
            let tail: String = workspace
                .chars()
                .rev()
                .take(room - 2)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            format!(" …{tail}")
        } else {
            workspace
        };
        let x = area.x + area.width - str_width(&shown) as u16;
        buf.set_stringn(x, area.y, &shown, room, base.patch(theme.dim()));
    }
}
