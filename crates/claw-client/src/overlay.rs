//! The overlay part: a stack of floating windows over the panes (help, a tool call's
//! details, the session picker, confirmations). The top one gets every key; each key of
//! every overlay is handled here.

mod control;
mod detail;
mod help;
mod inspect;
pub mod kind;
mod mcp;
mod sessions;
mod status;
mod trust;

pub use sessions::ago;
pub use status::StatusRow;

pub use control::IMPLEMENT_PREFIX;
pub use inspect::{Inspector, Tab as InspectTab};
pub use kind::Overlay;

use super::highlight::HighlightCache;
use super::msg::Effect;
use super::part::{Handled, Intent};
use super::tool_tree::ToolTree;
use super::widgets::{centered, dialog, scrolled};
use super::wrap::{StyledLine, wrap};
use crate::theme::Theme;
use claw_runtime::keymap::{Action, KeyMap};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use sessions::PickerKey;
use std::time::{Instant, SystemTime};

/// The open overlays, the top one last.
#[derive(Clone, Debug, Default)]
pub struct Overlays {
    stack: Vec<Overlay>,
    /// Long hunks of the diffs shown are unfolded (`f` toggles; a new overlay folds).
    unfolded: bool,
}

/// What drawing the overlays is handed besides their own state.
pub(crate) struct OverlayView<'a> {
    /// The bindings the help lists.
    pub keymap: &'a KeyMap,
    /// The calls the detail overlay shows.
    pub tools: &'a ToolTree,
    /// Highlighted code (the detail's arguments).
    pub highlights: &'a HighlightCache,
    /// For the elapsed time of a running call.
    pub now: Instant,
    /// For the sessions' ages.
    pub wall: SystemTime,
    /// The session shown now (marked in the picker).
    pub session_id: Option<&'a str>,
    /// The MCP servers `/mcp` lists.
    pub mcp: &'a [claw_runtime::mcp::McpServerInfo],
    /// What `/status` (or `/settings`) lists.
    pub status: &'a [StatusRow],
}

impl Overlays {
    /// The top overlay, the one that gets the keys.
    pub fn top(&self) -> Option<&Overlay> {
        self.stack.last()
    }

    /// Whether none is open.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// Opens `overlay` above the open ones.
    pub(crate) fn push(&mut self, overlay: Overlay) -> Handled {
        self.stack.push(overlay);
        self.unfolded = false;
        Handled::changed()
    }

    /// Whether the diffs shown have their long hunks unfolded.
    pub fn unfolded(&self) -> bool {
        self.unfolded
    }

    /// Closes every overlay and opens `overlay` (what arrives from the runtime replaces
    /// what is open).
    pub(crate) fn replace(&mut self, overlay: Overlay) -> Handled {
        self.stack.clear();
        self.push(overlay)
    }

    /// Shows `request`: over what is open, or in place of a trust question still open
    /// (it covers everything that waits now).
    pub(crate) fn ask_trust(&mut self, mut request: claw_runtime::trust::TrustRequest) -> Handled {
        if let Some(at) = self
            .stack
            .iter()
            .position(|o| matches!(o, Overlay::Trust { .. }))
            && let Overlay::Trust { request: open, .. } = self.stack.remove(at)
        {
            if request.servers.is_empty() {
                request.project_file = open.project_file;
                request.servers = open.servers;
            }
            let kept = open.files.into_iter().filter(|old| {
                !request
                    .files
                    .iter()
                    .any(|new| new.file.path == old.file.path)
            });
            request.files.extend(kept.collect::<Vec<_>>());
        }
        self.push(Overlay::Trust { request, scroll: 0 })
    }

    /// Closes every overlay.
    pub(crate) fn clear(&mut self) {
        self.stack.clear();
    }

