//! The composer part: a multi-line `tui-textarea` with history (Up/Down at its edges)
//! and completion of slash commands, their arguments and `@path` mentions. The text
//! area carries no theme: colours are applied when it is drawn.

mod completion;
mod draw;
mod pastes;

pub use completion::{Completion, CompletionKind};
pub(crate) use draw::ComposerView;
use pastes::Pastes;

use super::msg::{Effect, QueuedText};
use super::overlay::kind::Overlay;
use super::part::{Handled, Intent};
use super::sessions;
use super::slash;
use super::wrap::str_width;
use claw_runtime::keymap::Action;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Modifier, Style};
use tui_textarea::{CursorMove, TextArea, WrapMode};

/// History entries kept (and loaded).
pub const HISTORY_LIMIT: usize = 1000;
/// Rows the composer grows to at most.
pub const MAX_ROWS: u16 = 8;
/// What the empty composer says.
const PLACEHOLDER: &str = "Ask anything · / commands · @ files · F1 help";

/// The text being written, its history and its completion popup.
#[derive(Clone, Debug)]
pub struct Composer {
    textarea: TextArea<'static>,
    history: Vec<String>,
    browsing: Option<usize>,
    draft: String,
    completion: Option<Completion>,
    /// The text at which the popup was dismissed (it stays closed until the text changes).
    dismissed: Option<String>,
    /// The workspace's files for `@path`, once listed.
    files: Option<Vec<String>>,
    /// `@` was typed before the file list arrived.
    wants_files: bool,
    files_requested: bool,
    /// `/model` is being typed: the server's model list is wanted.
    wants_models: bool,
    models_requested: bool,
    /// The model names `/model` completes: the server's once listed (else the configured
    /// ones), the current model first when neither has it.
    models: Vec<String>,
    configured_models: Vec<String>,
    server_models: Option<Vec<String>>,
    current_model: String,
    /// The theme names `/theme` completes.
    themes: Vec<String>,
    /// The user's own slash commands and their popup descriptions.
    custom_commands: Vec<(String, String)>,
    /// The sessions `/sessions` completes, once listed.
    sessions: Option<Vec<(String, String)>>,
    /// `/sessions ` is being typed: the list is wanted.
    wants_sessions: bool,
    sessions_requested: bool,
    /// Messages taken back out of the queues, as they were restored: each keeps its
    /// mark (steer, follow-up) while the text is unedited.
    restored: Option<(Vec<QueuedText>, String)>,
    /// Large pastes, shown as chips and sent whole.
    pastes: Pastes,
}

impl Composer {
    /// An empty composer completing `/model` from `configured_models` and
    /// `current_model`.
    pub(crate) fn new(configured_models: Vec<String>, current_model: String) -> Self {
        let mut composer = Self {
            textarea: TextArea::default(),
            history: Vec::new(),
            browsing: None,
            draft: String::new(),
            completion: None,
            dismissed: None,
            files: None,
            wants_files: false,
            files_requested: false,
            wants_models: false,
            models_requested: false,
            models: Vec::new(),
            configured_models,
            server_models: None,
            current_model,
            themes: Vec::new(),
            custom_commands: Vec::new(),
            sessions: None,
            wants_sessions: false,
            sessions_requested: false,
            restored: None,
            pastes: Pastes::default(),
        };
        composer.rebuild_models();
        composer.set_text("");
        composer
    }

    /// The whole text.
    pub fn text(&self) -> String {
        self.pastes.expand(&self.shown())
    }

    /// How many large pastes stand as chips in the text.
    pub(crate) fn chips(&self) -> usize {
        self.pastes.len()
    }

    /// The text as shown (large pastes as their chips).
    pub fn shown(&self) -> String {
        self.textarea.lines().join("\n")
    }

    /// Whether there is no text (whitespace counts as none).
    pub fn is_blank(&self) -> bool {
        self.textarea.lines().iter().all(|l| l.trim().is_empty())
    }

    /// The open completion popup.
    pub fn completion(&self) -> Option<&Completion> {
        self.completion.as_ref()
    }

    /// The history, oldest first.
    pub fn history(&self) -> &[String] {
        &self.history
    }

