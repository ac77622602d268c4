//! Where each message goes: runtime reports to the part they concern, terminal input
//! through the one routing order for keys (approval → overlay → global → focused part),
//! and the actions that work whatever has focus.

use super::App;

use crate::part::HINT;

use crate::chat::Cell;
use crate::chat::EntryKind;
use crate::layout::{self, Focus, PaneMode, Side};
use crate::msg::{Effect, Msg, QueuedText};
use crate::overlay::Overlay;
use crate::part::Handled;
use claw_agent::NoticeLevel;
use claw_runtime::keymap::Action;
use claw_tools::exec::ApprovalDecision;
use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

/// A notification's first line, shortened for a one-line note: `Cron job "build"
/// (cron-1) fired` reads `cron "build" fired`.
fn brief(summary: &str) -> String {
    let lowered = summary
        .strip_prefix("Cron job ")
        .map(|rest| format!("cron {rest}"))
        .or_else(|| {
            summary
                .strip_prefix("Subagent ")
                .map(|rest| format!("subagent {rest}"))
        })
        .unwrap_or_else(|| summary.to_owned());
    // The id in parentheses after the quoted name.
    match (lowered.find(" ("), lowered.find(") ")) {
        (Some(open), Some(close)) if open < close => {
            format!("{}{}", &lowered[..open], &lowered[close + 1..])
        }
        _ => lowered,
    }
}

/// Rows one wheel notch scrolls.
const WHEEL_ROWS: isize = 3;