    /// Keys while an overlay is open: the interrupt key and `q` close it, the cancel key
    /// closes it and does what it does everywhere, the rest is the overlay's own.
    /// `screen` sizes the pages; `current` is the session shown now.
    pub(crate) fn handle_key(
        &mut self,
        key: &KeyEvent,
        action: Option<Action>,
        screen: Rect,
        current: Option<&str>,
        keymap: &KeyMap,
    ) -> Handled {
        let is_help = matches!(self.stack.last(), Some(Overlay::Help { .. }));
        let Some(top) = self.stack.last_mut() else {
            return Handled::ignored();
        };
        if let Overlay::Inspect(inspector) = top
            && action != Some(Action::Cancel)
        {
            // Esc and `q` go back from a request to the list before they close.
            let page = screen.height.saturating_sub(8).max(1);
            if let inspect::InspectKey::Close = inspector.handle_key(key, page) {
                self.stack.pop();
            }
            return Handled::changed();
        }
        // In the session picker `q` is typed into the filter.
        let types = matches!(top, Overlay::Sessions { .. });
        if action == Some(Action::Interrupt) || (key.code == KeyCode::Char('q') && !types) {
            self.stack.pop();
            return Handled::changed();
        }
        if action == Some(Action::Cancel) {
            self.stack.pop();
            return Handled::changed().ask(Intent::Cancel);
        }
        if matches!(top, Overlay::Settings { .. }) && key.code == KeyCode::Char('s') {
            return Handled::changed().ask(Intent::SaveSettings);
        }
        if matches!(top, Overlay::Detail { .. } | Overlay::SessionDiff { .. })
            && key.code == KeyCode::Char('f')
        {
            self.unfolded = !self.unfolded;
            return Handled::changed();
        }
        match top {
            Overlay::Trust { request, scroll } => {
                let trusted = match key.code {
                    KeyCode::Char('y' | 'Y') => true,
                    KeyCode::Char('n' | 'N') => false,
                    KeyCode::Up | KeyCode::Char('k') => {
                        *scroll = scroll.saturating_sub(1);
                        return Handled::changed();
                    }
                    KeyCode::Down | KeyCode::Char('j') => {
                        *scroll = scroll.saturating_add(1);
                        return Handled::changed();
                    }
                    KeyCode::PageUp => {
                        *scroll = scroll.saturating_sub(screen.height / 2);
                        return Handled::changed();
                    }
                    KeyCode::PageDown => {
                        *scroll = scroll.saturating_add(screen.height / 2);
                        return Handled::changed();
                    }
                    // The question stays until it is answered or put off (Esc, above).
                    _ => return Handled::ignored(),
                };
                let request = std::mem::take(request);
                self.stack.pop();
                Handled::changed().with(Effect::AnswerTrust { trusted, request })
            }
            Overlay::Help { scroll }
            | Overlay::Detail { scroll, .. }
            | Overlay::Mcp { scroll }
            | Overlay::SessionDiff { scroll, .. }
            | Overlay::Settings { scroll }
            | Overlay::Status { scroll } => {
                let page = screen.height.saturating_sub(8).max(1);
                *scroll = match key.code {
                    KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
                    KeyCode::PageUp => scroll.saturating_sub(page),
                    KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_add(page),
                    KeyCode::Home | KeyCode::Char('g') => 0,
                    _ if action == Some(Action::Help) => {
                        self.stack.pop();
                        return Handled::changed();
                    }
                    KeyCode::End | KeyCode::Char('G') => u16::MAX,
                    _ => *scroll,
                };
                if is_help {
                    // Kept within the text, so Up right after the end moves at once.
                    *scroll = (*scroll).min(help::max_scroll(screen, keymap));
                }
                Handled::changed()
            }
            Overlay::Sessions {
                rows,
                selected,
                query,
            } => {
                // The rows the picker shows: the screen less its borders and header.
                let page = usize::from(screen.height.saturating_sub(3).max(1));
                let picker = sessions::Picker {
                    rows,
                    selected,
                    query,
                };
                match sessions::picker_key(picker, key, page, current) {
                    PickerKey::Stay(handled) => handled,
                    PickerKey::Close(handled) => {
                        self.stack.pop();
                        handled
                    }
                }
            }
            Overlay::ConfirmFork { path, .. } => {
                let path = std::mem::take(path);
                self.stack.pop();
                sessions::fork_key(path, key.code)
            }
            Overlay::ConfirmDelete { id, .. } => {
                let id = std::mem::take(id);
                self.stack.pop();
                match key.code {
                    KeyCode::Char('y' | 'Y') | KeyCode::Enter => {
                        Handled::changed().with(Effect::DeleteCron(id))
                    }
                    _ => Handled::changed(),
                }
            }
            Overlay::ConfirmUndo { rewind, .. } => {
                let rewind = rewind.take();
                self.stack.pop();
                control::confirm_key(rewind.as_ref(), key.code)
            }
            Overlay::Rewind { prompts, selected } => {
                let Some(turn) = control::picker_key(prompts.len(), selected, key.code) else {
                    return Handled::changed();
                };
                let prompt = prompts.get(turn - 1).cloned().unwrap_or_default();
                self.stack.pop();
                self.push(Overlay::RewindChoice { turn, prompt })
            }
            Overlay::RewindChoice { turn, .. } => {
                let turn = *turn;
                self.stack.pop();
                control::choice_key(turn, key.code)
            }
            Overlay::ImplementPlan { plan } => {
                let plan = std::mem::take(plan);
                self.stack.pop();
                control::implement_key(&plan, key.code)
            }
            Overlay::Inspect(_) => Handled::ignored(),
            Overlay::ConfirmCancel { id, .. } => {
                let id = std::mem::take(id);
                self.stack.pop();
                match key.code {
                    KeyCode::Char('y' | 'Y') | KeyCode::Enter => Handled::changed()
                        .ask(Intent::Hint(
                            format!("cancelling subagent {id}"),
                            crate::part::HINT,
                        ))
                        .with(Effect::Subagents(crate::subagents::Effect::Cancel(id))),
                    _ => Handled::changed(),
                }
            }
        }
    }

