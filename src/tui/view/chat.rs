//! The chat pane: only the visible rows of the cached, wrapped transcript are copied.

use super::{focused, pane_frame, put_line};
use crate::tui::app::App;
use crate::tui::layout::{Focus, inner};
use crate::tui::theme::Token;
use crate::tui::wrap::{StyledLine, wrap};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

/// Draws the chat pane into `area`.
pub fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    let text_area = inner(area);
    let height = usize::from(text_area.height);
    let total = app.transcript.total_rows();
    let top = app.chat_top(height);
    let mut title = " Chat ".to_owned();
    if !app.chat.follow && total > height {
        let percent = (top + height) * 100 / total.max(1);
        title = format!(" Chat · {percent}% ");
    }
    pane_frame(app, area, &title, focused(app, Focus::Chat), buf);
    if app.transcript.is_empty() {
        let welcome = [
            StyledLine::plain(
                "Welcome to claw-tui.",
                theme.fg(Token::Accent).add_modifier(Modifier::BOLD),
            ),
            StyledLine::blank(),
            StyledLine::plain("Type a message below and press Enter.", theme.text()),
            StyledLine::plain(
                "While the agent works, Enter queues a follow-up; Esc steers (with text) or interrupts (without).",
                theme.dim(),
            ),
            StyledLine::plain("F1 shows every key; / lists the commands.", theme.dim()),
        ];
        for (i, line) in wrap(&welcome, text_area.width)
            .iter()
            .enumerate()
            .take(height)
        {
            buf.set_line(text_area.x, text_area.y + i as u16, line, text_area.width);
        }
        return;
    }
    for (i, row) in app.transcript.rows(top, height).enumerate() {
        put_line(
            buf,
            text_area.x,
            text_area.y + i as u16,
            row,
            text_area.width,
        );
    }
    if !app.chat.follow && app.chat.unseen && text_area.height > 0 {
        let marker = " ↓ new messages below (End) ";
        let width = crate::tui::wrap::str_width(marker) as u16;
        let x = text_area.x + text_area.width.saturating_sub(width);
        let y = text_area.y + text_area.height - 1;
        let style = theme
            .fg(Token::Accent)
            .add_modifier(Modifier::BOLD | Modifier::REVERSED);
        buf.set_stringn(x, y, marker, usize::from(text_area.width), style);
    }
}
