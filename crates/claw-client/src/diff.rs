//! Drawing a file change (`details.change` of `write_file` and `edit_file`, and each
//! file of `/diff`) as a coloured unified diff: old and new line numbers in a gutter,
//! `+`/`−` signs, added and context lines highlighted by the file's language, removed
//! lines in the error colour (what was lost), and long hunks folded.
//!
//! Everything here is a pure function of the change, the theme, the highlighted code
//! and the width; the highlight of a change is asked for with [`highlight_request`].

use super::highlight::{HighlightCache, highlight_key};
use super::msg::{HighlightRequest, HighlightedCode};
use super::wrap::{StyledLine, WrapKind, clean, wrap};
use crate::theme::{Theme, Token};
use claw_tools::fs::{ChangeKind, FileChange, LineKind};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// A hunk longer than this many lines is folded.
pub const FOLD_OVER: usize = 40;
/// Lines a folded hunk keeps from its start.
const FOLD_HEAD: usize = 20;
/// Lines a folded hunk keeps from its end.
const FOLD_TAIL: usize = 10;

/// `+3 −1` for a card or a header (green and red); `binary` when there are no lines.
pub fn stat_spans(change: &FileChange, theme: &Theme) -> Vec<Span<'static>> {
    if change.hunks.is_empty() && change.added == 0 && change.removed == 0 {
        let what = match change.kind {
            ChangeKind::Created => "new",
            ChangeKind::Deleted => "deleted",
            _ => "changed",
        };
        return vec![Span::styled(what.to_owned(), theme.dim())];
    }
    vec![
        Span::styled(format!("+{}", change.added), theme.fg(Token::Success)),
        Span::raw(" "),
        Span::styled(format!("−{}", change.removed), theme.fg(Token::Error)),
    ]
}

/// The language a path's extension names, for highlighting (`rs`, `py`, ...).
fn language(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next()?;
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then_some(ext)
}

/// The code of a change as one block, line for line as [`render`] shows it.
fn code_of(change: &FileChange) -> String {
    let lines: Vec<&str> = change
        .hunks
        .iter()
        .flat_map(|h| h.lines.iter().map(|l| l.text.as_str()))
        .collect();
    lines.join("\n")
}

/// What to highlight for `change` in `theme`; `None` when the file has no known
/// language or the theme no syntax colours.
pub fn highlight_request(change: &FileChange, theme: &Theme) -> Option<HighlightRequest> {
    let lang = language(&change.path)?;
    if theme.syntax_theme.is_empty() || change.hunks.is_empty() {
        return None;
    }
    let code = code_of(change);
    Some(HighlightRequest {
        key: highlight_key(&theme.syntax_theme, lang, &code),
        lang: lang.to_owned(),
        code,
        theme: theme.syntax_theme.clone(),
    })
}

/// The highlighted lines of `change`, if they arrived.
pub fn highlighted<'a>(
    change: &FileChange,
    theme: &Theme,
    cache: &'a HighlightCache,
) -> Option<&'a HighlightedCode> {
    highlight_request(change, theme).and_then(|r| cache.get(&r.key))
}

fn digits(n: usize) -> usize {
    n.max(1).to_string().len()
}

