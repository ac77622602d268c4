//! `App::update` for keys in the composer and the panes, Enter and slash commands.

use super::app::{App, HINT, Overlay};
use super::keymap::Action;
use super::layout::Focus;
use super::msg::Effect;
use super::slash::{self, Command};
use crate::agent::{NoticeLevel, QueueKind};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

impl App {
    pub(super) fn take_composer(&mut self) -> String {
        let text = self.composer.text();
        let theme = self.config.theme.clone();
        self.composer.clear(&theme);
        text.trim_end().to_owned()
    }

    pub(super) fn composer_key(&mut self, key: KeyEvent, action: Option<Action>) -> Vec<Effect> {
        let theme = self.config.theme.clone();
        match action {
            Some(Action::Submit) => {
                if self.composer.completion.is_some() {
                    self.composer.accept_completion();
                    self.refresh_completion();
                    if slash::parse(&self.composer.text()).is_none_or(|c| c.is_err()) {
                        return Vec::new();
                    }
                }
                return self.submit();
            }
            Some(Action::Newline) => {
                self.composer.newline();
                return Vec::new();
            }
            _ => {}
        }
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Up if plain && self.composer.completion.is_some() => {
                self.composer.move_selection(-1)
            }
            KeyCode::Down if plain && self.composer.completion.is_some() => {
                self.composer.move_selection(1)
            }
            // At the composer's first or last line, Up/Down walk the history.
            KeyCode::Up if plain && self.composer.on_first_line() => {
                self.composer.history_prev(&theme);
            }
            KeyCode::Down if plain && self.composer.on_last_line() => {
                self.composer.history_next(&theme);
            }
            KeyCode::Char('?') if plain && self.composer.is_blank() => {
                self.overlay = Some(Overlay::Help { scroll: 0 });
            }
            _ => {
                self.composer.key(key);
                self.refresh_completion();
            }
        }
        let mut effects = Vec::new();
        if self.composer.wants_files && !self.files_requested {
            self.files_requested = true;
            effects.push(Effect::ListFiles);
        }
        if self.composer.wants_models && !self.models_requested {
            self.models_requested = true;
            effects.push(Effect::ListModels);
        }
        effects
    }

    /// Enter: a command runs; a prompt starts a run, or queues a follow-up while running.
    pub(super) fn submit(&mut self) -> Vec<Effect> {
        if self.composer.is_blank() {
            self.dirty = false;
            return Vec::new();
        }
        let text = self.take_composer();
        let mut effects = Vec::new();
        if self.composer.remember(&text) {
            effects.push(Effect::SaveHistory(text.clone()));
        }
        if !text.starts_with(' ')
            && let Some(command) = slash::parse(&text)
        {
            effects.extend(self.command(command));
            return effects;
        }
        if self.switching_session {
            // The history is being replaced: the text waits until the session is shown.
            let theme = self.config.theme.clone();
            self.composer.set_text(&text, &theme);
            self.set_hint("switching sessions… press Enter again in a moment", HINT);
            return effects;
        }
        // A leading space lets a message start with `/` without being a command.
        let text = match text.strip_prefix(' ') {
            Some(rest) if rest.starts_with('/') => rest.to_owned(),
            _ => text,
        };
        self.chat.follow = true;
        self.chat.unseen = false;
        effects.push(if self.running {
            Effect::FollowUp(text)
        } else {
            Effect::Prompt(text)
        });
        effects
    }

    pub(super) fn command(&mut self, command: Result<Command, String>) -> Vec<Effect> {
        let command = match command {
            Ok(c) => c,
            Err(why) => {
                self.notice(NoticeLevel::Warning, why);
                return Vec::new();
            }
        };
        match command {
            Command::Help => {
                self.overlay = Some(Overlay::Help { scroll: 0 });
                Vec::new()
            }
            Command::Model(name) => {
                self.notice(
                    NoticeLevel::Info,
                    format!("Model set to {name} from the next run on."),
                );
                self.model = name.clone();
                vec![Effect::SetModel(name)]
            }
            Command::Thinking(level) => {
                self.thinking = level;
                self.notice(
                    NoticeLevel::Info,
                    format!(
                        "Thinking set to {} from the next run on.",
                        format!("{level:?}").to_lowercase()
                    ),
                );
                vec![Effect::SetThinking(level)]
            }
            Command::Steering(mode) => {
                self.steering_mode = mode;
                vec![Effect::SetQueueMode(QueueKind::Steering, mode)]
            }
            Command::FollowUp(mode) => {
                self.follow_up_mode = mode;
                vec![Effect::SetQueueMode(QueueKind::FollowUp, mode)]
            }
            Command::Tools(mode) => {
                self.tool_execution = mode;
                self.notice(
                    NoticeLevel::Info,
                    format!(
                        "Tool calls run {} from the next run on.",
                        format!("{mode:?}").to_lowercase()
                    ),
                );
                vec![Effect::SetToolExecution(mode)]
            }
            Command::Copy { code } => {
                let answer = self.transcript.last_answer();
                let text = if code {
                    answer.as_deref().and_then(last_code_block)
                } else {
                    answer.clone()
                };
                match text {
                    Some(text) => {
                        self.set_hint("copied to the clipboard (OSC 52)", HINT);
                        vec![Effect::Copy(text)]
                    }
                    None => {
                        let what = if code { "code block" } else { "answer" };
                        self.notice(
                            NoticeLevel::Warning,
                            format!("There is no {what} to copy yet."),
                        );
                        Vec::new()
                    }
                }
            }
            Command::New => self.new_session(),
            Command::Sessions => vec![Effect::ListSessions],
            Command::Quit => vec![Effect::Quit],
        }
    }

    pub(super) fn chat_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Up => self.scroll_chat(-1),
            KeyCode::Down => self.scroll_chat(1),
            KeyCode::Home => self.scroll_chat_to(false),
            KeyCode::End => self.scroll_chat_to(true),
            _ => return self.type_into_composer(key),
        }
        Vec::new()
    }

    /// A printable key typed in another pane goes to the composer.
    pub(super) fn type_into_composer(&mut self, key: KeyEvent) -> Vec<Effect> {
        if let KeyCode::Char(_) = key.code
            && !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            self.focus = Focus::Composer;
            return self.composer_key(key, None);
        }
        self.dirty = false;
        Vec::new()
    }

    pub(super) fn move_tree_selection(&mut self, delta: isize) {
        let ids = self.calls.call_ids();
        if ids.is_empty() {
            return;
        }
        let current = self
            .tree_selected
            .as_deref()
            .and_then(|s| ids.iter().position(|i| *i == s))
            .unwrap_or(ids.len() - 1);
        let next = current.saturating_add_signed(delta).min(ids.len() - 1);
        self.tree_selected = Some(ids[next].to_owned());
    }

    pub(super) fn tree_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        self.calls.refresh_rows();
        match key.code {
            KeyCode::Up => self.move_tree_selection(-1),
            KeyCode::Down => self.move_tree_selection(1),
            KeyCode::Home => self.move_tree_selection(isize::MIN / 2),
            KeyCode::End => self.move_tree_selection(isize::MAX / 2),
            KeyCode::Enter => {
                let Some(id) = self.tree_selected.clone() else {
                    return Vec::new();
                };
                return self.open_detail(id);
            }
            _ => return self.type_into_composer(key),
        }
        Vec::new()
    }

    pub(super) fn open_detail(&mut self, call_id: String) -> Vec<Effect> {
        let Some(node) = self.calls.node(&call_id) else {
            return Vec::new();
        };
        let args = super::view::overlay::pretty_json(&node.args);
        self.overlay = Some(Overlay::Detail { call_id, scroll: 0 });
        let theme = &self.config.theme.syntax_theme;
        if theme.is_empty() {
            return Vec::new();
        }
        let key = super::highlight::highlight_key(theme, "json", &args);
        if self.highlights.contains_key(&key) || self.pending_highlights.contains_key(&key) {
            return Vec::new();
        }
        self.pending_highlights.insert(key, Vec::new());
        vec![Effect::Highlight(super::msg::HighlightRequest {
            key,
            lang: "json".into(),
            code: args,
            theme: theme.clone(),
        })]
    }

    pub(super) fn dashboard_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let n = self.subagents.len() + self.cron.len();
        let selected = self.dashboard_selected;
        let subagent = self.subagents.get(selected);
        let job = selected
            .checked_sub(self.subagents.len())
            .and_then(|i| self.cron.get(i));
        match key.code {
            KeyCode::Up => self.dashboard_selected = selected.saturating_sub(1),
            KeyCode::Down => self.dashboard_selected = (selected + 1).min(n.saturating_sub(1)),
            KeyCode::Char('x') if subagent.is_some() => {
                let id = subagent.map(|s| s.id.clone()).unwrap_or_default();
                self.set_hint(format!("cancelling subagent {id}"), HINT);
                return vec![Effect::CancelSubagent(id)];
            }
            KeyCode::Char('p') if job.is_some() => {
                let (id, paused) = job.map(|j| (j.id.clone(), j.paused)).unwrap_or_default();
                return vec![if paused {
                    Effect::ResumeCron(id)
                } else {
                    Effect::PauseCron(id)
                }];
            }
            KeyCode::Char('d') if job.is_some() => {
                let (id, name) = job
                    .map(|j| (j.id.clone(), j.name.clone()))
                    .unwrap_or_default();
                self.overlay = Some(Overlay::ConfirmDelete { id, name });
            }
            _ => return self.type_into_composer(key),
        }
        Vec::new()
    }
}

/// The last fenced code block of a markdown text.
pub fn last_code_block(markdown: &str) -> Option<String> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut last = None;
    let mut current: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => current = Some(String::new()),
            Event::Text(t) => {
                if let Some(c) = &mut current {
                    c.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => last = current.take(),
            _ => {}
        }
    }
    last.map(|c| c.trim_end_matches('\n').to_owned())
}
