//! Styled logical lines and their wrapping into screen rows of a given width.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::sync::Arc;
use unicode_width::UnicodeWidthChar;

/// How a logical line breaks when it is wider than the pane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WrapKind {
    /// At spaces; words wider than a row are split.
    #[default]
    Word,
    /// At any character (code, tool output).
    Char,
    /// Never wraps: the line is a rule of this character filling the row.
    Fill(char),
}

/// What a logical line belongs to when the chat can select it as one item: a tool
/// call's card, or a code block (with its source, for copying the original lines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// The card of the tool call with this id.
    Card(Arc<str>),
    /// A code block with this source.
    Code(Arc<str>),
}

/// The rows an anchored item covers after wrapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchorRows {
    /// What it is.
    pub anchor: Anchor,
    /// Its rows (in the `out` it was wrapped into).
    pub rows: std::ops::Range<usize>,
}

/// One logical line: its spans, and the prefixes of its first and following rows
/// (a bullet, then an indent of the same width; a quote bar on every row).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StyledLine {
    /// Prefix of the first row.
    pub first_prefix: Vec<Span<'static>>,
    /// Prefix of every further row.
    pub rest_prefix: Vec<Span<'static>>,
    /// The content.
    pub spans: Vec<Span<'static>>,
    /// How it wraps.
    pub wrap: WrapKind,
    /// Style of a `Fill` line.
    pub style: Style,
    /// The selectable item the line is part of, if any.
    pub anchor: Option<Anchor>,
}

impl StyledLine {
    /// A line of one span.
    pub fn plain(text: impl Into<String>, style: Style) -> Self {
        Self {
            spans: vec![Span::styled(text.into(), style)],
            ..Self::default()
        }
    }

    /// An empty line (a gap between blocks).
    pub fn blank() -> Self {
        Self::default()
    }

    /// The same line with the same prefix on every row.
    pub fn with_prefix(mut self, prefix: Vec<Span<'static>>) -> Self {
        self.rest_prefix = prefix.clone();
        self.first_prefix = prefix;
        self
    }

    /// The line with `outer` in front of both of its prefixes (nesting in quotes/lists).
    pub fn nested(mut self, first: &[Span<'static>], rest: &[Span<'static>]) -> Self {
        self.first_prefix.splice(0..0, first.iter().cloned());
        self.rest_prefix.splice(0..0, rest.iter().cloned());
        self
    }

    /// The content as plain text.
    pub fn text(&self) -> String {
        self.spans.iter().map(|s| s.content.as_ref()).collect()
    }
}

/// Display width of a string in cells.
pub fn str_width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

fn char_width(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// Makes text safe to put in a cell: escape sequences removed, tabs expanded, other
/// control characters dropped (they would move the real cursor and corrupt the screen).
pub fn clean(text: &str) -> String {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI (`ESC [ ... final`) and OSC (`ESC ] ... BEL/ST`) sequences, or one char.
                match chars.peek() {
                    Some('[') => {
                        chars.next();
                        for c in chars.by_ref() {
                            if ('@'..='~').contains(&c) {
                                break;
                            }
                        }
                    }
                    Some(']') => {
                        chars.next();
                        while let Some(c) = chars.next() {
                            if c == '\u{7}' || (c == '\u{1b}' && chars.peek() == Some(&'\\')) {
                                if c == '\u{1b}' {
                                    chars.next();
                                }
                                break;
                            }
                        }
                    }
                    _ => {
                        chars.next();
                    }
                }
            }
            '\t' => out.push_str("    "),
            '\n' => out.push('\n'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Wraps logical lines to `width` cells, appending the rows to `out`.
pub fn wrap_into(lines: &[StyledLine], width: u16, out: &mut Vec<Line<'static>>) {
    for line in lines {
        wrap_line(line, usize::from(width.max(1)), out);
    }
}

/// Wraps logical lines to `width` cells, appending the rows to `out` and the rows of
/// each anchored item to `anchors` (consecutive lines of one item make one entry).
pub fn wrap_anchored(
    lines: &[StyledLine],
    width: u16,
    out: &mut Vec<Line<'static>>,
    anchors: &mut Vec<AnchorRows>,
) {
    for line in lines {
        let start = out.len();
        wrap_line(line, usize::from(width.max(1)), out);
        let Some(anchor) = &line.anchor else {
            continue;
        };
        match anchors.last_mut() {
            Some(last) if last.rows.end == start && &last.anchor == anchor => {
                last.rows.end = out.len();
            }
            _ => anchors.push(AnchorRows {
                anchor: anchor.clone(),
                rows: start..out.len(),
            }),
        }
    }
}

/// Wraps logical lines to `width` cells.
pub fn wrap(lines: &[StyledLine], width: u16) -> Vec<Line<'static>> {
    let mut out = Vec::with_capacity(lines.len());
    wrap_into(lines, width, &mut out);
    out
}

/// Builds rows while keeping adjacent pieces of the same style in one span.
struct RowBuilder<'a> {
    line: &'a StyledLine,
    width: usize,
    rows: &'a mut Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    used: usize,
    first: bool,
    /// Whether the row holds content beyond its prefix.
    has_content: bool,
}

