//! The composer, the queue strip above it and the completion popup.

use super::put_line;
use crate::tui::app::App;
use crate::tui::keymap::Action;
use crate::tui::layout::Focus;
use crate::tui::theme::Token;
use crate::tui::wrap::{clean, str_width};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// Draws pending steering and follow-up messages, one per row.
pub fn draw_queue(app: &App, area: Rect, buf: &mut Buffer) {
    if area.height == 0 {
        return;
    }
    let theme = app.theme();
    let items = app
        .queued_steering
        .iter()
        .map(|t| ("steer", t, Token::Warning))
        .chain(
            app.queued_follow_up
                .iter()
                .map(|t| ("follow-up", t, Token::Accent)),
        );
    let total = app.queued_steering.len() + app.queued_follow_up.len();
    for (i, (label, text, token)) in items.take(usize::from(area.height)).enumerate() {
        let y = area.y + i as u16;
        let shown = if i + 1 == usize::from(area.height) && total > i + 1 {
            format!("{} (+{} more)", first_line(text), total - i - 1)
        } else {
            first_line(text)
        };
        let line = Line::from(vec![
            Span::styled(
                format!(" {label} "),
                theme
                    .fg(token)
                    .add_modifier(Modifier::REVERSED | Modifier::BOLD),
            ),
            Span::raw(" "),
            Span::styled(shown, theme.text()),
        ]);
        buf.set_line(area.x, y, &line, area.width);
    }
}

fn first_line(text: &str) -> String {
    let clean = clean(text);
    let mut lines = clean.lines();
    let first = lines.next().unwrap_or_default().to_owned();
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first
    }
}

/// Draws the composer: a top border with the keys that matter now, then the text.
pub fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    if area.height == 0 {
        return;
    }
    let theme = app.theme();
    let keys = &app.config.keymap;
    let hint = if app.running {
        format!(
            " {}: follow-up · {}: steer (empty: interrupt) · {}: pull back queue ",
            keys.label(Action::Submit),
            keys.label(Action::Interrupt),
            keys.label(Action::PullQueue)
        )
    } else {
        format!(
            " {}: send · {}: newline ",
            keys.label(Action::Submit),
            keys.label(Action::Newline)
        )
    };
    let focused = app.focus == Focus::Composer;
    let rule = "─".repeat(usize::from(area.width));
    buf.set_stringn(
        area.x,
        area.y,
        rule,
        usize::from(area.width),
        theme.border(focused),
    );
    put_line(
        buf,
        area.x,
        area.y,
        &Line::from(Span::styled(hint, theme.dim())),
        area.width,
    );
    let body = Rect {
        y: area.y + 1,
        height: area.height - 1,
        ..area
    };
    if focused {
        app.composer.textarea().render(body, buf);
    } else {
        // Unfocused, the cursor is hidden and only the text is shown.
        for (i, line) in app
            .composer
            .textarea()
            .lines()
            .iter()
            .take(usize::from(body.height))
            .enumerate()
        {
            buf.set_stringn(
                body.x,
                body.y + i as u16,
                line,
                usize::from(body.width),
                theme.dim(),
            );
        }
    }
}

/// Draws the completion popup above the composer.
pub fn draw_completion(app: &App, composer: Rect, buf: &mut Buffer) {
    let Some(completion) = &app.composer.completion else {
        return;
    };
    if app.focus != Focus::Composer || completion.items.is_empty() {
        return;
    }
    let theme = app.theme();
    let width = completion
        .items
        .iter()
        .map(|i| str_width(i))
        .max()
        .unwrap_or(0)
        .clamp(16, 60) as u16
        + 4;
    let height = completion.items.len() as u16 + 2;
    let area = Rect {
        x: composer.x + 1,
        y: composer.y.saturating_sub(height),
        width: width.min(composer.width.saturating_sub(2)),
        height: height.min(composer.y),
    };
    if area.height < 3 {
        return;
    }
    Clear.render(area, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(true))
        .title(Span::styled(" Tab: complete ", theme.dim()));
    let body = block.inner(area);
    block.render(area, buf);
    for (i, item) in completion
        .items
        .iter()
        .take(usize::from(body.height))
        .enumerate()
    {
        let y = body.y + i as u16;
        let style = if i == completion.selected {
            theme.selection().add_modifier(Modifier::BOLD)
        } else {
            theme.text()
        };
        buf.set_style(Rect::new(body.x, y, body.width, 1), style);
        buf.set_stringn(
            body.x + 1,
            y,
            item,
            usize::from(body.width.saturating_sub(1)),
            style,
        );
    }
}
