//! The `/status` overlay: what the session runs on and what it has used, one labelled
//! row each (the root gathers the rows from its parts; this only draws them).

use crate::theme::{Theme, Token};
use crate::widgets::{centered, dialog, scrolled};
use crate::wrap::{StyledLine, wrap};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Span;

/// Width of the label column.
const LABEL: usize = 18;

/// One row of `/status`: a label and its value (an empty label continues the row
/// above; an empty value makes the label a section title).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusRow {
    /// What it is.
    pub label: String,
    /// Its value.
    pub value: String,
}

impl StatusRow {
    /// A row.
    pub fn new(label: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            value: value.into(),
        }
    }
}

/// Draws the rows from row `scroll` on, in a dialog called `title` (`/settings` draws
/// its rows this way too).
pub(super) fn draw(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    (title, rows): (&str, &[StatusRow]),
    scroll: u16,
) {
    // Sized to the rows as they wrap at the dialog's width.
    let inner_width = centered(area, 80, 1).width.saturating_sub(2);
    let head = theme.fg(Token::Accent).add_modifier(Modifier::BOLD);
    let pad = " ".repeat(LABEL);
    let lines: Vec<StyledLine> = rows
        .iter()
        .map(|row| {
            if row.value.is_empty() {
                return StyledLine::plain(row.label.clone(), head);
            }
            StyledLine {
                spans: vec![Span::styled(row.value.clone(), theme.text())],
                first_prefix: vec![Span::styled(
                    format!("  {:<width$}", row.label, width = LABEL - 2),
                    theme.dim(),
                )],
                rest_prefix: vec![Span::raw(pad.clone())],
                ..StyledLine::default()
            }
        })
        .collect();
    let wrapped = wrap(&lines, inner_width);
    let height = u16::try_from(wrapped.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2)
        .min(area.height);
    let rect = centered(area, 80, height);
    let body = dialog(theme, rect, title.into(), buf);
    let max = wrapped.len().saturating_sub(usize::from(body.height));
    scrolled(&wrapped, body, scroll, buf);
    if usize::from(scroll) < max {
        let text = " ↓ more (PgDn) ";
        let x = rect.right().saturating_sub(text.chars().count() as u16 + 2);
        let sign = theme.fg(Token::Accent).add_modifier(Modifier::BOLD);
        buf.set_string(x, rect.bottom().saturating_sub(1), text, sign);
    }
}
