//! The composer's completion popup: slash commands and their arguments (model names
//! from the server's list once it arrived), and workspace paths after `@`.

use super::Composer;
use crate::part::Handled;
use crate::slash;

/// Completion items shown at most.
pub const COMPLETION_ITEMS: usize = 8;

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
    /// What each candidate is (empty when there is nothing to say).
    pub details: Vec<String>,
    /// The highlighted candidate.
    pub selected: usize,
    /// Characters before the cursor that the choice replaces.
    replace_chars: usize,
}

impl Composer {
    /// Whether the popup is open.
    pub(crate) fn completion_open(&self) -> bool {
        self.completion.is_some()
    }

    /// The workspace's files arrived.
    pub(crate) fn set_files(&mut self, files: Vec<String>) -> Handled {
        self.files = Some(files);
        self.refresh_completion();
        Handled::changed()
    }

    /// The server's model names arrived (an empty list keeps the configured names).
    pub(crate) fn set_server_models(&mut self, models: Vec<String>) -> Handled {
        if models.is_empty() {
            return Handled::unchanged();
        }
        self.server_models = Some(models);
        self.rebuild_models();
        self.refresh_completion();
        Handled::changed()
    }

    /// The sessions `/sessions` completes (id and description) arrived.
    pub(crate) fn set_sessions(&mut self, sessions: Vec<(String, String)>) -> Handled {
        self.sessions = Some(sessions);
        self.refresh_completion();
        Handled::changed()
    }

    /// The model in use changed (it is offered first when no list has it).
    pub(crate) fn set_current_model(&mut self, model: String) {
        self.current_model = model;
        self.rebuild_models();
    }

    pub(super) fn rebuild_models(&mut self) {
        let mut models = self
            .server_models
            .clone()
            .unwrap_or_else(|| self.configured_models.clone());
        if !models.contains(&self.current_model) {
            models.insert(0, self.current_model.clone());
        }
        self.models = models;
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

    /// Recomputes the popup after a change of the text or of what it completes from.
    pub(super) fn refresh_completion(&mut self) {
        let text = self.shown();
        // "/m" already names /model alone: the list is asked for while the rest is typed.
        let command = text.split(char::is_whitespace).next().unwrap_or_default();
        if command.len() >= 2 && "/model".starts_with(command) {
            self.wants_models = true;
        }
        if text.starts_with("/sessions ") {
            self.wants_sessions = true;
        } else {
            // Asked again next time: sessions come and go.
            self.sessions_requested = false;
        }
        if self.dismissed.as_deref() == Some(text.as_str()) {
            self.completion = None;
            return;
        }
        self.dismissed = None;
        let previous = self.completion.take();
        let single_line = self.textarea.lines().len() == 1;
        let word = self.word_before_cursor().to_owned();
        let (kind, items, details, replace): (_, Vec<String>, Vec<String>, _) =
            if single_line && text.starts_with('/') {
                let before_cursor: String = {
                    let line = &self.textarea.lines()[0];
                    line.chars().take(self.textarea.cursor().1).collect()
                };
                let sessions = self.sessions.as_deref().unwrap_or_default();
                let sources = slash::Sources {
                    models: &self.models,
                    current_model: &self.current_model,
                    themes: &self.themes,
                    sessions,
                    custom: &self.custom_commands,
                };
                let (choices, replace) = slash::complete(&before_cursor, &sources);
                let (items, details) = choices.into_iter().map(|c| (c.value, c.detail)).unzip();
                (CompletionKind::Command, items, details, replace)
            } else if let Some(partial) = word.strip_prefix('@') {
                match &self.files {
                    Some(files) => {
                        let items = match_paths(files, partial);
                        let details = vec![String::new(); items.len()];
                        (
                            CompletionKind::Path,
                            items,
                            details,
                            partial.chars().count(),
                        )
                    }
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
            details,
            selected,
            replace_chars: replace,
        });
    }

    /// Moves the popup's highlight by `delta`.
    pub(crate) fn move_selection(&mut self, delta: isize) {
        if let Some(c) = &mut self.completion {
            let n = c.items.len() as isize;
            c.selected = (c.selected as isize + delta).rem_euclid(n.max(1)) as usize;
        }
    }

    /// Closes the popup until the text changes.
    pub(crate) fn dismiss_completion(&mut self) {
        self.completion = None;
        self.dismissed = Some(self.shown());
    }

    /// Replaces the completed word with the highlighted candidate, then looks for the
    /// next completion (a command's arguments).
    pub(crate) fn accept_completion(&mut self) {
        let Some(c) = self.completion.take() else {
            return;
        };
        if let Some(choice) = c.items.get(c.selected) {
            for _ in 0..c.replace_chars {
                self.textarea.delete_char();
            }
            let needs_space = !choice.ends_with('/');
            self.textarea.insert_str(choice);
            if needs_space {
                self.textarea.insert_char(' ');
            }
        }
        self.refresh_completion();
    }
}

/// Workspace paths matching `partial`: prefix matches of the path or file name first,
/// then substring matches; shorter paths first.
fn match_paths(files: &[String], partial: &str) -> Vec<String> {
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
    fn paths_complete_after_an_at_sign() {
        let mut c = Composer::new(Vec::new(), "m".into());
        let _ = c.paste("look at @ma");
        assert!(c.wants_files && c.completion.is_none());
        let files = vec![
            "src/main.rs".to_owned(),
            "Makefile".to_owned(),
            "docs/x.md".to_owned(),
        ];
        let _ = c.set_files(files);
        let popup = c.completion.clone().unwrap();
        assert_eq!(popup.items, ["Makefile", "src/main.rs"]);
        c.move_selection(1);
        c.accept_completion();
        assert_eq!(c.text(), "look at @src/main.rs ");
    }
}
