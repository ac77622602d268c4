//! Drawing the composer and its completion popup; the theme's colours are applied here.

use super::{Composer, PLACEHOLDER};
use crate::theme::{Theme, Token};
use crate::widgets::{fit_width, put_line};
use crate::wrap::str_width;
use claw_agent::QueueKind;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// What drawing the composer is handed besides its own state.
pub(crate) struct ComposerView<'a> {
    /// Whether it has focus (the cursor and the popup show only then).
    pub focused: bool,
    /// The keys line on its top border: what the keys do in the focused pane, most
    /// important first (as many as fit are shown, whole).
    pub hint: &'a [String],
}

impl Composer {
    /// Draws the composer: a top border with the keys that matter now, then the text.
    pub(crate) fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme, view: &ComposerView) {
        if area.height == 0 {
            return;
        }
        let room = usize::from(area.width).saturating_sub(3);
        let mut shown = String::new();
        for item in view.hint {
            let next = if shown.is_empty() {
                item.clone()
            } else {
                format!("{shown} · {item}")
            };
            if str_width(&next) > room {
                break;
            }
            shown = next;
        }
        let hint = format!(" {shown} ");
        let rule = "─".repeat(usize::from(area.width));
        buf.set_stringn(
            area.x,
            area.y,
            rule,
            usize::from(area.width),
            theme.border(view.focused),
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
        if view.focused {
            self.draw_text(body, buf, theme);
            self.draw_marks(body, buf, theme);
        } else {
            // Unfocused, the cursor is hidden and only the text is shown.
            for (i, line) in self
                .textarea
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

    /// The text area with its cursor, coloured by `theme`: the text in the text colour,
    /// the placeholder (cursor first) dimmed.
    fn draw_text(&self, body: Rect, buf: &mut Buffer, theme: &Theme) {
        let empty = self.textarea.is_empty();
        if !empty {
            buf.set_style(body, theme.text());
        }
        (&self.textarea).render(body, buf);
        if empty && body.height > 0 {
            let width = (1 + str_width(PLACEHOLDER)).min(usize::from(body.width));
            let cells = Rect {
                height: 1,
                width: width as u16,
                ..body
            };
            buf.set_style(cells, theme.dim());
        }
    }

    /// Marks each restored message with its queue at the right of its first row, while
    /// the text is unedited and shown whole.
    fn draw_marks(&self, body: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(items) = self.restored() else {
            return;
        };
        if self.rows(body.width) > body.height {
            return;
        }
        let width = usize::from(body.width.max(1));
        let lines = self.textarea.lines();
        let mut row = 0usize;
        let mut line = 0usize;
        for item in items {
            let (label, token) = match item.kind {
                QueueKind::Steering => (" steer ", Token::Warning),
                QueueKind::FollowUp => (" follow-up ", Token::Accent),
            };
            let first_width = lines.get(line).map_or(0, |l| str_width(l));
            let label_width = str_width(label);
            if first_width.min(width) + label_width < width {
                let x = body.right() - label_width as u16;
                let style = theme
                    .fg(token)
                    .add_modifier(Modifier::REVERSED | Modifier::BOLD);
                buf.set_string(x, body.y + row as u16, label, style);
            }
            // The item's lines, then the blank line between items.
            let count = item.text.split('\n').count();
            for l in lines.iter().skip(line).take(count + 1) {
                row += str_width(l).div_ceil(width).max(1);
            }
            line += count + 1;
        }
    }

    /// Draws the completion popup above the composer's `area` (only while focused).
    pub(crate) fn draw_completion(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
    ) {
        let Some(completion) = &self.completion else {
            return;
        };
        if !focused || completion.items.is_empty() {
            return;
        }
        let name_width = completion
            .items
            .iter()
            .map(|i| str_width(i))
            .max()
            .unwrap_or(0);
        let detail_width = completion
            .details
            .iter()
            .map(|d| str_width(d))
            .max()
            .unwrap_or(0);
        let gap = if detail_width > 0 { 2 } else { 0 };
        let width = (name_width + gap + detail_width).clamp(16, 90) as u16 + 4;
        let height = completion.items.len() as u16 + 2;
        let popup = Rect {
            x: area.x + 1,
            y: area.y.saturating_sub(height),
            width: width.min(area.width.saturating_sub(2)),
            height: height.min(area.y),
        };
        if popup.height < 3 {
            return;
        }
        Clear.render(popup, buf);
        let rows = usize::from(popup.height - 2);
        let count = completion.items.len();
        // The rows scroll with the selection, so an entry past the last row is reached.
        let first = completion
            .selected
            .saturating_sub(rows.saturating_sub(1))
            .min(count.saturating_sub(rows));
        let title = if count > rows {
            format!(" Tab: complete · {}/{count} ", completion.selected + 1)
        } else {
            " Tab: complete ".to_owned()
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border(true))
            .title(Span::styled(title, theme.dim()));
        let body = block.inner(popup);
        block.render(popup, buf);
        for (row, (i, item)) in completion
            .items
            .iter()
            .enumerate()
            .skip(first)
            .take(usize::from(body.height))
            .enumerate()
        {
            let y = body.y + row as u16;
            let style = if i == completion.selected {
                theme.selection().add_modifier(Modifier::BOLD)
            } else {
                theme.text()
            };
            buf.set_style(Rect::new(body.x, y, body.width, 1), style);
            let room = usize::from(body.width.saturating_sub(1));
            let (end, _) = buf.set_stringn(body.x + 1, y, item, room, style);
            let detail = completion.details.get(i).map_or("", String::as_str);
            let x = (body.x + 1 + (name_width + gap) as u16).max(end + 1);
            if !detail.is_empty() && x < body.right() {
                let dim = if i == completion.selected {
                    style
                } else {
                    theme.dim()
                };
                let room = usize::from(body.right() - x);
                buf.set_stringn(x, y, fit_width(detail, room), room, dim);
            }
        }
    }
}
