//! Where each message goes: runtime reports to the part they concern, terminal input
//! through the one routing order for keys (approval → overlay → global → focused part),
//! and the actions that work whatever has focus.

use super::{App, DOUBLE_PRESS, HINT};
use crate::agent::NoticeLevel;
use crate::tui::chat::EntryKind;
use crate::tui::keymap::Action;
use crate::tui::layout::Focus;
use crate::tui::msg::{Effect, Msg};
use crate::tui::overlay::Overlay;
use crate::tui::part::Handled;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use ratatui::layout::{Position, Rect};

/// Rows one wheel notch scrolls.
const WHEEL_ROWS: isize = 3;

impl App {
    /// Hands `msg` (anything but a frame) to the parts it concerns.
    pub(super) fn route(&mut self, msg: Msg) -> Handled {
        let now = self.now;
        match msg {
            Msg::Term(event) => self.terminal_event(event),
            Msg::Agent(event) => self.agent_event(event),
            Msg::Subagent {
                parent_call_id,
                event,
            } => {
                self.tools.apply_nested(&parent_call_id, &event, now);
                Handled::changed()
            }
            Msg::Subagents(rows) => self.dashboard.set_subagents(rows, now),
            Msg::SubagentUpdate(row) => self.dashboard.update_subagent(row, now),
            Msg::CronJobs(rows) => self.dashboard.set_cron(rows),
            Msg::PendingNotifications(n) => self.dashboard.set_pending(n),
            Msg::Outbound(message) => self.chat.push(EntryKind::Outbound(message)),
            Msg::Approval(request) => self.approvals.push(request),
            Msg::QueueRestored(texts) => self.restore_to_composer(texts),
            Msg::Highlighted { key, lines } => {
                for entry in self.highlights.arrived(key, lines) {
                    self.chat.highlighted(entry);
                }
                Handled::changed()
            }
            Msg::HistoryLoaded(entries) => self.composer.load_history(entries),
            Msg::WorkspaceFiles(files) => self.composer.set_files(files),
            Msg::ModelsListed(models) => self.composer.set_server_models(models),
            Msg::EditorDone(Ok(text)) => {
                self.composer.set_text(text.trim_end_matches('\n'));
                Handled::changed()
            }
            Msg::EditorDone(Err(why)) => self.chat.notice(NoticeLevel::Error, why),
            Msg::SessionLoaded(loaded) => self.load_session(*loaded),
            Msg::Sessions(rows) => self.show_sessions(rows),
            Msg::SessionLocked { path, id } => {
                self.session.switching = false;
                self.overlays.replace(Overlay::ConfirmFork { path, id })
            }
            Msg::SessionFailed(text) => {
                self.session.switching = false;
                self.chat.notice(NoticeLevel::Error, text)
            }
            Msg::SessionSave(failure) => self.saving(failure),
            Msg::Notice(level, text) => self.chat.notice(level, text),
            Msg::SkillsAttached { text, result } => self.skills_attached(text, result),
            Msg::ImagesLoaded { text, result } => self.images_loaded(text, result),
            Msg::Tick => {
                let animated = self.busy();
                if animated {
                    self.spinner = self.spinner.wrapping_add(1);
                }
                Handled::changed_if(animated || self.dashboard.counts_down())
            }
            Msg::Frame => Handled::ignored(),
        }
    }

    /// Puts texts taken back out of the queues into the composer, and focuses it.
    pub(super) fn restore_to_composer(&mut self, texts: Vec<String>) -> Handled {
        if self.composer.restore(texts) {
            self.focus = Focus::Composer;
        }
        Handled::changed()
    }

    fn terminal_event(&mut self, event: Event) -> Handled {
        match event {
            Event::Key(key) if key.kind == KeyEventKind::Release => Handled::ignored(),
            Event::Key(key) => self.key(key),
            Event::Paste(text) => {
                if !self.overlays.is_empty() || !self.approvals.is_empty() {
                    return Handled::unchanged();
                }
                self.focus = Focus::Composer;
                self.composer.paste(&text)
            }
            Event::Resize(w, h) => {
                self.size = Rect::new(0, 0, w, h);
                Handled::changed()
            }
            Event::Mouse(mouse) => {
                let down = match mouse.kind {
                    MouseEventKind::ScrollUp => false,
                    MouseEventKind::ScrollDown => true,
                    _ => return Handled::ignored(),
                };
                let at = Position::new(mouse.column, mouse.row);
                if self.areas().tree.is_some_and(|a| a.contains(at)) {
                    return self.tools.wheel(down);
                }
                let rows = if down { WHEEL_ROWS } else { -WHEEL_ROWS };
                self.chat.scroll_by(rows, self.chat_height());
                Handled::changed()
            }
            Event::FocusGained | Event::FocusLost => Handled::ignored(),
        }
    }