/// The diff of `change` as logical lines (wrap them with [`render`]); `fold` folds
/// long hunks.
pub fn diff_lines(
    change: &FileChange,
    theme: &Theme,
    highlighted: Option<&HighlightedCode>,
    fold: bool,
) -> Vec<StyledLine> {
    let mut out = Vec::new();
    if let Some(why) = &change.omitted {
        out.push(StyledLine::plain(
            format!("(no lines shown: {why})"),
            theme.dim(),
        ));
        return out;
    }
    let (old_w, new_w) = change
        .hunks
        .iter()
        .map(|h| (h.old_start + h.old_count, h.new_start + h.new_count))
        .fold((1, 1), |(a, b), (o, n)| {
            (a.max(digits(o)), b.max(digits(n)))
        });
    let mut index = 0;
    for hunk in &change.hunks {
        out.push(StyledLine::plain(
            format!(
                "@@ -{},{} +{},{} @@",
                hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count
            ),
            theme.fg(Token::Accent).add_modifier(Modifier::DIM),
        ));
        let count = hunk.lines.len();
        let folded = fold && count > FOLD_OVER;
        for (i, line) in hunk.lines.iter().enumerate() {
            let this = index + i;
            if folded && i >= FOLD_HEAD && i < count - FOLD_TAIL {
                if i == FOLD_HEAD {
                    let hidden = count - FOLD_HEAD - FOLD_TAIL;
                    out.push(StyledLine::plain(
                        format!(
                            "{:w$}   ⋯ {hidden} lines folded (f unfolds)",
                            "",
                            w = old_w + new_w
                        ),
                        theme.dim(),
                    ));
                }
                continue;
            }
            let number = |n: Option<usize>, w: usize| match n {
                Some(n) => format!("{n:>w$}"),
                None => " ".repeat(w),
            };
            let (sign, token) = match line.kind {
                LineKind::Added => ("+", Token::Success),
                LineKind::Removed => ("−", Token::Error),
                LineKind::Context => (" ", Token::Dim),
            };
            let gutter = format!("{} {} │", number(line.old, old_w), number(line.new, new_w));
            let mut spans = match (line.kind, highlighted.and_then(|h| h.get(this))) {
                (LineKind::Removed, _) => {
                    vec![Span::styled(clean(&line.text), theme.fg(Token::Error))]
                }
                (_, Some(pieces)) => pieces
                    .iter()
                    .map(|(style, text)| Span::styled(clean(text), *style))
                    .collect(),
                (LineKind::Added, None) => {
                    vec![Span::styled(clean(&line.text), theme.fg(Token::Success))]
                }
                (LineKind::Context, None) => {
                    vec![Span::styled(clean(&line.text), theme.text())]
                }
            };
            let pad = " ".repeat(old_w + new_w + 2);
            let mut sign = Span::styled(format!("{sign} "), theme.fg(token));
            // Shaded where the theme gives a background: the sign and the text.
            let shade = match line.kind {
                LineKind::Added => theme.diff_bg(true),
                LineKind::Removed => theme.diff_bg(false),
                LineKind::Context => None,
            };
            if let Some(bg) = shade {
                let shaded = Style::default().bg(bg);
                sign = sign.patch_style(shaded);
                spans = spans.into_iter().map(|s| s.patch_style(shaded)).collect();
            }
            out.push(StyledLine {
                first_prefix: vec![Span::styled(gutter, theme.dim()), sign],
                rest_prefix: vec![Span::styled(format!("{pad}│  "), theme.dim())],
                spans,
                wrap: WrapKind::Char,
                ..StyledLine::default()
            });
        }
        index += count;
    }
    out
}

/// The diff of `change` wrapped into rows of `width` columns.
pub fn render(
    change: &FileChange,
    theme: &Theme,
    highlighted: Option<&HighlightedCode>,
    fold: bool,
    width: u16,
) -> Vec<Line<'static>> {
    wrap(&diff_lines(change, theme, highlighted, fold), width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_come_from_the_extension() {
        assert_eq!(language("src/main.rs"), Some("rs"));
        assert_eq!(language("a/b.test.py"), Some("py"));
        assert_eq!(language("Makefile"), None);
        assert_eq!(language(".bashrc"), None);
    }

    #[test]
    fn added_and_removed_lines_are_shaded_where_the_theme_says() {
        let change =
            FileChange::between("x.txt", Some(b"old\nsame\n"), Some(b"new\nsame\n"), false);
        let theme = Theme::fallback();
        let lines = diff_lines(&change, &theme, None, false);
        let bg = |i: usize| lines[i].spans[0].style.bg;
        assert_eq!(bg(1), theme.diff_bg(false), "the removed line");
        assert_eq!(bg(2), theme.diff_bg(true), "the added line");
        assert_eq!(bg(3), None, "context is not shaded");
        assert!(theme.diff_bg(true).is_some());
        let plain = diff_lines(&change, &theme.without_color(), None, false);
        assert_eq!(plain[2].spans[0].style.bg, None);
    }

    #[test]
    fn long_hunks_fold_and_numbers_align() {
        let after: String = (1..=60).map(|i| format!("line {i}\n")).collect();
        let change = FileChange::between("x.txt", None, Some(after.as_bytes()), false);
        let theme = Theme::fallback();
        let folded = diff_lines(&change, &theme, None, true);
        assert_eq!(folded.len(), 1 + FOLD_HEAD + 1 + FOLD_TAIL);
        assert!(folded[FOLD_HEAD + 1].text().contains("30 lines folded"));
        let full = diff_lines(&change, &theme, None, false);
        assert_eq!(full.len(), 61);
        let first: String = full[1]
            .first_prefix
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(first, "   1 │+ ");
    }
}
