//! The composer: a multi-line `tui-textarea` with history (Up/Down at its edges) and
//! completion of slash commands and `@path` mentions.

use super::slash;
use super::theme::Theme;
use super::wrap::str_width;
use crossterm::event::KeyEvent;
use ratatui::style::{Modifier, Style};
use tui_textarea::{CursorMove, TextArea, WrapMode};

/// History entries kept (and loaded).
pub const HISTORY_LIMIT: usize = 1000;
/// Completion items shown at most.
pub const COMPLETION_ITEMS: usize = 8;
/// Rows the composer grows to at most.
pub const MAX_ROWS: u16 = 8;

/// What a completion popup completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    /// A slash command or its argument.
    Command,
    /// A workspace path after `@`.
    Path,
}

/// An open completion popup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// What is being completed.
    pub kind: CompletionKind,
    /// Candidates, best first.
    pub items: Vec<String>,
    /// The highlighted candidate.
    pub selected: usize,
    /// Characters before the cursor that the choice replaces.
    replace_chars: usize,
}

/// The composer's state.
#[derive(Clone, Debug)]
pub struct Composer {
    textarea: TextArea<'static>,
    history: Vec<String>,
    browsing: Option<usize>,
    draft: String,
    /// The open completion popup.
    pub completion: Option<Completion>,
    dismissed: Option<String>,
    /// Whether `@` was typed and the file list is needed.
    pub wants_files: bool,
    /// Whether `/model` is being typed and the server's model list is wanted.
    pub wants_models: bool,
}

impl Composer {
    /// An empty composer styled by `theme`.
    pub fn new(theme: &Theme) -> Self {
        let mut composer = Self {
            textarea: TextArea::default(),
            history: Vec::new(),
            browsing: None,
            draft: String::new(),
            completion: None,
            dismissed: None,
            wants_files: false,
            wants_models: false,
        };
        composer.set_text("", theme);
        composer
    }

    fn style(&mut self, theme: &Theme) {
        let ta = &mut self.textarea;
        ta.set_wrap_mode(WrapMode::WordOrGlyph);
        ta.set_style(theme.text());
        ta.set_cursor_line_style(Style::default());
        ta.set_cursor_style(Style::default().add_modifier(Modifier::REVERSED));
        ta.set_placeholder_text("Ask anything · / commands · @ files · F1 help");
        ta.set_placeholder_style(theme.dim());
    }