    /// A key goes, in this order, to the approval prompt, the open overlay, the global
    /// actions and the focused part; the first that takes it ends the routing. A printable
    /// key that the focused pane does not use is typed into the composer.
    fn key(&mut self, key: KeyEvent) -> Handled {
        let action = self.keymap.action(&key);
        if action != Some(Action::Interrupt) {
            // Only Esc right after Esc is a double press; anything typed between ends it.
            self.last_steer = None;
        }
        let handled = self.approvals.handle_key(&key, action);
        if handled.consumed {
            return handled;
        }
        let handled = self
            .overlays
            .handle_key(&key, action, self.size, self.session.id.as_deref());
        if handled.consumed {
            return handled;
        }
        if let Some(action) = action {
            let handled = self.global(action);
            if handled.consumed {
                return handled;
            }
        }
        let handled = match self.focus {
            Focus::Composer => self.composer.handle_key(&key, action),
            Focus::Chat => self.chat.handle_key(&key, self.chat_height()),
            Focus::Tree => self.tools.handle_key(&key),
            Focus::Dashboard => self.dashboard.handle_key(&key),
        };
        if handled.consumed {
            return handled;
        }
        let printable = matches!(key.code, KeyCode::Char(_))
            && !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if printable {
            self.focus = Focus::Composer;
            return self.composer.handle_key(&key, None);
        }
        Handled::ignored()
    }

    /// Actions that work whatever has focus; an ignored one lets the focused part have
    /// the key.
    fn global(&mut self, action: Action) -> Handled {
        match action {
            Action::Interrupt => self.escape(),
            Action::Cancel => self.cancel(),
            Action::Quit if self.composer.is_blank() => Handled::changed().with(Effect::Quit),
            Action::Suspend => Handled::changed().with(Effect::Suspend),
            Action::FocusNext | Action::FocusPrev
                if self.composer.completion_open() && self.focus == Focus::Composer =>
            {
                if action == Action::FocusNext {
                    self.composer.accept_completion();
                } else {
                    self.composer.move_selection(-1);
                }
                Handled::changed()
            }
            Action::FocusNext | Action::FocusPrev => {
                self.focus = self.focus.cycle(action == Action::FocusNext);
                if self.focus == Focus::Tree {
                    self.tools.focused();
                }
                Handled::changed()
            }
            Action::PullQueue => Handled::changed().with(Effect::RestoreQueued),
            Action::ToggleThinking => self.chat.toggle_thinking(),
            Action::Help => self.overlays.push(Overlay::Help { scroll: 0 }),
            Action::Editor => Handled::changed().with(Effect::OpenEditor(self.composer.text())),
            Action::PageUp | Action::PageDown => {
                let page = self.chat_height().saturating_sub(1).max(1) as isize;
                let rows = if action == Action::PageUp {
                    -page
                } else {
                    page
                };
                self.chat.scroll_by(rows, self.chat_height());
                Handled::changed()
            }
            Action::ToggleMouse => {
                self.mouse_capture = !self.mouse_capture;
                let state = if self.mouse_capture {
                    "on: wheel scrolls"
                } else {
                    "off: select text freely"
                };
                self.hint(format!("mouse capture {state}"), HINT)
                    .with(Effect::SetMouseCapture(self.mouse_capture))
            }
            Action::Submit | Action::Newline | Action::Quit => Handled::ignored(),
        }
    }

    /// Esc: close the popup; steer with text; interrupt when empty (not right after a steer).
    fn escape(&mut self) -> Handled {
        if self.composer.completion_open() {
            self.composer.dismiss_completion();
            return Handled::changed();
        }
        if !self.status.running() {
            // Idle, Esc only brings the focus back to the composer.
            self.focus = Focus::Composer;
            return Handled::changed();
        }
        if !self.composer.is_blank() {
            let text = self.composer.take();
            self.last_steer = Some(self.now);
            return self
                .hint("steering sent · Esc again to interrupt", HINT)
                .with(Effect::Steer(text));
        }
        if self
            .last_steer
            .is_some_and(|t| self.now.duration_since(t) < DOUBLE_PRESS)
        {
            return self.hint("Esc again to interrupt", HINT);
        }
        self.last_steer = None;
        self.hint(
            "interrupted · queued messages are back in the composer",
            HINT,
        )
        .with(Effect::RestoreQueued)
        .with(Effect::Abort)
    }

    /// Ctrl+C: interrupt when running, else clear; twice within a second quits.
    pub(super) fn cancel(&mut self) -> Handled {
        if self
            .last_cancel
            .is_some_and(|t| self.now.duration_since(t) < DOUBLE_PRESS)
        {
            return Handled::changed().with(Effect::Quit);
        }
        self.last_cancel = Some(self.now);
        let quit_key = self.keymap.label(Action::Cancel);
        if self.status.running() {
            return self
                .hint(format!("interrupted · {quit_key} again to quit"), HINT)
                .with(Effect::RestoreQueued)
                .with(Effect::Abort);
        }
        self.composer.clear();
        self.hint(format!("{quit_key} again to quit"), DOUBLE_PRESS)
    }
}