impl<'a> RowBuilder<'a> {
    fn new(line: &'a StyledLine, width: usize, rows: &'a mut Vec<Line<'static>>) -> Self {
        let current = line.first_prefix.clone();
        let used = spans_width(&current);
        Self {
            line,
            width,
            rows,
            current,
            used,
            first: true,
            has_content: false,
        }
    }

    fn room(&self) -> usize {
        self.width.saturating_sub(self.used)
    }

    fn push(&mut self, text: &str, style: Style, w: usize) {
        match self.current.last_mut() {
            Some(last) if self.has_content && last.style == style => {
                last.content.to_mut().push_str(text)
            }
            _ => self.current.push(Span::styled(text.to_owned(), style)),
        }
        self.used += w;
        self.has_content = true;
    }

    fn break_row(&mut self) {
        // Spaces before a break would only pad the row.
        if self.has_content
            && self.line.wrap == WrapKind::Word
            && let Some(last) = self.current.last_mut()
        {
            let trimmed = last.content.trim_end_matches(' ').len();
            if trimmed < last.content.len() {
                last.content.to_mut().truncate(trimmed);
            }
            if last.content.is_empty() {
                self.current.pop();
            }
        }
        let row = std::mem::replace(&mut self.current, self.line.rest_prefix.clone());
        self.rows.push(Line::from(row));
        self.used = spans_width(&self.current);
        // A prefix wider than the row would leave no room at all; drop it rather than loop.
        if self.used >= self.width {
            self.current.clear();
            self.used = 0;
        }
        self.first = false;
        self.has_content = false;
    }

    fn finish(mut self) {
        let row = std::mem::take(&mut self.current);
        self.rows.push(Line::from(row));
    }

    /// Places a word, which may be made of pieces of several styles (`**bold**,`, a
    /// highlighted identifier next to its punctuation); it is split only when it is
    /// wider than a whole row.
    fn place_word(&mut self, pieces: &[(&str, Style)]) {
        let w: usize = pieces.iter().map(|(t, _)| str_width(t)).sum();
        if w > self.room() && self.has_content {
            self.break_row();
        }
        if w <= self.room() {
            for (text, style) in pieces {
                self.push(text, *style, str_width(text));
            }
            return;
        }
        for (text, style) in pieces {
            self.place_chars(text, *style);
        }
    }

    /// Places text character by character, breaking wherever the row is full.
    fn place_chars(&mut self, text: &str, style: Style) {
        let mut piece = String::new();
        let mut piece_w = 0;
        for c in text.chars() {
            let cw = char_width(c);
            if piece_w + cw > self.room() && (self.has_content || piece_w > 0) {
                if !piece.is_empty() {
                    self.push(&piece, style, piece_w);
                    piece.clear();
                    piece_w = 0;
                }
                self.break_row();
            }
            piece.push(c);
            piece_w += cw;
        }
        if !piece.is_empty() {
            self.push(&piece, style, piece_w);
        }
    }

    fn place_space(&mut self, space: &str, style: Style) {
        let w = str_width(space);
        // Spaces at a row break vanish, as in any word-wrapping editor.
        if w > self.room() {
            self.break_row();
            return;
        }
        if self.has_content || self.first {
            self.push(space, style, w);
        }
    }
}