    /// The text area, for rendering.
    pub fn textarea(&self) -> &TextArea<'static> {
        &self.textarea
    }

    /// The whole text.
    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    /// Whether there is no text (whitespace counts as none).
    pub fn is_blank(&self) -> bool {
        self.textarea.lines().iter().all(|l| l.trim().is_empty())
    }

    /// Replaces the text and puts the cursor at its end.
    pub fn set_text(&mut self, text: &str, theme: &Theme) {
        let lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        self.textarea = TextArea::new(lines);
        self.style(theme);
        self.textarea.move_cursor(CursorMove::Bottom);
        self.textarea.move_cursor(CursorMove::End);
        self.completion = None;
    }

    /// Empties the composer and leaves history browsing.
    pub fn clear(&mut self, theme: &Theme) {
        self.set_text("", theme);
        self.browsing = None;
        self.dismissed = None;
    }

    /// Inserts text at the cursor (a paste keeps its line breaks).
    pub fn insert(&mut self, text: &str) {
        self.textarea
            .insert_str(text.replace("\r\n", "\n").replace('\r', "\n"));
    }

    /// Inserts a line break.
    pub fn newline(&mut self) {
        self.textarea.insert_newline();
    }

    /// Passes a key to the text area; returns whether the text changed.
    pub fn key(&mut self, key: KeyEvent) -> bool {
        self.textarea.input(key)
    }

    /// Whether the cursor is on the first line.
    pub fn on_first_line(&self) -> bool {
        self.textarea.cursor().0 == 0
    }

    /// Whether the cursor is on the last line.
    pub fn on_last_line(&self) -> bool {
        self.textarea.cursor().0 + 1 >= self.textarea.lines().len()
    }

    /// Loads history read from disk (oldest first), keeping what was typed since.
    pub fn load_history(&mut self, mut entries: Vec<String>) {
        entries.append(&mut self.history);
        let skip = entries.len().saturating_sub(HISTORY_LIMIT);
        self.history = entries.into_iter().skip(skip).collect();
    }

    /// Remembers a sent text; returns whether it is new (not a repeat of the last).
    pub fn remember(&mut self, text: &str) -> bool {
        self.browsing = None;
        if self.history.last().is_some_and(|l| l == text) {
            return false;
        }
        self.history.push(text.to_owned());
        if self.history.len() > HISTORY_LIMIT {
            self.history.remove(0);
        }
        true
    }

    /// The history, oldest first.
    pub fn history(&self) -> &[String] {
        &self.history
    }

    /// Shows the previous history entry; false when there is none.
    pub fn history_prev(&mut self, theme: &Theme) -> bool {
        let next = match self.browsing {
            None if self.history.is_empty() => return false,
            None => {
                self.draft = self.text();
                self.history.len() - 1
            }
            Some(0) => return false,
            Some(i) => i - 1,
        };
        self.browsing = Some(next);
        let text = self.history[next].clone();
        self.set_text(&text, theme);
        true
    }

    /// Shows the next history entry, or the draft after the newest; false when not browsing.
    pub fn history_next(&mut self, theme: &Theme) -> bool {
        let Some(i) = self.browsing else {
            return false;
        };
        if i + 1 < self.history.len() {
            self.browsing = Some(i + 1);
            let text = self.history[i + 1].clone();
            self.set_text(&text, theme);
        } else {
            self.browsing = None;
            let draft = std::mem::take(&mut self.draft);
            self.set_text(&draft, theme);
        }
        true
    }

    /// Rows the text needs at `width` (at least 1, at most `MAX_ROWS`).
    pub fn rows(&self, width: u16) -> u16 {
        let width = usize::from(width.max(1));
        let rows: usize = self
            .textarea
            .lines()
            .iter()
            .map(|l| str_width(l).div_ceil(width).max(1))
            .sum();
        u16::try_from(rows).unwrap_or(MAX_ROWS).clamp(1, MAX_ROWS)
    }

    /// The word before the cursor on its line.
    fn word_before_cursor(&self) -> &str {
        let (row, col) = (self.textarea.cursor().0, self.textarea.cursor().1);
        let line = self.textarea.lines().get(row).map_or("", String::as_str);
        let byte = line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
        let before = &line[..byte];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        &before[start..]
    }

    /// Recomputes the popup after a change; `files` are workspace paths, `models` the
    /// model names known.
    pub fn refresh_completion(&mut self, files: Option<&[String]>, models: &[String]) {
        let text = self.text();
        // "/m" already names /model alone: the list is asked for while the rest is typed.
        let command = text.split(char::is_whitespace).next().unwrap_or_default();
        if command.len() >= 2 && "/model".starts_with(command) {
            self.wants_models = true;
        }
        if self.dismissed.as_deref() == Some(text.as_str()) {
            self.completion = None;
            return;
        }
        self.dismissed = None;
        let previous = self.completion.take();
        let single_line = self.textarea.lines().len() == 1;
        let word = self.word_before_cursor().to_owned();
        let (kind, items, replace) = if single_line && text.starts_with('/') {
            let before_cursor: String = {
                let line = &self.textarea.lines()[0];
                line.chars().take(self.textarea.cursor().1).collect()
            };
            let (items, replace) = slash::complete(&before_cursor, models);
            (CompletionKind::Command, items, replace)
        } else if let Some(partial) = word.strip_prefix('@') {
            match files {
                Some(files) => (
                    CompletionKind::Path,
                    match_paths(files, partial),
                    partial.chars().count(),
                ),
                None => {
                    self.wants_files = true;
                    return;
                }
            }
        } else {
            return;
        };
        if items.is_empty() {
            return;
        }
        let selected = previous
            .filter(|p| p.kind == kind)
            .and_then(|p| {
                p.items
                    .get(p.selected)
                    .and_then(|s| items.iter().position(|i| i == s))
            })
            .unwrap_or(0);
        self.completion = Some(Completion {
            kind,
            items,
            selected,
            replace_chars: replace,
        });
    }

    /// Moves the popup's highlight by `delta`.
    pub fn move_selection(&mut self, delta: isize) {
        if let Some(c) = &mut self.completion {
            let n = c.items.len() as isize;
            c.selected = (c.selected as isize + delta).rem_euclid(n.max(1)) as usize;
        }
    }

    /// Closes the popup until the text changes.
    pub fn dismiss_completion(&mut self) {
        self.completion = None;
        self.dismissed = Some(self.text());
    }

    /// Replaces the completed word with the highlighted candidate.
    pub fn accept_completion(&mut self) -> bool {
        let Some(c) = self.completion.take() else {
            return false;
        };
        let Some(choice) = c.items.get(c.selected) else {
            return false;
        };
        for _ in 0..c.replace_chars {
            self.textarea.delete_char();
        }
        let needs_space = !choice.ends_with('/');
        self.textarea.insert_str(choice);
        if needs_space {
            self.textarea.insert_char(' ');
        }
        true
    }
}

