//! Simple tables: columns as wide as their widest cell, aligned as the separator row says.

use crate::tui::theme::Theme;
use crate::tui::wrap::{StyledLine, WrapKind, str_width};
use pulldown_cmark::Alignment;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

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

    /// The table's lines: header rows in bold, a rule under them, cells padded.
    pub fn lines(&self, theme: &Theme, base: Style) -> Vec<StyledLine> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0usize; columns];
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(str_width(cell));
            }
        }
        let sep = Span::styled(" │ ", theme.dim());
        let mut out = Vec::new();
        for (r, row) in self.rows.iter().enumerate() {
            let header = r < self.head_rows;
            let style = if header {
                base.add_modifier(Modifier::BOLD)
            } else {
                base
            };
            let mut spans = Vec::new();
            for (c, width) in widths.iter().enumerate() {
                if c > 0 {
                    spans.push(sep.clone());
                }
                let cell = row.get(c).map_or("", String::as_str);
                let pad = width.saturating_sub(str_width(cell));
                let (left, right) = match self.alignments.get(c) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                spans.push(Span::styled(
                    format!("{}{cell}{}", " ".repeat(left), " ".repeat(right)),
                    style,
                ));
            }
            out.push(StyledLine {
                spans,
                wrap: WrapKind::Char,
                ..StyledLine::default()
            });
            if header && r + 1 == self.head_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                out.push(StyledLine::plain(rule.join("─┼─"), theme.dim()));
            }
        }
        out
    }
}