    /// Keys while the composer has focus (and printable keys typed in another pane, with
    /// no action): editing, history at the first and last line, the popup's keys.
    pub(crate) fn handle_key(&mut self, key: &KeyEvent, action: Option<Action>) -> Handled {
        match action {
            Some(Action::Submit) => {
                // What is sent, and whether that changes the screen, is the root's to say.
                let mut handled = Handled::unchanged();
                if self.completion.is_some() {
                    self.accept_completion();
                    handled = Handled::changed();
                    // A completed command that is not finished yet waits for the rest.
                    if slash::parse(&self.shown()).is_none_or(|c| c.is_err()) {
                        return handled;
                    }
                }
                return handled.ask(Intent::Submit);
            }
            Some(Action::Newline) => {
                self.textarea.insert_newline();
                return Handled::changed();
            }
            _ => {}
        }
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let mut handled = Handled::changed();
        match key.code {
            KeyCode::Up if plain && self.completion.is_some() => self.move_selection(-1),
            KeyCode::Down if plain && self.completion.is_some() => self.move_selection(1),
            // At the composer's first or last line, Up/Down walk the history.
            KeyCode::Up if plain && self.on_first_line() => {
                self.history_prev();
            }
            KeyCode::Down if plain && self.on_last_line() => {
                self.history_next();
            }
            // Ctrl+U as in a shell: the line up to the cursor goes. The text area's own
            // Ctrl+U is undo, which took back one typed character where people expect
            // the line to go.
            KeyCode::Char('u') if key.modifiers == KeyModifiers::CONTROL => {
                self.textarea.delete_line_by_head();
                self.refresh_completion();
            }
            KeyCode::Char('?') if plain && self.is_blank() => {
                handled = handled.ask(Intent::Open(Overlay::Help { scroll: 0 }));
            }
            _ => {
                self.textarea.input(*key);
                self.refresh_completion();
            }
        }
        if self.wants_files && !self.files_requested {
            self.files_requested = true;
            handled = handled.with(Effect::ListFiles);
        }
        if self.wants_models && !self.models_requested {
            self.models_requested = true;
            handled = handled.with(Effect::ListModels);
        }
        if self.wants_sessions && !self.sessions_requested {
            self.wants_sessions = false;
            self.sessions_requested = true;
            handled = handled.with(Effect::Sessions(sessions::Effect::ListChoices));
        }
        handled
    }

    /// The user's own slash commands the popup offers: `/name` and a description.
    pub(crate) fn set_custom_commands(&mut self, commands: Vec<(String, String)>) {
        self.custom_commands = commands;
    }

    /// The theme names `/theme` completes.
    pub(crate) fn set_themes(&mut self, themes: Vec<String>) {
        self.themes = themes;
    }

    /// Inserts pasted text at the cursor (its line breaks kept); the pasted path of an
    /// image file becomes its `@path` mention, so it is attached when sent; a paste
    /// longer than the composer shows goes in as a chip (see `pastes.rs`).
    pub(crate) fn paste(&mut self, text: &str) -> Handled {
        let text = match super::attach::pasted_image_path(text) {
            Some(path) => format!("{} ", super::attach::mention(&path)),
            None => text.replace("\r\n", "\n").replace('\r', "\n"),
        };
        let text = if Pastes::is_large(&text) {
            self.pastes.chip(text)
        } else {
            text
        };
        self.textarea.insert_str(text);
        self.refresh_completion();
        Handled::changed()
    }

    /// Takes the restored messages out, if the text is still as they were restored.
    pub(crate) fn take_restored(&mut self) -> Option<Vec<QueuedText>> {
        let items = self.restored()?.to_vec();
        self.clear();
        Some(items)
    }

    /// Takes the text out (without trailing whitespace), leaving the composer empty.
    pub(crate) fn take(&mut self) -> String {
        let text = self.text();
        self.clear();
        text.trim_end().to_owned()
    }

    /// Replaces the text (and any pastes held) and puts the cursor at its end.
    pub(crate) fn set_text(&mut self, text: &str) {
        self.pastes.clear();
        self.show_text(text);
    }

    /// Shows `text` with the cursor at its end; pastes its chips stand for are kept.
    fn show_text(&mut self, text: &str) {
        let lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        self.textarea = TextArea::new(lines);
        // Theme-free settings only: the theme's colours are applied in `draw`.
        self.textarea.set_wrap_mode(WrapMode::WordOrGlyph);
        self.textarea.set_style(Style::default());
        self.textarea.set_cursor_line_style(Style::default());
        self.textarea
            .set_cursor_style(Style::default().add_modifier(Modifier::REVERSED));
        self.textarea.set_placeholder_text(PLACEHOLDER);
        self.textarea.set_placeholder_style(Style::default());
        self.textarea.move_cursor(CursorMove::Bottom);
        self.textarea.move_cursor(CursorMove::End);
        self.completion = None;
    }

    /// Empties the composer and leaves history browsing.
    pub(crate) fn clear(&mut self) {
        self.set_text("");
        self.browsing = None;
        self.dismissed = None;
        self.restored = None;
    }

