//! Drawing the composer and its completion popup; the theme's colours are applied here.

use super::{Composer, PLACEHOLDER};
use crate::tui::keymap::{Action, KeyMap};
use crate::tui::theme::Theme;
use crate::tui::widgets::put_line;
use crate::tui::wrap::str_width;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// What drawing the composer is handed besides its own state.
pub(crate) struct ComposerView<'a> {
    /// Whether it has focus (the cursor and the popup show only then).
    pub focused: bool,
    /// Whether a run is active (the keys line says what Enter and Esc do then).
    pub running: bool,
    /// The bindings the keys line names.
    pub keymap: &'a KeyMap,
}

impl Composer {
    /// Draws the composer: a top border with the keys that matter now, then the text.
    pub(crate) fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme, view: &ComposerView) {
        if area.height == 0 {
            return;
        }
        let keys = view.keymap;
        let hint = if view.running {
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
        let width = completion
            .items
            .iter()
            .map(|i| str_width(i))
            .max()
            .unwrap_or(0)
            .clamp(16, 60) as u16
            + 4;
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
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border(true))
            .title(Span::styled(" Tab: complete ", theme.dim()));
        let body = block.inner(popup);
        block.render(popup, buf);
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
}
