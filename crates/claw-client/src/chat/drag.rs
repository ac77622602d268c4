//! Selecting chat text with the mouse. The client captures the mouse for the wheel, so
//! the terminal cannot select; instead a press, a drag and a release in the chat select
//! the cells covered, as a terminal would, and the release copies them (OSC 52). The
//! selection is held in transcript rows, so it stays on its text while the view scrolls.

use super::Chat;
use crate::msg::Effect;
use crate::part::{HINT, Handled, Intent};
use crate::theme::Theme;
use crate::wrap::str_width;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use unicode_width::UnicodeWidthChar;

/// A cell of the transcript: a row (from the top of the transcript) and a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cell {
    /// The row.
    pub row: usize,
    /// The column (in terminal cells).
    pub column: usize,
}

/// The cells between where the button went down and where it is (or was released).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drag {
    anchor: Cell,
    head: Cell,
}

impl Drag {
    /// Moves the selection down with its rows when `rows` were laid out above it.
    pub(super) fn shift(&mut self, rows: usize) {
        self.anchor.row += rows;
        self.head.row += rows;
    }

    /// The first and last cell covered, in reading order.
    fn span(&self) -> (Cell, Cell) {
        (self.anchor.min(self.head), self.anchor.max(self.head))
    }

    /// The columns of `row` covered, in a row `width` cells wide.
    fn columns(&self, row: usize, width: usize) -> Option<std::ops::Range<usize>> {
        let (first, last) = self.span();
        if row < first.row || row > last.row {
            return None;
        }
        let from = if row == first.row { first.column } else { 0 };
        let to = if row == last.row {
            last.column + 1
        } else {
            width
        };
        Some(from.min(width)..to.min(width))
    }
}

impl Chat {
    /// The mouse button went down on `cell`: a new selection starts there (the old one
    /// goes).
    pub(crate) fn drag_start(&mut self, cell: Cell) -> Handled {
        let had = self
            .drag
            .replace(Drag {
                anchor: cell,
                head: cell,
            })
            .is_some();
        Handled {
            changed: had,
            ..Handled::default()
        }
    }

    /// The mouse moved to `cell` with the button down: the selection follows it.
    pub(crate) fn drag_to(&mut self, cell: Cell) -> Handled {
        match &mut self.drag {
            Some(drag) if drag.head != cell => {
                drag.head = cell;
                Handled::changed()
            }
            _ => Handled::unchanged(),
        }
    }

    /// The button was released: what the selection covers is copied; a click that
    /// selected nothing clears it.
    pub(crate) fn drag_end(&mut self) -> Handled {
        let Some(drag) = self.drag else {
            return Handled::unchanged();
        };
        if drag.anchor == drag.head {
            self.drag = None;
            return Handled::changed();
        }
        let text = self.dragged_text(&drag);
        if text.trim().is_empty() {
            self.drag = None;
            return Handled::changed();
        }
        let lines = text.lines().count();
        let what = if lines == 1 {
            format!("{} characters", text.chars().count())
        } else {
            format!("{lines} lines")
        };
        Handled::changed()
            .ask(Intent::Hint(
                format!("{what} sent to the clipboard (OSC 52)"),
                HINT,
            ))
            .with(Effect::Copy(text))
    }

    /// Clears the selection (a key was pressed); whether there was one.
    pub(crate) fn drag_clear(&mut self) -> bool {
        self.drag.take().is_some()
    }

    /// The text of the cells `drag` covers, a line per row, trailing blanks trimmed.
    fn dragged_text(&self, drag: &Drag) -> String {
        let (first, last) = drag.span();
        let rows = self.transcript.rows(first.row, last.row - first.row + 1);
        let mut lines: Vec<String> = rows
            .enumerate()
            .map(|(i, line)| {
                let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
                let width = str_width(&text);
                let range = drag.columns(first.row + i, width).unwrap_or(0..0);
                cells(&text, range).trim_end().to_owned()
            })
            .collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines.join("\n")
    }

    /// Shades the selected cells of the rows on screen (`top` is the first).
    pub(super) fn draw_drag(&self, text_area: Rect, top: usize, buf: &mut Buffer, theme: &Theme) {
        let Some(drag) = &self.drag else {
            return;
        };
        let width = usize::from(text_area.width);
        for y in 0..text_area.height {
            let Some(columns) = drag.columns(top + usize::from(y), width) else {
                continue;
            };
            let area = Rect::new(
                text_area.x + columns.start as u16,
                text_area.y + y,
                (columns.end - columns.start) as u16,
                1,
            );
            buf.set_style(area, theme.selection());
        }
    }
}

/// The part of `text` in the cells `range` (a wide character counts where it starts).
fn cells(text: &str, range: std::ops::Range<usize>) -> &str {
    let mut column = 0;
    let mut start = text.len();
    let mut end = text.len();
    for (i, c) in text.char_indices() {
        if column >= range.end {
            end = i;
            break;
        }
        if column >= range.start && start == text.len() {
            start = i;
        }
        column += c.width().unwrap_or(0);
    }
    if start > end {
        return "";
    }
    &text[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cut_by_columns_and_wide_characters_count_twice() {
        assert_eq!(cells("hello world", 0..5), "hello");
        assert_eq!(cells("hello world", 6..100), "world");
        assert_eq!(cells("日本語 text", 2..6), "本語");
        assert_eq!(cells("abc", 5..9), "");
    }

    #[test]
    fn a_drag_covers_reading_order_whichever_way_it_went() {
        let up = Drag {
            anchor: Cell { row: 5, column: 3 },
            head: Cell { row: 3, column: 7 },
        };
        assert_eq!(up.columns(3, 20), Some(7..20));
        assert_eq!(up.columns(4, 20), Some(0..20));
        assert_eq!(up.columns(5, 20), Some(0..4));
        assert_eq!(up.columns(6, 20), None);
    }
}