    /// Puts back a message that could not be sent, before what is being written (no
    /// queue marks: it was never queued).
    pub(crate) fn put_back(&mut self, text: String) {
        let joined = if self.is_blank() {
            text
        } else {
            format!("{text}\n{}", self.shown())
        };
        self.show_text(&joined);
        self.restored = None;
    }

    /// Puts `texts` (taken back out of the queues) in front of what is being written,
    /// in order, a blank line between them; each stays marked with its queue until the
    /// text is edited. Returns whether there were any.
    pub(crate) fn restore(&mut self, texts: Vec<QueuedText>) -> bool {
        if texts.is_empty() {
            return false;
        }
        let mut parts: Vec<String> = texts.iter().map(|t| t.text.clone()).collect();
        let draft = (!self.is_blank()).then(|| self.shown());
        parts.extend(draft.clone());
        let joined = parts.join("\n\n");
        self.show_text(&joined);
        // What was being written is not a queued message: then the marks would lie.
        if draft.is_none() {
            self.restored = Some((texts, joined));
        }
        true
    }

    /// The restored messages, while the text is as they were restored.
    pub fn restored(&self) -> Option<&[QueuedText]> {
        match &self.restored {
            Some((items, text)) if *text == self.shown() => Some(items),
            _ => None,
        }
    }

    /// Whether the cursor is on the first line.
    fn on_first_line(&self) -> bool {
        self.textarea.cursor().0 == 0
    }

    /// Whether the cursor is on the last line.
    fn on_last_line(&self) -> bool {
        self.textarea.cursor().0 + 1 >= self.textarea.lines().len()
    }

    /// Loads history read from disk (oldest first), keeping what was typed since.
    pub(crate) fn load_history(&mut self, mut entries: Vec<String>) -> Handled {
        entries.append(&mut self.history);
        let skip = entries.len().saturating_sub(HISTORY_LIMIT);
        self.history = entries.into_iter().skip(skip).collect();
        Handled::unchanged()
    }

    /// Remembers a sent text; returns whether it is new (not a repeat of the last).
    pub(crate) fn remember(&mut self, text: &str) -> bool {
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

    /// Shows the previous history entry; false when there is none.
    fn history_prev(&mut self) -> bool {
        let next = match self.browsing {
            None if self.history.is_empty() => return false,
            None => {
                self.draft = self.shown();
                self.history.len() - 1
            }
            Some(0) => return false,
            Some(i) => i - 1,
        };
        self.browsing = Some(next);
        let text = self.history[next].clone();
        self.show_text(&text);
        true
    }

    /// Shows the next history entry, or the draft after the newest; false when not browsing.
    fn history_next(&mut self) -> bool {
        let Some(i) = self.browsing else {
            return false;
        };
        if i + 1 < self.history.len() {
            self.browsing = Some(i + 1);
            let text = self.history[i + 1].clone();
            self.show_text(&text);
        } else {
            self.browsing = None;
            let draft = std::mem::take(&mut self.draft);
            self.show_text(&draft);
        }
        true
    }

    /// Rows the text needs at `width` (at least 1, at most `MAX_ROWS`).
    pub(crate) fn rows(&self, width: u16) -> u16 {
        let width = usize::from(width.max(1));
        let rows: usize = self
            .textarea
            .lines()
            .iter()
            .map(|l| str_width(l).div_ceil(width).max(1))
            .sum();
        u16::try_from(rows).unwrap_or(MAX_ROWS).clamp(1, MAX_ROWS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_browses_and_returns_to_the_draft() {
        let mut c = Composer::new(Vec::new(), "m".into());
        let _ = c.load_history(vec!["one".into(), "two".into()]);
        let _ = c.paste("draft");
        assert!(c.history_prev());
        assert_eq!(c.text(), "two");
        assert!(c.history_prev());
        assert_eq!(c.text(), "one");
        assert!(!c.history_prev());
        assert!(c.history_next());
        assert!(c.history_next());
        assert_eq!(c.text(), "draft");
        assert!(!c.history_next());
        assert!(c.remember("three"));
        assert!(!c.remember("three"));
    }

    #[test]
    fn rows_follow_the_wrapped_text() {
        let mut c = Composer::new(Vec::new(), "m".into());
        assert_eq!(c.rows(10), 1);
        let _ = c.paste(&"x".repeat(25));
        assert_eq!(c.rows(10), 3);
        // Typed (a paste this long would be a chip): the box stops growing.
        c.set_text(&format!("{}{}", "x".repeat(25), "\n".repeat(20)));
        assert_eq!(c.rows(10), MAX_ROWS);
    }
}
