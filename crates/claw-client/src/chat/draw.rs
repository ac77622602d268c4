//! Drawing the chat pane: the frame and its title, the visible rows, the selected
//! item's marker, find's highlights and its search line, and the "new messages below"
//! marker. Pure: it reads the rows the frame step laid out.

use super::Chat;
use crate::theme::{Theme, Token};
use crate::widgets::{pane_frame, put_line};
use crate::wrap::{StyledLine, str_width, wrap};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

/// What drawing the chat is handed besides its own state.
pub(crate) struct ChatView<'a> {
    /// Whether the pane has focus.
    pub focused: bool,
    /// The key that jumps to the bottom, as the "new messages below" marker names it.
    pub bottom_key: &'a str,
    /// The pane's title (the main chat, or the subagent shown read-only).
    pub title: &'a str,
}

impl Chat {
    /// Draws the pane into `area`.
    pub(crate) fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme, view: &ChatView) {
        let mut text_area = crate::layout::inner(area);
        let total = self.transcript.total_rows();
        let mut title = format!(" {} ", view.title);
        let find_row = self.find.is_some() && text_area.height > 1;
        if find_row {
            text_area.height -= 1;
        }
        let height = usize::from(text_area.height);
        let top = self.top(height);
        if !self.scroll.follow && total > height {
            let percent = (top + height) * 100 / total.max(1);
            title = format!(" {} · {percent}% ", view.title);
        }
        pane_frame(theme, area, &title, view.focused, buf);
        if self.transcript.is_empty() {
            draw_welcome(text_area, buf, theme);
        } else {
            for (i, row) in self.transcript.rows(top, height).enumerate() {
                put_line(
                    buf,
                    text_area.x,
                    text_area.y + i as u16,
                    row,
                    text_area.width,
                );
            }
            self.draw_drag(text_area, top, buf, theme);
            self.draw_selection(text_area, top, buf, theme);
            self.draw_matches(text_area, top, buf, theme);
        }
        if find_row {
            self.draw_find_line(text_area, buf, theme);
        } else if !self.scroll.follow && self.scroll.unseen && text_area.height > 0 {
            let marker = format!(" ↓ new messages below ({}) ", view.bottom_key);
            let width = str_width(&marker) as u16;
            let x = text_area.x + text_area.width.saturating_sub(width);
            let y = text_area.y + text_area.height - 1;
            let style = theme
                .fg(Token::Accent)
                .add_modifier(Modifier::BOLD | Modifier::REVERSED);
            buf.set_stringn(x, y, marker, usize::from(text_area.width), style);
        }
    }

    /// A bar in the first column beside every visible row of the selected item.
    fn draw_selection(&self, text_area: Rect, top: usize, buf: &mut Buffer, theme: &Theme) {
        let Some(rows) = self.selected_rows() else {
            return;
        };
        let style = theme.fg(Token::Accent).add_modifier(Modifier::BOLD);
        for row in rows {
            let Some(y) = row
                .checked_sub(top)
                .filter(|y| *y < usize::from(text_area.height))
            else {
                continue;
            };
            if let Some(cell) = buf.cell_mut((text_area.x, text_area.y + y as u16)) {
                cell.set_char('▌').set_style(style);
            }
        }
    }

    /// Every visible match of find, the current one stronger.
    fn draw_matches(&self, text_area: Rect, top: usize, buf: &mut Buffer, theme: &Theme) {
        let Some(find) = &self.find else {
            return;
        };
        let bottom = top + usize::from(text_area.height);
        let first = find.matches().partition_point(|m| m.row < top);
        for (i, m) in find.matches()[first..].iter().enumerate() {
            if m.row >= bottom {
                break;
            }
            let style = if find.current() == Some(first + i) {
                theme.selection().add_modifier(Modifier::BOLD)
            } else {
                theme.fg(Token::Warning).add_modifier(Modifier::REVERSED)
            };
            let x = text_area.x + m.column.min(usize::from(text_area.width)) as u16;
            let width = m
                .width
                .min(usize::from(text_area.width).saturating_sub(m.column))
                as u16;
            let y = text_area.y + (m.row - top) as u16;
            buf.set_style(Rect::new(x, y, width, 1), style);
        }
    }

    /// The search line under the rows.
    fn draw_find_line(&self, text_area: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(find) = &self.find else {
            return;
        };
        let y = text_area.y + text_area.height;
        let count = match (find.current(), find.matches().len()) {
            (_, 0) if find.query().is_empty() => String::new(),
            (_, 0) => "no match".to_owned(),
            (Some(i), n) => format!("{}/{n}", i + 1),
            (None, n) => format!("{n} matches"),
        };
        let bar = theme.fg(Token::Accent).add_modifier(Modifier::BOLD);
        let line = Line::from(vec![
            Span::styled(" Find: ", bar),
            Span::styled(find.query().to_owned(), theme.text()),
            Span::styled("█", theme.fg(Token::Accent)),
            Span::styled(format!("  {count}"), theme.fg(Token::Warning)),
            Span::styled(
                "  · Enter next · Shift+Enter previous · Esc closes",
                theme.dim(),
            ),
        ]);
        buf.set_style(
            Rect::new(text_area.x, y, text_area.width, 1),
            theme.status(),
        );
        put_line(buf, text_area.x, y, &line, text_area.width);
    }
}

/// What the empty chat says.
fn draw_welcome(text_area: Rect, buf: &mut Buffer, theme: &Theme) {
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
        StyledLine::plain(
            "F1 shows every key; / lists the commands; !cmd runs a shell command.",
            theme.dim(),
        ),
    ];
    for (i, line) in wrap(&welcome, text_area.width)
        .iter()
        .enumerate()
        .take(usize::from(text_area.height))
    {
        buf.set_line(text_area.x, text_area.y + i as u16, line, text_area.width);
    }
}
