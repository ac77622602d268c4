//! `App::update`: terminal input and internal messages to model changes and effects.
//! No I/O and no awaits here; agent events are handled in `events.rs`.

use super::app::{App, DOUBLE_PRESS, HINT, Overlay, SPINNER};
use super::keymap::Action;
use super::layout::{Focus, inner};
use super::msg::{Effect, Msg};
use crate::agent::NoticeLevel;
use crate::tools::exec::ApprovalDecision;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, MouseEventKind};
use ratatui::layout::{Position, Rect};
use std::time::Instant;

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
        if matches!(msg, Msg::Term(_)) {
            self.input_changed = true;
        }
        match msg {
            Msg::Term(event) => self.terminal_event(event),
            Msg::Agent(event) => self.agent_event(event),
            Msg::Subagent {
                parent_call_id,
                event,
            } => {
                self.calls.apply_nested(&parent_call_id, &event, now);
                Vec::new()
            }
            Msg::Subagents(rows) => {
                self.subagents_seen = vec![now; rows.len()];
                self.subagents = rows;
                self.clamp_dashboard();
                Vec::new()
            }
            Msg::SubagentUpdate(row) => {
                match self.subagents.iter().position(|r| r.id == row.id) {
                    Some(i) => {
                        self.subagents[i] = row;
                        self.subagents_seen[i] = now;
                    }
                    None => {
                        self.subagents.push(row);
                        self.subagents_seen.push(now);
                    }
                }
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
            Msg::McpServer(server) => {
                match self.mcp_servers.iter_mut().find(|s| s.name == server.name) {
                    Some(slot) => *slot = server,
                    None => self.mcp_servers.push(server),
                }
                Vec::new()
            }
            Msg::Outbound(message) => {
                self.transcript
                    .push(super::entry::EntryKind::Outbound(message));
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
            Msg::ModelsListed(models) => {
                if !models.is_empty() {
                    self.server_models = Some(models);
                    self.refresh_completion();
                }
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
            Msg::SessionLoaded(loaded) => self.load_session(*loaded),
            Msg::Sessions(rows) => {
                self.show_sessions(rows);
                Vec::new()
            }
            Msg::SessionLocked { path, id } => {
                self.switching_session = false;
                self.overlay = Some(Overlay::ConfirmFork { path, id });
                Vec::new()
            }
            Msg::SessionFailed(text) => {
                self.switching_session = false;
                self.notice(NoticeLevel::Error, text);
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
        self.transcript
            .push(super::entry::EntryKind::Notice(level, text.into()));
    }

    fn clamp_dashboard(&mut self) {
        let n = self.subagents.len() + self.cron.len();
        self.dashboard_selected = self.dashboard_selected.min(n.saturating_sub(1));
    }

    pub(super) fn restore_to_composer(&mut self, texts: Vec<String>) {
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

    pub(super) fn refresh_completion(&mut self) {
        let mut models = self
            .server_models
            .clone()
            .unwrap_or_else(|| self.config.models.clone());
        if !models.contains(&self.model) {
            models.insert(0, self.model.clone());
        }
        self.composer
            .refresh_completion(self.files.as_deref(), &models);
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
                    self.scroll_chat(if down {
                        WHEEL_ROWS as isize
                    } else {
                        -(WHEEL_ROWS as isize)
                    });
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
        self.areas()
            .chat
            .map_or(1, |a| usize::from(inner(a).height).max(1))
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

    pub(super) fn scroll_chat_to(&mut self, bottom: bool) {
        self.chat.follow = bottom;
        self.chat.top = 0;
        if bottom {
            self.chat.unseen = false;
        }
    }

    fn key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let action = self.config.keymap.action(&key);
        if action != Some(Action::Interrupt) {
            // Only Esc right after Esc is a double press; anything typed between ends it.
            self.last_steer = None;
        }
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
            Overlay::Sessions { .. } => self.sessions_key(key.code),
            Overlay::ConfirmFork { .. } => self.fork_key(key.code),
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
            Action::FocusNext | Action::FocusPrev
                if self.composer.completion.is_some() && self.focus == Focus::Composer =>
            {
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
                let state = if self.mouse_capture {
                    "on: wheel scrolls"
                } else {
                    "off: select text freely"
                };
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
        if self
            .last_steer
            .is_some_and(|t| self.now.duration_since(t) < DOUBLE_PRESS)
        {
            self.set_hint("Esc again to interrupt", HINT);
            return Vec::new();
        }
        self.last_steer = None;
        self.set_hint(
            "interrupted · queued messages are back in the composer",
            HINT,
        );
        vec![Effect::RestoreQueued, Effect::Abort]
    }

    /// Ctrl+C: interrupt when running, else clear; twice within a second quits.
    fn cancel(&mut self) -> Vec<Effect> {
        if self
            .last_cancel
            .is_some_and(|t| self.now.duration_since(t) < DOUBLE_PRESS)
        {
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
}
