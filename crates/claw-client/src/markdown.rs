//! Markdown (pulldown-cmark) to styled logical lines: headings, emphasis, lists, quotes,
//! inline code, links, rules, simple tables and fenced code blocks (highlighted when the
//! highlighter has answered for that block, plain until then).

use super::highlight::{HighlightCache, MAX_HIGHLIGHT_BYTES, highlight_key};
use super::msg::HighlightRequest;
use super::wrap::{Anchor, StyledLine, WrapKind, clean, str_width};
use crate::theme::{Theme, Token};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use std::sync::Arc;

mod split;
mod table;
pub use split::SplitScanner;
use table::Table;

/// What rendering needs besides the source.
pub struct MdContext<'a> {
    /// Colours.
    pub theme: &'a Theme,
    /// Highlighted code blocks known so far.
    pub highlights: &'a HighlightCache,
    /// Style of body text.
    pub base: Style,
    /// Whether code blocks without a cached highlight should be requested.
    pub request_highlights: bool,
    /// The width the text is shown at (tables are laid out to fit it).
    pub width: u16,
}

enum Container {
    Quote,
    List(Option<u64>),
    Item { marker: String, used: bool },
}

struct Renderer<'a, 'o> {
    ctx: &'a MdContext<'a>,
    out: &'o mut Vec<StyledLine>,
    missing: &'o mut Vec<HighlightRequest>,
    spans: Vec<Span<'static>>,
    styles: Vec<Style>,
    containers: Vec<Container>,
    links: Vec<String>,
    code: Option<(String, String)>,
    table: Option<Table>,
    heading: Option<HeadingLevel>,
    needs_gap: bool,
}

/// A line at least this long that goes on with a lowercase word was wrapped by hand.
const WRAPPED_LINE: usize = 40;

/// Renders markdown `src` into logical lines appended to `out`; code blocks with no
/// cached highlight are listed in `missing` (when the context asks for requests).
pub fn render(
    src: &str,
    ctx: &MdContext<'_>,
    out: &mut Vec<StyledLine>,
    missing: &mut Vec<HighlightRequest>,
) {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut r = Renderer {
        ctx,
        out,
        missing,
        spans: Vec::new(),
        styles: vec![ctx.base],
        containers: Vec::new(),
        links: Vec::new(),
        code: None,
        table: None,
        heading: None,
        needs_gap: false,
    };
    let mut events = Parser::new_ext(src, options).peekable();
    while let Some(event) = events.next() {
        if event == Event::SoftBreak {
            // What follows the break decides whether it is one (see `soft_break`).
            let next = match events.peek() {
                Some(Event::Text(t)) => t.chars().next(),
                _ => None,
            };
            r.soft_break(next);
        } else {
            r.event(event);
        }
    }
    r.flush();
}

