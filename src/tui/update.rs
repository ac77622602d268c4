//! `App::update`: terminal input and internal messages to model changes and effects.
//! No I/O and no awaits here; agent events are handled in `events.rs`.

use super::app::{App, DOUBLE_PRESS, Overlay, SPINNER};
use super::keymap::Action;
use super::layout::{Focus, inner};
use super::msg::{Effect, Msg};
use super::slash::{self, Command};
use crate::agent::{NoticeLevel, QueueKind};
use crate::tools::exec::ApprovalDecision;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use ratatui::layout::{Position, Rect};
use std::time::{Duration, Instant};

/// How long a status-bar hint stays.
const HINT: Duration = Duration::from_secs(2);
/// Rows one wheel notch scrolls.
const WHEEL_ROWS: usize = 3;

impl App {
    /// Applies a message at the current time; returns what the runtime must do.
    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        self.update_at(msg, Instant::now())
    }

    /// Applies a message as if it arrived at `now` (tests control the clock this way).
    pub fn update_at(&mut self, msg: Msg, now: Instant) -> Vec<Effect> {
        self.now = now;
        if self.hint.as_ref().is_some_and(|(_, until)| *until <= now) {
            self.hint = None;
            self.dirty = true;
        }
        match msg {
            Msg::Frame => return self.prepare_frame(),
            Msg::Tick => {
                if self.busy() {
                    self.spinner = (self.spinner + 1) % SPINNER.len();
                    self.dirty = true;
                }
                if !self.cron.is_empty() {
                    self.dirty = true;
                }
                return Vec::new();
            }
            _ => {}
        }
        self.dirty = true;
        match msg {
            Msg::Term(event) => self.terminal_event(event),
            Msg::Agent(event) => self.agent_event(event),
            Msg::Subagent { parent_call_id, event } => {
                self.calls.apply_nested(&parent_call_id, &event, now);
                Vec::new()
            }
            Msg::Subagents(rows) => {
                self.subagents = rows;
                self.clamp_dashboard();
                Vec::new()
            }
            Msg::CronJobs(rows) => {
                self.cron = rows;
                self.clamp_dashboard();
                Vec::new()
            }
            Msg::PendingNotifications(n) => {
                self.pending_notifications = n;
                Vec::new()
            }
            Msg::Outbound(message) => {
                self.transcript.push(super::entry::EntryKind::Outbound(message));
                Vec::new()
            }
            Msg::Approval(request) => {
                self.approvals.push_back(request);
                Vec::new()
            }
            Msg::QueueRestored(texts) => {
                self.restore_to_composer(texts);
                Vec::new()
            }
            Msg::Highlighted { key, lines } => {
                self.highlights.insert(key, lines);
                for entry in self.pending_highlights.remove(&key).unwrap_or_default() {
                    self.transcript.invalidate(entry);
                }
                Vec::new()
            }
            Msg::HistoryLoaded(entries) => {
                self.composer.load_history(entries);
                Vec::new()
            }
            Msg::WorkspaceFiles(files) => {
                self.files = Some(files);
                self.refresh_completion();
                Vec::new()
            }
            Msg::EditorDone(result) => {
                match result {
                    Ok(text) => {
                        let theme = self.config.theme.clone();
                        self.composer.set_text(text.trim_end_matches('\n'), &theme);
                    }
                    Err(e) => self.notice(NoticeLevel::Error, e),
                }
                Vec::new()
            }
            Msg::SessionReset => {
                self.reset_session();
                Vec::new()
            }
            Msg::Notice(level, text) => {
                self.notice(level, text);
                Vec::new()
            }
            Msg::Frame | Msg::Tick => Vec::new(),
        }
    }

    pub(super) fn notice(&mut self, level: NoticeLevel, text: impl Into<String>) {
        self.transcript.push(super::entry::EntryKind::Notice(level, text.into()));
    }

    fn reset_session(&mut self) {
        self.transcript.clear();
        self.calls.clear();
        self.cards.clear();
        self.call_entries.clear();
        self.pending_highlights.clear();
        self.streaming_entry = None;
        self.totals = super::app::Totals::default();
        self.turn = 0;
        self.tree_selected = None;
        self.chat.follow = true;
        self.chat.unseen = false;
        self.last_total_rows = 0;
        self.notice(NoticeLevel::Info, "New session: the conversation was cleared.");
    }

    fn clamp_dashboard(&mut self) {
        let n = self.subagents.len() + self.cron.len();
        self.dashboard_selected = self.dashboard_selected.min(n.saturating_sub(1));
    }

    fn restore_to_composer(&mut self, texts: Vec<String>) {
        if texts.is_empty() {
            return;
        }
        let mut parts = texts;
        if !self.composer.is_blank() {
            parts.push(self.composer.text());
        }
        let theme = self.config.theme.clone();
        self.composer.set_text(&parts.join("\n"), &theme);
        self.focus = Focus::Composer;
    }

    fn refresh_completion(&mut self) {
        let mut models = self.config.models.clone();
        if !models.contains(&self.model) {
            models.insert(0, self.model.clone());
        }
        self.composer.refresh_completion(self.files.as_deref(), &models);
    }

    fn terminal_event(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::Key(key) if key.kind == KeyEventKind::Release => {
                self.dirty = false;
                Vec::new()
            }
            Event::Key(key) => self.key(key),
            Event::Paste(text) => {
                if self.overlay.is_none() && self.approvals.is_empty() {
                    self.focus = Focus::Composer;
                    self.composer.insert(&text);
                    self.refresh_completion();
                }
                Vec::new()
            }
            Event::Resize(w, h) => {
                self.size = Rect::new(0, 0, w, h);
                Vec::new()
            }
            Event::Mouse(mouse) => {
                let down = match mouse.kind {
                    MouseEventKind::ScrollUp => false,
                    MouseEventKind::ScrollDown => true,
                    _ => {
                        self.dirty = false;
                        return Vec::new();
                    }
                };
                let at = Position::new(mouse.column, mouse.row);
                let areas = self.areas();
                if areas.tree.is_some_and(|a| a.contains(at)) {
                    self.move_tree_selection(if down { 1 } else { -1 });
                } else {
                    self.scroll_chat(if down { WHEEL_ROWS as isize } else { -(WHEEL_ROWS as isize) });
                }
                Vec::new()
            }
            Event::FocusGained | Event::FocusLost => {
                self.dirty = false;
                Vec::new()
            }
        }
    }

    /// Rows of the chat's text area.
    fn chat_height(&self) -> usize {
        self.areas().chat.map_or(1, |a| usize::from(inner(a).height).max(1))
    }

    /// Scrolls the chat by `delta` rows (negative: up).
    pub(super) fn scroll_chat(&mut self, delta: isize) {
        let height = self.chat_height();
        let total = self.transcript.total_rows();
        let max_top = total.saturating_sub(height);
        let top = self.chat_top(height);
        let next = top.saturating_add_signed(delta).min(max_top);
        self.chat.top = next;
        self.chat.follow = next >= max_top;
        if self.chat.follow {
            self.chat.unseen = false;
        }
    }

    fn scroll_chat_to(&mut self, bottom: bool) {
        self.chat.follow = bottom;
        self.chat.top = 0;
        if bottom {
            self.chat.unseen = false;
        }
    }

    fn key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let action = self.config.keymap.action(&key);
        if !self.approvals.is_empty() {
            return self.approval_key(key, action);
        }
        if self.overlay.is_some() {
            return self.overlay_key(key, action);
        }
        if let Some(action) = action
            && let Some(effects) = self.global_action(action)
        {
            return effects;
        }
        match self.focus {
            Focus::Composer => self.composer_key(key, action),
            Focus::Chat => self.chat_key(key),
            Focus::Tree => self.tree_key(key),
            Focus::Dashboard => self.dashboard_key(key),
        }
    }

    fn approval_key(&mut self, key: KeyEvent, action: Option<Action>) -> Vec<Effect> {
        let decision = match (key.code, action) {
            (KeyCode::Char('y' | 'Y'), _) => ApprovalDecision::Allow,
            (KeyCode::Char('a' | 'A'), _) => ApprovalDecision::AllowSession,
            (KeyCode::Char('n' | 'N'), _) | (_, Some(Action::Interrupt)) => ApprovalDecision::Deny,
            (_, Some(Action::Cancel)) => return self.cancel(),
            _ => {
                self.dirty = false;
                return Vec::new();
            }
        };
        match self.approvals.pop_front() {
            Some(request) => vec![Effect::Approve {
                id: request.id,
                decision,
            }],
            None => Vec::new(),
        }
    }

    fn overlay_key(&mut self, key: KeyEvent, action: Option<Action>) -> Vec<Effect> {
        let Some(overlay) = self.overlay.as_mut() else {
            return Vec::new();
        };
        if action == Some(Action::Interrupt) || key.code == KeyCode::Char('q') {
            self.overlay = None;
            return Vec::new();
        }
        if action == Some(Action::Cancel) {
            self.overlay = None;
            return self.cancel();
        }
        match overlay {
            Overlay::Help { scroll } | Overlay::Detail { scroll, .. } => {
                let page = self.size.height.saturating_sub(8).max(1);
                *scroll = match key.code {
                    KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
                    KeyCode::PageUp => scroll.saturating_sub(page),
                    KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_add(page),
                    KeyCode::Home | KeyCode::Char('g') => 0,
                    _ if action == Some(Action::Help) => {
                        self.overlay = None;
                        return Vec::new();
                    }
                    _ => *scroll,
                };
                Vec::new()
            }
            Overlay::ConfirmDelete { id, .. } => {
                let id = id.clone();
                self.overlay = None;
                match key.code {
                    KeyCode::Char('y' | 'Y') | KeyCode::Enter => vec![Effect::DeleteCron(id)],
                    _ => Vec::new(),
                }
            }
        }
    }

    /// Actions that work whatever has focus; `None` lets the focused pane have the key.
    fn global_action(&mut self, action: Action) -> Option<Vec<Effect>> {
        let effects = match action {
            Action::Interrupt => self.escape(),
            Action::Cancel => self.cancel(),
            Action::Quit if self.composer.is_blank() => vec![Effect::Quit],
            Action::Suspend => vec![Effect::Suspend],
            Action::FocusNext | Action::FocusPrev if self.composer.completion.is_some() && self.focus == Focus::Composer => {
                if action == Action::FocusNext {
                    self.composer.accept_completion();
                    self.refresh_completion();
                } else {
                    self.composer.move_selection(-1);
                }
                Vec::new()
            }
            Action::FocusNext | Action::FocusPrev => {
                self.focus = self.focus.cycle(action == Action::FocusNext);
                self.calls.refresh_rows();
                if self.focus == Focus::Tree && self.tree_selected.is_none() {
                    self.tree_selected = self.calls.call_ids().last().map(|s| (*s).to_owned());
                }
                Vec::new()
            }
            Action::PullQueue => vec![Effect::RestoreQueued],
            Action::ToggleThinking => {
                self.expand_thinking = !self.expand_thinking;
                self.transcript.invalidate_all();
                Vec::new()
            }
            Action::Help => {
                self.overlay = Some(Overlay::Help { scroll: 0 });
                Vec::new()
            }
            Action::Editor => vec![Effect::OpenEditor(self.composer.text())],
            Action::PageUp => {
                let page = self.chat_height().saturating_sub(1).max(1);
                self.scroll_chat(-(page as isize));
                Vec::new()
            }
            Action::PageDown => {
                let page = self.chat_height().saturating_sub(1).max(1);
                self.scroll_chat(page as isize);
                Vec::new()
            }
            Action::ToggleMouse => {
                self.mouse_capture = !self.mouse_capture;
                let state = if self.mouse_capture { "on: wheel scrolls" } else { "off: select text freely" };
                self.set_hint(format!("mouse capture {state}"), HINT);
                vec![Effect::SetMouseCapture(self.mouse_capture)]
            }
            Action::Submit | Action::Newline | Action::Quit => return None,
        };
        Some(effects)
    }

    /// Esc: close the popup; steer with text; interrupt when empty (not right after a steer).
    fn escape(&mut self) -> Vec<Effect> {
        if self.composer.completion.is_some() {
            self.composer.dismiss_completion();
            return Vec::new();
        }
        if !self.running {
            // Idle, Esc only brings the focus back to the composer.
            self.focus = Focus::Composer;
            return Vec::new();
        }
        if !self.composer.is_blank() {
            let text = self.take_composer();
            self.last_steer = Some(self.now);
            self.set_hint("steering sent · Esc again to interrupt", HINT);
            return vec![Effect::Steer(text)];
        }
        if self.last_steer.is_some_and(|t| self.now.duration_since(t) < DOUBLE_PRESS) {
            self.set_hint("Esc again to interrupt", HINT);
            return Vec::new();
        }
        self.last_steer = None;
        self.set_hint("interrupted · queued messages are back in the composer", HINT);
        vec![Effect::RestoreQueued, Effect::Abort]
    }

    /// Ctrl+C: interrupt when running, else clear; twice within a second quits.
    fn cancel(&mut self) -> Vec<Effect> {
        if self.last_cancel.is_some_and(|t| self.now.duration_since(t) < DOUBLE_PRESS) {
            return vec![Effect::Quit];
        }
        self.last_cancel = Some(self.now);
        let theme = self.config.theme.clone();
        let quit_key = self.config.keymap.label(Action::Cancel);
        if self.running {
            self.set_hint(format!("interrupted · {quit_key} again to quit"), HINT);
            return vec![Effect::RestoreQueued, Effect::Abort];
        }
        self.composer.clear(&theme);
        self.set_hint(format!("{quit_key} again to quit"), DOUBLE_PRESS);
        Vec::new()
    }

    fn take_composer(&mut self) -> String {
        let text = self.composer.text();
        let theme = self.config.theme.clone();
        self.composer.clear(&theme);
        text.trim_end().to_owned()
    }

    fn composer_key(&mut self, key: KeyEvent, action: Option<Action>) -> Vec<Effect> {
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
        let plain = !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Up if plain && self.composer.completion.is_some() => self.composer.move_selection(-1),
            KeyCode::Down if plain && self.composer.completion.is_some() => self.composer.move_selection(1),
            KeyCode::Up if plain && self.composer.on_first_line() && self.composer.history_prev(&theme) => {}
            KeyCode::Down if plain && self.composer.on_last_line() && self.composer.history_next(&theme) => {}
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
        effects
    }

    /// Enter: a command runs; a prompt starts a run, or queues a follow-up while running.
    fn submit(&mut self) -> Vec<Effect> {
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
        // A leading space lets a message start with `/` without being a command.
        let text = match text.strip_prefix(' ') {
            Some(rest) if rest.starts_with('/') => rest.to_owned(),
            _ => text,
        };
        self.chat.follow = true;
        self.chat.unseen = false;
        effects.push(if self.running { Effect::FollowUp(text) } else { Effect::Prompt(text) });
        effects
    }

    fn command(&mut self, command: Result<Command, String>) -> Vec<Effect> {
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
                self.notice(NoticeLevel::Info, format!("Model set to {name} from the next run on."));
                self.model = name.clone();
                vec![Effect::SetModel(name)]
            }
            Command::Thinking(level) => {
                self.thinking = level;
                self.notice(NoticeLevel::Info, format!("Thinking set to {level:?} from the next run on.").to_lowercase());
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
                self.notice(NoticeLevel::Info, format!("Tool calls run {mode:?} from the next run on.").to_lowercase());
                vec![Effect::SetToolExecution(mode)]
            }
            Command::Copy { code } => {
                let answer = self.transcript.last_answer();
                let text = if code { answer.as_deref().and_then(last_code_block) } else { answer.clone() };
                match text {
                    Some(text) => {
                        self.set_hint("copied to the clipboard (OSC 52)", HINT);
                        vec![Effect::Copy(text)]
                    }
                    None => {
                        let what = if code { "code block" } else { "answer" };
                        self.notice(NoticeLevel::Warning, format!("There is no {what} to copy yet."));
                        Vec::new()
                    }
                }
            }
            Command::New => vec![Effect::NewSession],
            Command::Quit => vec![Effect::Quit],
        }
    }

    fn chat_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll_chat(-1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll_chat(1),
            KeyCode::Home | KeyCode::Char('g') => self.scroll_chat_to(false),
            KeyCode::End | KeyCode::Char('G') => self.scroll_chat_to(true),
            _ => return self.type_into_composer(key),
        }
        Vec::new()
    }

    /// A printable key typed in another pane goes to the composer.
    fn type_into_composer(&mut self, key: KeyEvent) -> Vec<Effect> {
        if let KeyCode::Char(_) = key.code
            && !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
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

    fn tree_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        self.calls.refresh_rows();
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.move_tree_selection(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_tree_selection(1),
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

    fn open_detail(&mut self, call_id: String) -> Vec<Effect> {
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

    fn dashboard_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let n = self.subagents.len() + self.cron.len();
        let selected = self.dashboard_selected;
        let subagent = self.subagents.get(selected);
        let job = selected.checked_sub(self.subagents.len()).and_then(|i| self.cron.get(i));
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.dashboard_selected = selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.dashboard_selected = (selected + 1).min(n.saturating_sub(1)),
            KeyCode::Char('x') if subagent.is_some() => {
                let id = subagent.map(|s| s.id.clone()).unwrap_or_default();
                self.set_hint(format!("cancelling subagent {id}"), HINT);
                return vec![Effect::CancelSubagent(id)];
            }
            KeyCode::Char('p') if job.is_some() => {
                let (id, paused) = job.map(|j| (j.id.clone(), j.paused)).unwrap_or_default();
                return vec![if paused { Effect::ResumeCron(id) } else { Effect::PauseCron(id) }];
            }
            KeyCode::Char('d') if job.is_some() => {
                let (id, name) = job.map(|j| (j.id.clone(), j.name.clone())).unwrap_or_default();
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