    /// Draws the open overlays, the top one last.
    pub(crate) fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme, view: &OverlayView) {
        for overlay in &self.stack {
            match overlay {
                Overlay::Help { scroll } => help::draw(area, buf, theme, view.keymap, *scroll),
                Overlay::Detail { call_id, scroll } => {
                    if let Some(node) = view.tools.node(call_id) {
                        detail::draw(
                            area,
                            buf,
                            theme,
                            node,
                            view.highlights,
                            view.now,
                            (*scroll, self.unfolded),
                        );
                    }
                }
                Overlay::ConfirmDelete { id, name } => confirm(
                    area,
                    buf,
                    theme,
                    " Delete cron job? ",
                    &format!("Delete \"{name}\" ({id})? It will not fire again."),
                    "y/Enter: delete · any other key: keep",
                ),
                Overlay::ConfirmCancel { id, label } => confirm(
                    area,
                    buf,
                    theme,
                    " Cancel subagent? ",
                    &format!(
                        "Cancel \"{label}\" ({id})? It stops now; the model hears of it with \
                         your next message."
                    ),
                    "y/Enter: cancel it · any other key: let it run",
                ),
                Overlay::Status { scroll } => status::draw(
                    area,
                    buf,
                    theme,
                    (" Status · Esc closes ", view.status),
                    *scroll,
                ),
                Overlay::Settings { scroll } => status::draw(
                    area,
                    buf,
                    theme,
                    (" Settings · s saves · Esc closes ", view.status),
                    *scroll,
                ),
                Overlay::Sessions {
                    rows,
                    selected,
                    query,
                } => sessions::draw_picker(
                    area,
                    buf,
                    theme,
                    (rows, *selected, query),
                    view.session_id,
                    view.wall,
                ),
                Overlay::ConfirmFork { id, .. } => sessions::draw_fork(area, buf, theme, id),
                Overlay::Mcp { scroll } => mcp::draw_servers(area, buf, theme, view.mcp, *scroll),
                Overlay::Trust { request, scroll } => {
                    trust::draw(area, buf, theme, request, *scroll)
                }
                Overlay::ConfirmUndo { question, rewind } => {
                    control::draw_confirm(area, buf, theme, question, rewind.as_ref())
                }
                Overlay::Rewind { prompts, selected } => {
                    control::draw_picker(area, buf, theme, prompts, *selected)
                }
                Overlay::RewindChoice { turn, prompt } => {
                    control::draw_choice(area, buf, theme, *turn, prompt)
                }
                Overlay::SessionDiff { files, scroll } => control::draw_session_diff(
                    area,
                    buf,
                    theme,
                    files,
                    view.highlights,
                    (*scroll, self.unfolded),
                ),
                Overlay::ImplementPlan { plan } => control::draw_implement(area, buf, theme, plan),
                Overlay::Inspect(inspector) => inspect::draw(area, buf, theme, inspector),
            }
        }
    }
}

/// A yes/no question in a small dialog.
fn confirm(area: Rect, buf: &mut Buffer, theme: &Theme, title: &str, question: &str, keys: &str) {
    let rect = centered(area, 50, 6);
    let body = dialog(theme, rect, title.into(), buf);
    let lines = vec![
        StyledLine::plain(question, theme.text()),
        StyledLine::plain(keys, theme.dim()),
    ];
    scrolled(&wrap(&lines, body.width), body, 0, buf);
}
