//! Tables that fit the pane. Columns get their natural width when the table fits; when
//! it does not, they shrink in proportion to how much wider than their longest word they
//! are, never below that word, and cells wrap at word boundaries with every row kept
//! aligned. A table that cannot fit even so is shown one record per block
//! (`header: value` lines).

use crate::theme::Theme;
use crate::wrap::{StyledLine, str_width};
use pulldown_cmark::Alignment;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

/// What separates two columns.
const SEPARATOR: &str = " │ ";

/// A table being collected from parser events.
pub(super) struct Table {
    pub alignments: Vec<Alignment>,
    pub rows: Vec<Vec<String>>,
    pub cell: String,
    pub in_head: bool,
    pub head_rows: usize,
}

impl Table {
    /// A table with these column alignments.
    pub fn new(alignments: Vec<Alignment>) -> Self {
        Self {
            alignments,
            rows: Vec::new(),
            cell: String::new(),
            in_head: false,
            head_rows: 0,
        }
    }

    /// The table's lines for a pane `width` cells wide: a grid when it can fit, else one
    /// block per record.
    pub fn lines(&self, theme: &Theme, base: Style, width: usize) -> Vec<StyledLine> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return Vec::new();
        }
        match column_widths(&self.rows, columns, width) {
            Some(widths) => self.grid(&widths, theme, base),
            None => self.records(columns, theme, base),
        }
    }

    fn cell(&self, row: usize, column: usize) -> &str {
        self.rows
            .get(row)
            .and_then(|r| r.get(column))
            .map_or("", String::as_str)
    }

    fn grid(&self, widths: &[usize], theme: &Theme, base: Style) -> Vec<StyledLine> {
        let sep = Span::styled(SEPARATOR, theme.dim());
        let mut out = Vec::new();
        for r in 0..self.rows.len() {
            let header = r < self.head_rows;
            let style = if header {
                base.add_modifier(Modifier::BOLD)
            } else {
                base
            };
            let cells: Vec<Vec<String>> = widths
                .iter()
                .enumerate()
                .map(|(c, w)| wrap_words(self.cell(r, c), *w))
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(1).max(1);
            for i in 0..height {
                let mut spans = Vec::new();
                for (c, width) in widths.iter().enumerate() {
                    if c > 0 {
                        spans.push(sep.clone());
                    }
                    let text = cells[c].get(i).map_or("", String::as_str);
                    let pad = width.saturating_sub(str_width(text));
                    let (left, right) = match self.alignments.get(c) {
                        Some(Alignment::Right) => (pad, 0),
                        Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                        _ => (0, pad),
                    };
                    spans.push(Span::styled(
                        format!("{}{text}{}", " ".repeat(left), " ".repeat(right)),
                        style,
                    ));
                }
                out.push(StyledLine {
                    spans,
                    ..StyledLine::default()
                });
            }
            if header && r + 1 == self.head_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                out.push(StyledLine::plain(rule.join("─┼─"), theme.dim()));
            }
        }
        out
    }

    /// One block per body row: `header: value` lines, a blank line between blocks.
    fn records(&self, columns: usize, theme: &Theme, base: Style) -> Vec<StyledLine> {
        let head = self.head_rows.min(self.rows.len());
        let name = |c: usize| {
            let joined: Vec<&str> = (0..head)
                .map(|r| self.cell(r, c))
                .filter(|t| !t.is_empty())
                .collect();
            if joined.is_empty() {
                format!("column {}", c + 1)
            } else {
                joined.join(" ")
            }
        };
        let mut out = Vec::new();
        for r in head..self.rows.len() {
            if r > head {
                out.push(StyledLine::blank());
            }
            for c in 0..columns {
                out.push(StyledLine {
                    spans: vec![
                        Span::styled(format!("{}: ", name(c)), base.add_modifier(Modifier::BOLD)),
                        Span::styled(self.cell(r, c).to_owned(), base),
                    ],
                    rest_prefix: vec![Span::styled("  ", theme.dim())],
                    ..StyledLine::default()
                });
            }
        }
        if head == self.rows.len() {
            let names: Vec<String> = (0..columns).map(name).collect();
            out.push(StyledLine::plain(
                names.join(" · "),
                base.add_modifier(Modifier::BOLD),
            ));
        }
        out
    }
}