impl Renderer<'_, '_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.ctx.base)
    }

    fn push_style(&mut self, change: impl FnOnce(Style) -> Style) {
        let next = change(self.style());
        self.styles.push(next);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    /// Prefixes for the next emitted line: quote bars and list markers (once per item).
    fn prefixes(&mut self, consume_marker: bool) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let bar = self.ctx.theme.dim();
        let bullet = self.ctx.theme.fg(Token::Accent);
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        for c in &mut self.containers {
            match c {
                Container::Quote => {
                    first.push(Span::styled("│ ", bar));
                    rest.push(Span::styled("│ ", bar));
                }
                Container::List(_) => {}
                Container::Item { marker, used } => {
                    let pad = " ".repeat(str_width(marker));
                    if *used || !consume_marker {
                        first.push(Span::raw(pad.clone()));
                    } else {
                        first.push(Span::styled(marker.clone(), bullet));
                        *used = true;
                    }
                    rest.push(Span::raw(pad));
                }
            }
        }
        (first, rest)
    }

    fn emit(&mut self, mut line: StyledLine) {
        let (first, rest) = self.prefixes(true);
        line.first_prefix.splice(0..0, first);
        line.rest_prefix.splice(0..0, rest);
        self.out.push(line);
    }

    fn flush(&mut self) {
        if self.spans.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.spans);
        self.emit(StyledLine {
            spans,
            ..StyledLine::default()
        });
    }

    fn gap(&mut self) {
        self.flush();
        if self.needs_gap {
            self.needs_gap = false;
            let (first, _) = self.prefixes(false);
            // A blank line between blocks keeps the quote bars, so a quote reads as one.
            self.out.push(StyledLine {
                first_prefix: first
                    .into_iter()
                    .filter(|s| s.content.trim() == "│")
                    .collect(),
                ..StyledLine::default()
            });
        }
    }

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        if let Some(table) = &mut self.table {
            table.cell.push_str(text);
            return;
        }
        let style = self.style();
        let mut lines = text.split('\n');
        if let Some(first) = lines.next() {
            self.spans.push(Span::styled(clean(first), style));
        }
        for line in lines {
            self.flush();
            self.spans.push(Span::styled(clean(line), style));
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                if let Some(table) = &mut self.table {
                    table.cell.push_str(&t);
                } else {
                    let style = self.ctx.theme.fg(Token::Code);
                    self.spans.push(Span::styled(clean(&t), style));
                }
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
            Event::Html(t) | Event::InlineHtml(t) => {
                let style = self.ctx.theme.dim();
                let text = clean(t.trim_end_matches('\n'));
                for (i, line) in text.split('\n').enumerate() {
                    if i > 0 {
                        self.flush();
                    }
                    self.spans.push(Span::styled(line.to_owned(), style));
                }
            }
            Event::FootnoteReference(t) => self.text(&format!("[{t}]")),
            Event::SoftBreak => self.soft_break(None),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.gap();
                let style = self.ctx.theme.dim();
                self.emit(StyledLine {
                    wrap: WrapKind::Fill('─'),
                    style,
                    ..StyledLine::default()
                });
                self.needs_gap = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "☑ " } else { "☐ " };
                let style = self.ctx.theme.fg(Token::Accent);
                self.spans.push(Span::styled(mark, style));
            }
        }
    }

    /// A single line break in a paragraph, `next` the first character after it: kept
    /// where the answer breaks lines (log lines, paths, short lines, a new sentence on
    /// each line), joined where it wraps prose by hand — a long line going on with a
    /// lowercase word.
    fn soft_break(&mut self, next: Option<char>) {
        let line: usize = self.spans.iter().map(|s| s.content.chars().count()).sum();
        let wrapped_prose = line >= WRAPPED_LINE && next.is_some_and(char::is_lowercase);
        if wrapped_prose {
            self.text(" ");
        } else {
            self.flush();
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.gap(),
            Tag::Heading { level, .. } => {
                self.gap();
                self.heading = Some(level);
                let accent = self.ctx.theme.fg(Token::Accent);
                self.push_style(|_| match level {
                    HeadingLevel::H1 => accent.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
                    HeadingLevel::H2 => accent.add_modifier(Modifier::BOLD),
                    _ => accent.add_modifier(Modifier::BOLD | Modifier::ITALIC),
                });
            }
            Tag::BlockQuote(_) => {
                self.gap();
                self.containers.push(Container::Quote);
                let dim = self.ctx.theme.fg(Token::Dim);
                self.push_style(|s| s.patch(dim).add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.gap();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                let nested = matches!(self.containers.last(), Some(Container::Item { .. }));
                if nested {
                    self.flush();
                    self.needs_gap = false;
                } else {
                    self.gap();
                }
                self.containers.push(Container::List(start));
            }
            Tag::Item => {
                self.flush();
                self.needs_gap = false;
                let marker = match self.containers.iter_mut().rev().find_map(|c| match c {
                    Container::List(n) => Some(n),
                    _ => None,
                }) {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ => "• ".to_owned(),
                };
                self.containers.push(Container::Item {
                    marker,
                    used: false,
                });
            }
            Tag::Table(alignments) => {
                self.gap();
                self.table = Some(Table::new(alignments));
            }
            Tag::TableHead => {
                if let Some(t) = &mut self.table {
                    t.in_head = true;
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(t) = &mut self.table {
                    t.cell.clear();
                }
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.push_style(|s| s),
            Tag::Link { dest_url, .. } => {
                self.links.push(dest_url.to_string());
                let link = self.ctx.theme.fg(Token::Link);
                self.push_style(|s| s.patch(link).add_modifier(Modifier::UNDERLINED));
            }
            Tag::Image { dest_url, .. } => {
                self.links.push(dest_url.to_string());
                self.text("[image: ");
            }
            Tag::HtmlBlock | Tag::FootnoteDefinition(_) | Tag::MetadataBlock(_) => self.gap(),
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.flush()
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::FootnoteDefinition
            | TagEnd::MetadataBlock(_) => {
                self.flush();
                self.needs_gap = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.pop_style();
                self.heading = None;
                self.needs_gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.pop_style();
                self.containers.pop();
                self.needs_gap = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.code_block(&lang, &code);
                }
                self.needs_gap = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.containers.pop();
                self.needs_gap = !matches!(self.containers.last(), Some(Container::Item { .. }));
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
                self.needs_gap = false;
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let (prefix, _) = self.prefixes(false);
                    let indent: usize = prefix.iter().map(|s| str_width(&s.content)).sum();
                    let width = usize::from(self.ctx.width).saturating_sub(indent);
                    for line in table.lines(self.ctx.theme, self.ctx.base, width) {
                        self.emit(line);
                    }
                }
                self.needs_gap = true;
            }
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.in_head = false;
                    t.head_rows = t.rows.len();
                }
            }
            TagEnd::TableRow => {}
            TagEnd::TableCell => {
                if let Some(t) = &mut self.table {
                    let cell = clean(t.cell.trim());
                    if let Some(row) = t.rows.last_mut() {
                        row.push(cell);
                    }
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                let url = self.links.pop().unwrap_or_default();
                let shown: String = self
                    .spans
                    .iter()
                    .rev()
                    .take(1)
                    .map(|s| s.content.to_string())
                    .collect();
                if !url.is_empty() && shown != url && !url.starts_with('#') {
                    let dim = self.ctx.theme.dim();
                    self.spans.push(Span::styled(format!(" <{url}>"), dim));
                }
            }
            TagEnd::Image => {
                self.links.pop();
                self.text("]");
            }
            TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => self.flush(),
        }
    }

    /// A fenced block: an optional language label, then its lines behind a gutter bar.
    /// A line wider than the pane wraps at spaces (or anywhere in a long word) and its
    /// continuation rows show `↪` in the gutter; every row keeps its highlighting, and
    /// the block carries its source, so copying it gives the original lines.
    fn code_block(&mut self, lang: &str, code: &str) {
        let code = code.strip_suffix('\n').unwrap_or(code);
        let theme = self.ctx.theme;
        let bar = Span::styled("▏ ", theme.dim());
        let continued = Span::styled("▏↪", theme.dim());
        let anchor = Some(Anchor::Code(Arc::from(code)));
        if !lang.is_empty() {
            let label = StyledLine {
                spans: vec![Span::styled(lang.to_owned(), theme.dim())],
                anchor: anchor.clone(),
                ..StyledLine::default()
            }
            .with_prefix(vec![bar.clone()]);
            self.emit(label);
        }
        let highlighted = if theme.syntax_theme.is_empty() || code.len() > MAX_HIGHLIGHT_BYTES {
            None
        } else {
            let key = highlight_key(&theme.syntax_theme, lang, code);
            let hit = self.ctx.highlights.get(&key).cloned();
            if hit.is_none() && self.ctx.request_highlights {
                self.missing.push(HighlightRequest {
                    key,
                    lang: lang.to_owned(),
                    code: code.to_owned(),
                    theme: theme.syntax_theme.clone(),
                });
            }
            hit
        };
        let plain = theme.fg(Token::Code);
        for (i, line) in code.split('\n').enumerate() {
            let spans = match highlighted.as_ref().and_then(|h| h.get(i)) {
                Some(pieces) => pieces
                    .iter()
                    .map(|(style, text)| Span::styled(clean(text), *style))
                    .collect(),
                None => vec![Span::styled(clean(line), plain)],
            };
            self.emit(StyledLine {
                spans,
                wrap: WrapKind::Word,
                first_prefix: vec![bar.clone()],
                rest_prefix: vec![continued.clone()],
                anchor: anchor.clone(),
                ..StyledLine::default()
            });
        }
    }
}

#[cfg(test)]
mod tests;