fn wrap_line(line: &StyledLine, width: usize, out: &mut Vec<Line<'static>>) {
    if let WrapKind::Fill(ch) = line.wrap {
        let mut spans = line.first_prefix.clone();
        let room = width.saturating_sub(spans_width(&spans));
        spans.push(Span::styled(ch.to_string().repeat(room), line.style));
        out.push(Line::from(spans));
        return;
    }
    let total: usize = spans_width(&line.first_prefix) + spans_width(&line.spans);
    if total <= width {
        // The common case: one row, no splitting.
        let mut spans = line.first_prefix.clone();
        spans.extend(line.spans.iter().cloned());
        out.push(Line::from(spans));
        return;
    }
    let mut builder = RowBuilder::new(line, width, out);
    if line.wrap == WrapKind::Char {
        for span in &line.spans {
            builder.place_chars(&span.content, span.style);
        }
        builder.finish();
        return;
    }
    // Words run across spans: a word is everything between two spaces.
    let mut word: Vec<(&str, Style)> = Vec::new();
    for span in &line.spans {
        let text: &str = &span.content;
        let mut start = 0;
        let mut in_space = text.starts_with(' ');
        for (i, c) in text.char_indices() {
            let is_space = c == ' ';
            if is_space != in_space {
                let piece = &text[start..i];
                if in_space {
                    if !word.is_empty() {
                        builder.place_word(&word);
                        word.clear();
                    }
                    builder.place_space(piece, span.style);
                } else {
                    word.push((piece, span.style));
                    builder.place_word(&word);
                    word.clear();
                }
                start = i;
                in_space = is_space;
            }
        }
        let piece = &text[start..];
        if piece.is_empty() {
            continue;
        }
        if in_space {
            if !word.is_empty() {
                builder.place_word(&word);
                word.clear();
            }
            builder.place_space(piece, span.style);
        } else {
            // The word may go on in the next span.
            word.push((piece, span.style));
        }
    }
    if !word.is_empty() {
        builder.place_word(&word);
    }
    builder.finish();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(rows: &[Line<'_>]) -> Vec<String> {
        rows.iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn words_wrap_with_prefixes() {
        let line = StyledLine {
            first_prefix: vec![Span::raw("• ")],
            rest_prefix: vec![Span::raw("  ")],
            spans: vec![Span::raw("alpha beta gamma delta")],
            ..StyledLine::default()
        };
        assert_eq!(
            texts(&wrap(&[line], 12)),
            ["• alpha beta", "  gamma", "  delta"]
        );
    }

    #[test]
    fn long_words_and_code_split_by_character() {
        let word = StyledLine::plain("abcdefghij", Style::default());
        assert_eq!(texts(&wrap(&[word], 4)), ["abcd", "efgh", "ij"]);
        let code = StyledLine {
            spans: vec![Span::raw("let x = 1;")],
            wrap: WrapKind::Char,
            ..StyledLine::default()
        };
        assert_eq!(texts(&wrap(&[code], 6)), ["let x ", "= 1;"]);
    }

    #[test]
    fn a_word_made_of_several_styles_stays_whole() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let line = StyledLine {
            spans: vec![
                Span::raw("aaaa "),
                Span::styled("bold", bold),
                Span::raw(", next"),
            ],
            ..StyledLine::default()
        };
        assert_eq!(texts(&wrap(&[line], 8)), ["aaaa", "bold,", "next"]);
        let split = StyledLine {
            spans: vec![Span::raw("aaaa"), Span::raw(" bbbb cc")],
            ..StyledLine::default()
        };
        assert_eq!(texts(&wrap(&[split], 6)), ["aaaa", "bbbb", "cc"]);
    }

    #[test]
    fn wide_characters_count_two_cells() {
        let line = StyledLine::plain("日本語のテキスト", Style::default());
        let rows = wrap(&[line], 6);
        assert!(
            rows.iter()
                .all(|r| str_width(&texts(std::slice::from_ref(r))[0]) <= 6)
        );
        assert_eq!(rows.len(), 3);
    }

    #[test]
    fn same_style_pieces_merge_and_rules_fill() {
        let line = StyledLine::plain("a b c d e f", Style::default());
        let rows = wrap(&[line], 5);
        assert!(rows.iter().all(|r| r.spans.len() == 1));
        let rule = StyledLine {
            wrap: WrapKind::Fill('─'),
            ..StyledLine::default()
        };
        assert_eq!(texts(&wrap(&[rule], 3)), ["───"]);
        assert_eq!(texts(&wrap(&[StyledLine::blank()], 3)), [""]);
    }

    #[test]
    fn control_sequences_are_removed() {
        assert_eq!(clean("a\u{1b}[31mred\u{1b}[0m\tb\r\n"), "ared    b\n");
        assert_eq!(clean("x\u{1b}]0;title\u{7}y"), "xy");
        assert_eq!(clean("plain"), "plain");
    }
}