/// Workspace paths matching `partial`: prefix matches of the path or file name first,
/// then substring matches; shorter paths first.
pub fn match_paths(files: &[String], partial: &str) -> Vec<String> {
    let needle = partial.to_lowercase();
    let mut scored: Vec<(u8, usize, &String)> = files
        .iter()
        .filter_map(|f| {
            let lower = f.to_lowercase();
            let name = lower.rsplit('/').next().unwrap_or(&lower);
            let score = if lower.starts_with(&needle) {
                0
            } else if name.starts_with(&needle) {
                1
            } else if lower.contains(&needle) {
                2
            } else {
                return None;
            };
            Some((score, f.len(), f))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(COMPLETION_ITEMS)
        .map(|(_, _, f)| f.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_browses_and_returns_to_the_draft() {
        let theme = Theme::fallback();
        let mut c = Composer::new(&theme);
        c.load_history(vec!["one".into(), "two".into()]);
        c.insert("draft");
        assert!(c.history_prev(&theme));
        assert_eq!(c.text(), "two");
        assert!(c.history_prev(&theme));
        assert_eq!(c.text(), "one");
        assert!(!c.history_prev(&theme));
        assert!(c.history_next(&theme));
        assert!(c.history_next(&theme));
        assert_eq!(c.text(), "draft");
        assert!(!c.history_next(&theme));
        assert!(c.remember("three"));
        assert!(!c.remember("three"));
    }

    #[test]
    fn paths_complete_after_an_at_sign() {
        let theme = Theme::fallback();
        let mut c = Composer::new(&theme);
        c.insert("look at @ma");
        c.refresh_completion(None, &[]);
        assert!(c.wants_files && c.completion.is_none());
        let files = vec![
            "src/main.rs".to_owned(),
            "Makefile".to_owned(),
            "docs/x.md".to_owned(),
        ];
        c.refresh_completion(Some(&files), &[]);
        let popup = c.completion.clone().unwrap();
        assert_eq!(popup.items, ["Makefile", "src/main.rs"]);
        c.move_selection(1);
        assert!(c.accept_completion());
        assert_eq!(c.text(), "look at @src/main.rs ");
    }

    #[test]
    fn rows_follow_the_wrapped_text() {
        let theme = Theme::fallback();
        let mut c = Composer::new(&theme);
        assert_eq!(c.rows(10), 1);
        c.insert(&"x".repeat(25));
        assert_eq!(c.rows(10), 3);
        c.insert(&"\n".repeat(20));
        assert_eq!(c.rows(10), MAX_ROWS);
    }
}