impl App {
    /// Hands `msg` (anything but a frame) to the parts it concerns.
    pub(super) fn route(&mut self, msg: Msg) -> Handled {
        let now = self.now;
        match msg {
            Msg::Term(event) => self.terminal_event(event),
            Msg::Agent(event) => self.agent_event(event),
            Msg::Shell(crate::shell::Msg::Event(event)) => self.shell_event(event),
            Msg::Sessions(msg) => self.sessions_told(msg),
            Msg::ThemeLoaded(Ok(theme)) => {
                self.theme = *theme;
                self.chat.restyle();
                self.hint("theme changed", HINT)
            }
            Msg::ThemeLoaded(Err(why)) => self.chat.notice(NoticeLevel::Warning, why.to_string()),
            Msg::Subagents(msg) => self.subagents_told(msg, now),
            Msg::CronJobs(rows) => self.dashboard.set_cron(rows),
            Msg::CronChanges { changed, removed } => self.dashboard.change_cron(changed, &removed),
            Msg::PendingNotifications(n) => self.dashboard.set_pending(n),
            Msg::SettingsSaved(outcome) => self.settings_saved(outcome),
            Msg::McpServer(server) => {
                let failure = self.dashboard.mcp_failure_to_tell(&server);
                let handled = self.dashboard.update_mcp(server);
                match failure {
                    Some(text) => handled.and(self.chat.notice(NoticeLevel::Warning, text)),
                    None => handled,
                }
            }
            Msg::AskTrust(request) => self.overlays.ask_trust(request),
            Msg::Parked {
                session_id,
                summary,
            } => {
                let short = &session_id[..session_id.len().min(8)];
                let said = self.chat.notice_counted(
                    NoticeLevel::Info,
                    format!(
                        "{} for session {short} · /sessions to open",
                        brief(&summary)
                    ),
                );
                said.and(self.dashboard.parked(&session_id))
            }
            Msg::Outbound(message) => self.chat.push(EntryKind::Outbound(message)),
            Msg::Approval(request) => self.approvals.push(request),
            Msg::Attached(clients) => self.dashboard.set_attached(clients),
            Msg::ApprovalAnswered { id, decision, by } => {
                match self.approvals.answered_elsewhere(&id) {
                    Some(request) => {
                        let how = match decision {
                            ApprovalDecision::Allow => "allowed",
                            ApprovalDecision::AllowSession => "allowed for the session",
                            ApprovalDecision::Deny => "denied",
                        };
                        let what = claw_text::one_line(&request.tool_name, 40);
                        self.chat.notice(
                            NoticeLevel::Info,
                            format!("{by} {how} the {what} call that waited for approval"),
                        )
                    }
                    None => Handled::unchanged(),
                }
            }
            Msg::QueueRestored(texts) => {
                // The answer to an interrupt: the queued messages, if there were any.
                let count = texts.len();
                let restored = self.restore_to_composer(texts);
                match count {
                    0 => restored,
                    1 => restored.and(self.hint(
                        "interrupted · the queued message is back in the composer",
                        HINT,
                    )),
                    n => restored.and(self.hint(
                        format!("interrupted · {n} queued messages are back in the composer"),
                        HINT,
                    )),
                }
            }
            Msg::Highlighted { key, lines } => {
                for entry in self.highlights.arrived(key, lines) {
                    // The entry is the main chat's, or the subagent's one shown.
                    self.chat.highlighted(entry);
                    if let Some(chat) = self.subagents.shown_mut() {
                        chat.highlighted(entry);
                    }
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
            Msg::EditorDone(Err(why)) => self.chat.notice(NoticeLevel::Error, why.to_string()),
            Msg::Inspector(msg) => self.inspector_answered(msg),
            Msg::Notice(level, text) => self.chat.notice(level, text),
            Msg::BackgroundFailed(failure) => {
                self.chat.notice(NoticeLevel::Error, failure.to_string())
            }
            Msg::SkillsAttached { text, result } => self.skills_attached(text, result),
            Msg::Checkpoints(msg) => self.checkpoints(msg),
            Msg::PromptBlocked { text, reason } => self.prompt_blocked(text, reason),
            Msg::ImagesLoaded { text, result } => self.images_loaded(text, result),
            Msg::Tick => {
                let animated = self.busy();
                if animated {
                    self.spinner = self.spinner.wrapping_add(1);
                }
                let main = animated && self.chat.tick();
                let shown = animated && self.subagents.shown_mut().is_some_and(|c| c.tick());
                let cards = main || shown;
                Handled::changed_if(animated || cards || self.dashboard_counts_down())
            }
            Msg::Frame => Handled::ignored(),
        }
    }

    /// Puts texts taken back out of the queues into the composer, and focuses it.
    pub(super) fn restore_to_composer(&mut self, texts: Vec<QueuedText>) -> Handled {
        if self.composer.restore(texts) {
            self.focus = Focus::Composer;
        }
        Handled::changed()
    }

    /// A Shift+Enter that arrived as one shows the terminal tells it from Enter (what
    /// the start could not always know: modifyOtherKeys through tmux), so the keys line
    /// may offer it from now on.
    fn learn_shift_enter(&mut self, key: &KeyEvent) -> Handled {
        if self.shift_enter
            || key.code != KeyCode::Enter
            || !key.modifiers.contains(KeyModifiers::SHIFT)
        {
            return Handled::unchanged();
        }
        self.shift_enter = true;
        Handled::changed()
    }

    fn terminal_event(&mut self, event: Event) -> Handled {
        match event {
            Event::Key(key) if key.kind == KeyEventKind::Release => Handled::ignored(),
            Event::Key(key) => {
                // Anything but the quit key itself ends a first press's promise.
                let ended = if self.keymap.action(&key) == Some(Action::Cancel) {
                    Handled::unchanged()
                } else {
                    self.end_quit_window()
                };
                ended.and(self.learn_shift_enter(&key)).and(self.key(key))
            }
            Event::Paste(text) => {
                let ended = self.end_quit_window();
                if !self.overlays.is_empty() || !self.approvals.is_empty() {
                    return ended;
                }
                self.focus = Focus::Composer;
                let chips = self.composer.chips();
                let pasted = ended.and(self.composer.paste(&text));
                if self.composer.chips() == chips {
                    return pasted;
                }
                let editor = self.keymap.label(Action::Editor);
                pasted.and(self.hint(
                    format!("a long paste is a chip: sent whole · {editor} shows it in $EDITOR"),
                    HINT,
                ))
            }
            Event::Resize(w, h) => {
                self.size = Rect::new(0, 0, w, h);
                Handled::changed()
            }
            Event::Mouse(mouse) => {
                let down = match mouse.kind {
                    MouseEventKind::ScrollUp => false,
                    MouseEventKind::ScrollDown => true,
                    _ => return self.drag(mouse),
                };
                let at = Position::new(mouse.column, mouse.row);
                if self.areas().tree.is_some_and(|a| a.contains(at)) {
                    return self.tools.wheel(down);
                }
                let rows = if down { WHEEL_ROWS } else { -WHEEL_ROWS };
                let height = self.chat_height();
                self.subagents
                    .chat_mut(&mut self.chat)
                    .scroll_by(rows, height);
                Handled::changed()
            }
            Event::FocusGained | Event::FocusLost => Handled::ignored(),
        }
    }

    /// The left button in the chat: press, drag and release select text and copy it;
    /// dragging past the top or the bottom scrolls.
    fn drag(&mut self, mouse: MouseEvent) -> Handled {
        let Some(text_area) = self.areas().chat.map(layout::inner) else {
            return Handled::ignored();
        };
        let height = self.chat_height();
        let chat = self.subagents.chat_mut(&mut self.chat);
        // Past the edges the selection reaches the first or last row, one more each
        // move as the view scrolls.
        let bottom = text_area.y + height as u16;
        let scroll = if mouse.row < text_area.y {
            -1
        } else if mouse.row >= bottom {
            1
        } else {
            0
        };
        let cell = |chat: &crate::chat::Chat| {
            let y = mouse.row.clamp(text_area.y, bottom.saturating_sub(1)) - text_area.y;
            let x = mouse
                .column
                .saturating_sub(text_area.x)
                .min(text_area.width.saturating_sub(1));
            Cell {
                row: chat.top(height) + usize::from(y),
                column: usize::from(x),
            }
        };
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                let at = Position::new(mouse.column, mouse.row);
                if !text_area.contains(at) || mouse.row >= bottom {
                    return Handled::ignored();
                }
                chat.drag_start(cell(chat))
            }
            MouseEventKind::Drag(MouseButton::Left) => {
                if scroll != 0 {
                    chat.scroll_by(scroll, height);
                }
                chat.drag_to(cell(chat))
            }
            MouseEventKind::Up(MouseButton::Left) => chat.drag_end(),
            _ => Handled::ignored(),
        }
    }