/// The width of each column so that the table fits `width` cells, or `None` when it
/// cannot fit without breaking a word.
fn column_widths(rows: &[Vec<String>], columns: usize, width: usize) -> Option<Vec<usize>> {
    let mut natural = vec![1usize; columns];
    let mut shortest = vec![1usize; columns];
    for row in rows {
        for (c, cell) in row.iter().enumerate() {
            natural[c] = natural[c].max(str_width(cell));
            let longest_word = cell.split_whitespace().map(str_width).max().unwrap_or(0);
            shortest[c] = shortest[c].max(longest_word);
        }
    }
    let separators = str_width(SEPARATOR) * (columns - 1);
    let room = width.checked_sub(separators)?;
    if natural.iter().sum::<usize>() <= room {
        return Some(natural);
    }
    let least: usize = shortest.iter().sum();
    let spare = room.checked_sub(least)?;
    // What each column would still like, shared out in proportion.
    let wants: Vec<usize> = natural.iter().zip(&shortest).map(|(n, s)| n - s).collect();
    let wanted: usize = wants.iter().sum();
    let mut widths: Vec<usize> = shortest
        .iter()
        .zip(&wants)
        .map(|(s, w)| s + w * spare / wanted.max(1))
        .collect();
    // Rounding leaves a few cells: they go to the columns that lost the most.
    let mut left = room - widths.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..columns).collect();
    order.sort_by_key(|&c| std::cmp::Reverse(natural[c] - widths[c]));
    for c in order.into_iter().cycle().take(columns * 2) {
        if left == 0 {
            break;
        }
        if widths[c] < natural[c] {
            widths[c] += 1;
            left -= 1;
        }
    }
    Some(widths)
}

/// `text` broken at spaces into lines at most `width` cells wide (a word wider than
/// that is split).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for word in text.split_whitespace() {
        let w = str_width(word);
        if used > 0 && used + 1 + w <= width {
            line.push(' ');
            line.push_str(word);
            used += 1 + w;
            continue;
        }
        if used > 0 {
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        if w <= width {
            line.push_str(word);
            used = w;
            continue;
        }
        for ch in word.chars() {
            let cw = UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + cw > width && used > 0 {
                lines.push(std::mem::take(&mut line));
                used = 0;
            }
            line.push(ch);
            used += cw;
        }
    }
    if used > 0 || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(cells: &[&[&str]]) -> Vec<Vec<String>> {
        cells
            .iter()
            .map(|r| r.iter().map(|c| (*c).to_owned()).collect())
            .collect()
    }

    #[test]
    fn columns_keep_their_width_when_the_table_fits() {
        let t = rows(&[&["a", "bb"], &["ccc", "d"]]);
        assert_eq!(column_widths(&t, 2, 80), Some(vec![3, 2]));
    }

    #[test]
    fn columns_shrink_in_proportion_but_not_below_their_longest_word() {
        let t = rows(&[
            &["name", "description"],
            &["x", "a rather long sentence that needs wrapping here"],
        ]);
        let widths = column_widths(&t, 2, 30).unwrap();
        assert_eq!(widths.iter().sum::<usize>() + 3, 30);
        assert_eq!(widths[0], 4, "the short column keeps its natural width");
        assert!(widths[1] >= "wrapping".len());
        // Too narrow for the longest words: no grid.
        assert_eq!(column_widths(&t, 2, 12), None);
    }

    #[test]
    fn words_wrap_at_spaces_and_long_words_split() {
        assert_eq!(wrap_words("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap_words("abcdefgh", 3), ["abc", "def", "gh"]);
        assert_eq!(wrap_words("", 4), [""]);
    }
}
