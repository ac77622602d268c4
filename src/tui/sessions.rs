//! Sessions in the client (model side): rebuilding the chat, the tool tree and the usage
//! totals from a loaded history, the `/sessions` picker and the "open a copy?" prompt.

use super::app::{App, Overlay};
use super::layout::Focus;
use super::msg::{Effect, LoadedSession, SessionRow};
use crate::agent::{AgentEvent, Message, NoticeLevel, ToolResult};
use crossterm::event::KeyCode;

impl App {
    /// Replaces the conversation shown with `loaded`'s history.
    pub(super) fn load_session(&mut self, loaded: LoadedSession) -> Vec<Effect> {
        self.switching_session = false;
        self.clear_conversation();
        self.overlay = None;
        self.session_id = loaded.id.clone();
        let count = loaded.messages.len();
        for message in loaded.messages {
            self.replay(message);
        }
        self.turn = self.calls.turn_count();
        self.calls.settle();
        let ids: Vec<String> = self.cards.keys().cloned().collect();
        for id in ids {
            self.refresh_card(&id);
        }
        for note in loaded.notes {
            self.notice(NoticeLevel::Info, note);
        }
        let short = loaded.id.as_deref().map_or("", |id| &id[..id.len().min(8)]);
        match (loaded.resumed, loaded.id.is_some()) {
            (true, _) => self.notice(
                NoticeLevel::Info,
                format!("Resumed session {short}: {count} messages."),
            ),
            // A copy: its note says where the messages come from.
            _ if loaded.quiet || count > 0 => {}
            (false, true) => self.notice(NoticeLevel::Info, format!("New session {short}.")),
            (false, false) => self.notice(
                NoticeLevel::Info,
                "New session: the conversation was cleared (nothing is recorded: --no-session).",
            ),
        }
        if !loaded.queued.is_empty() {
            self.notice(
                NoticeLevel::Info,
                "Messages that were still queued are back in the composer.",
            );
            self.restore_to_composer(loaded.queued);
        }
        vec![Effect::SessionReady]
    }

    /// Shows a recorded message as if it had just happened (no streaming, no timings).
    fn replay(&mut self, message: Message) {
        match message {
            Message::Assistant(m) => {
                self.calls.turn_started();
                self.message_end(Message::Assistant(m));
            }
            Message::ToolResult(r) => {
                let event = AgentEvent::ToolExecutionEnd {
                    tool_call_id: r.tool_call_id,
                    tool_name: r.tool_name,
                    result: ToolResult {
                        content: r.content,
                        details: r.details,
                        is_error: r.is_error,
                    },
                    is_error: r.is_error,
                };
                self.calls.apply(&event, self.now);
            }
            other => self.message_end(other),
        }
    }

    fn clear_conversation(&mut self) {
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
    }

    /// The picker's list arrived.
    pub(super) fn show_sessions(&mut self, rows: Vec<SessionRow>) {
        if rows.is_empty() {
            self.notice(
                NoticeLevel::Info,
                "There are no sessions in this workspace yet.",
            );
            return;
        }
        let selected = rows
            .iter()
            .position(|r| Some(&r.id) != self.session_id.as_ref())
            .unwrap_or(0);
        self.overlay = Some(Overlay::Sessions { rows, selected });
    }

    /// Keys in the picker: move, Enter opens, anything else closes it.
    pub(super) fn sessions_key(&mut self, code: KeyCode) -> Vec<Effect> {
        let Some(Overlay::Sessions { rows, selected }) = self.overlay.as_mut() else {
            return Vec::new();
        };
        let last = rows.len().saturating_sub(1);
        // The rows the picker shows: the screen less its borders and header.
        let page = usize::from(self.size.height.saturating_sub(3).max(1));
        *selected = match code {
            KeyCode::Up | KeyCode::Char('k') => selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => (*selected + 1).min(last),
            KeyCode::PageUp => selected.saturating_sub(page),
            KeyCode::PageDown => (*selected + page).min(last),
            KeyCode::Home => 0,
            KeyCode::End => last,
            KeyCode::Enter => {
                let row = rows[*selected].clone();
                self.overlay = None;
                if Some(&row.id) == self.session_id.as_ref() {
                    self.notice(NoticeLevel::Info, "That is the current session.");
                    return Vec::new();
                }
                return self.open_session(row.path, false);
            }
            _ => {
                // Esc, q and Ctrl+C close the picker before it gets here.
                self.dirty = false;
                return Vec::new();
            }
        };
        Vec::new()
    }

    /// Keys in the "open a copy?" prompt.
    pub(super) fn fork_key(&mut self, code: KeyCode) -> Vec<Effect> {
        let Some(Overlay::ConfirmFork { path, .. }) = self.overlay.take() else {
            return Vec::new();
        };
        match code {
            KeyCode::Char('y' | 'Y') | KeyCode::Enter => self.open_session(path, true),
            _ => Vec::new(),
        }
    }

    /// Switching while a run is active would tear its history apart: refused.
    fn open_session(&mut self, path: std::path::PathBuf, fork: bool) -> Vec<Effect> {
        if self.switching_session {
            return Vec::new();
        }
        if self.running {
            self.notice(
                NoticeLevel::Warning,
                "A run is active: wait for it to finish or interrupt it (Esc) before switching sessions.",
            );
            return Vec::new();
        }
        self.focus = Focus::Composer;
        self.switching_session = true;
        vec![Effect::OpenSession { path, fork }]
    }

    /// `/new`, refused while a run is active like any switch.
    pub(super) fn new_session(&mut self) -> Vec<Effect> {
        if self.switching_session {
            return Vec::new();
        }
        if self.running {
            self.notice(
                NoticeLevel::Warning,
                "A run is active: wait for it to finish or interrupt it (Esc) before starting a new session.",
            );
            return Vec::new();
        }
        self.switching_session = true;
        vec![Effect::NewSession]
    }
}