    /// A key goes, in this order, to the approval prompt, the open overlay, the global
    /// actions and the focused part; the first that takes it ends the routing. A printable
    /// key that the focused pane does not use is typed into the composer.
    fn key(&mut self, key: KeyEvent) -> Handled {
        // A key ends a mouse selection (its text was copied when the button came up).
        if self.subagents.chat_mut(&mut self.chat).drag_clear() {
            self.redraw = true;
        }
        let action = self.keymap.action(&key);
        if action != Some(Action::Interrupt) {
            // Only Esc right after Esc is a double press; anything typed between ends it.
            self.last_steer = None;
        }
        let handled = self.approvals.handle_key(&key, action, self.size);
        if handled.consumed {
            return handled;
        }
        let handled = self.overlays.handle_key(
            &key,
            action,
            self.size,
            self.session.id.as_deref(),
            &self.keymap,
        );
        if handled.consumed {
            return handled;
        }
        // The search line, while open, has every key but the ones that quit.
        if self.subagents.chat(&self.chat).find().is_some()
            && !matches!(action, Some(Action::Cancel | Action::Quit))
        {
            return self.subagents.chat_mut(&mut self.chat).find_key(&key);
        }
        if let Some(action) = action {
            let handled = self.global(action);
            if handled.consumed {
                return handled;
            }
        }
        // End on an empty message jumps to the bottom of the chat, wherever it was.
        if self.focus == Focus::Composer && key.code == KeyCode::End && self.composer.is_blank() {
            self.chat.scroll_to(true);
            return Handled::changed();
        }
        let height = self.chat_height();
        self.settle_focus();
        let handled = match self.focus {
            Focus::Composer => self.composer.handle_key(&key, action),
            Focus::Chat => self
                .subagents
                .chat_mut(&mut self.chat)
                .handle_key(&key, height),
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
            // Typing is for the main conversation: its chat comes back.
            self.subagents.close();
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
            // In the composer, Shift+Tab switches plan mode; elsewhere it moves focus back.
            Action::FocusPrev if self.focus == Focus::Composer => self.cycle_mode(),
            Action::FocusNext | Action::FocusPrev => {
                let forward = action == Action::FocusNext;
                self.focus = self.focus.cycle(forward);
                if self.side(self.size.width) == Side::Off {
                    // Panes that are not shown take no turn.
                    while matches!(self.focus, Focus::Tree | Focus::Dashboard) {
                        self.focus = self.focus.cycle(forward);
                    }
                }
                if self.focus != Focus::Chat {
                    self.subagents.close();
                }
                if self.focus == Focus::Tree {
                    self.tools.focused();
                }
                Handled::changed()
            }
            Action::PullQueue => Handled::changed().with(Effect::RestoreQueued),
            Action::ToggleThinking => self.chat.toggle_thinking(),
            Action::Help => self.overlays.push(Overlay::Help { scroll: 0 }),
            Action::Inspect => Handled::changed().with(super::inspect_requests(None)),
            Action::Editor => Handled::changed().with(Effect::OpenEditor(self.composer.text())),
            Action::PageUp | Action::PageDown => {
                let height = self.chat_height();
                let page = height.saturating_sub(1).max(1) as isize;
                let rows = if action == Action::PageUp {
                    -page
                } else {
                    page
                };
                self.subagents
                    .chat_mut(&mut self.chat)
                    .scroll_by(rows, height);
                Handled::changed()
            }
            Action::InterruptTool => self.interrupt_tool(),
            Action::ExpandOutput => {
                let target = match self.chat.picked() {
                    Some(crate::chat::Picked::Card(id)) => Some(id),
                    _ => self.chat.newest_expandable(),
                };
                match target {
                    Some(id) => self.expand_card(&id),
                    None => self.hint("no tool output to show in full", HINT),
                }
            }
            Action::Find => {
                if self.chat_hidden() {
                    self.focus = Focus::Chat;
                }
                self.subagents.chat_mut(&mut self.chat).open_find()
            }
            Action::ScrollBottom => {
                self.subagents.chat_mut(&mut self.chat).scroll_to(true);
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
            Action::TogglePanes => self.toggle_panes(),
            Action::Submit | Action::Newline | Action::Quit => Handled::ignored(),
        }
    }

    /// The side panes key: hides the panes when they show, shows them when they do not.
    fn toggle_panes(&mut self) -> Handled {
        let shown = self.side(self.size.width) != Side::Off;
        self.panes = if shown {
            PaneMode::Hidden
        } else {
            PaneMode::Shown
        };
        self.settle_focus();
        let key = self.keymap.label(Action::TogglePanes);
        let text = if shown {
            format!("tool calls and dashboard hidden · {key} shows them")
        } else {
            format!("tool calls and dashboard shown · {key} hides them")
        };
        self.hint(text, HINT)
    }

    /// A pane that is not shown loses the focus to the composer.
    fn settle_focus(&mut self) {
        if matches!(self.focus, Focus::Tree | Focus::Dashboard)
            && self.side(self.size.width) == Side::Off
        {
            self.focus = Focus::Composer;
        }
    }
}
