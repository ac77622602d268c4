//! The tool-call tree part: every call of the session by turn, with its status,
//! duration and a result preview, live output under running calls, a subagent's calls
//! under its `spawn`; arrow keys select a call, Enter opens its details.

mod calls;
mod node;

pub use calls::{CallTree, TreeRow};
pub(crate) use node::pretty_json;
pub use node::{CallNode, CallStatus, Progress, status_of, tool_label};

use super::part::{Handled, Intent};
use super::widgets::{format_duration, pane_frame, put_line, spinner};
use super::wrap::clean;
use crate::theme::{Theme, Token};
use claw_agent::AgentEvent;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use std::time::Instant;

/// The tree and the call selected in it.
#[derive(Clone, Debug, Default)]
pub struct ToolTree {
    calls: CallTree,
    selected: Option<String>,
}

/// What drawing the tree is handed besides its own state.
pub(crate) struct TreeView {
    /// Whether the pane has focus (the selection shows only then).
    pub focused: bool,
    /// The spinner frame for running calls.
    pub spinner: usize,
    /// For the elapsed time of running calls.
    pub now: Instant,
}

impl ToolTree {
    /// The calls.
    pub fn calls(&self) -> &CallTree {
        &self.calls
    }

    /// The selected call's id.
    pub fn selected(&self) -> Option<&str> {
        self.selected.as_deref()
    }

    /// Whether a call is executing.
    pub fn any_running(&self) -> bool {
        self.calls.any_running()
    }

    /// The names of the main agent's calls executing now, oldest first.
    pub fn running_names(&self) -> Vec<String> {
        self.calls.running_names()
    }

    /// The call `id`.
    pub fn node(&self, id: &str) -> Option<&CallNode> {
        self.calls.node(id)
    }

    /// Keys while the tree has focus: arrows and Home/End select, Enter opens the call.
    pub(crate) fn handle_key(&mut self, key: &KeyEvent) -> Handled {
        self.calls.refresh_rows();
        match key.code {
            KeyCode::Up => self.move_selection(-1),
            KeyCode::Down => self.move_selection(1),
            KeyCode::Home => self.move_selection(isize::MIN / 2),
            KeyCode::End => self.move_selection(isize::MAX / 2),
            KeyCode::Enter => {
                let handled = Handled::changed();
                return match self.selected.clone() {
                    Some(id) => handled.ask(Intent::OpenDetail(id)),
                    None => handled,
                };
            }
            _ => return Handled::ignored(),
        }
        Handled::changed()
    }

    /// The mouse wheel over the pane moves the selection.
    pub(crate) fn wheel(&mut self, down: bool) -> Handled {
        self.calls.refresh_rows();
        self.move_selection(if down { 1 } else { -1 });
        Handled::changed()
    }

    /// The pane got the focus: select the newest call if none is.
    pub(crate) fn focused(&mut self) {
        self.calls.refresh_rows();
        if self.selected.is_none() {
            self.selected = self.calls.call_ids().last().map(|s| (*s).to_owned());
        }
    }

    fn move_selection(&mut self, delta: isize) {
        let ids = self.calls.call_ids();
        if ids.is_empty() {
            return;
        }
        let current = self
            .selected
            .as_deref()
            .and_then(|s| ids.iter().position(|i| *i == s))
            .unwrap_or(ids.len() - 1);
        let next = current.saturating_add_signed(delta).min(ids.len() - 1);
        self.selected = Some(ids[next].to_owned());
    }

    /// A turn of the main agent began.
    pub(crate) fn turn_started(&mut self) {
        self.calls.turn_started();
    }

    /// The session's turn count.
    pub fn turn_count(&self) -> u32 {
        self.calls.turn_count()
    }

    /// Adds a shell command the user ran.
    pub(crate) fn announce_shell(&mut self, id: &str, command: &str) {
        self.calls.announce_shell(id, command);
    }

    /// Whether a shell command the user ran is executing.
    pub fn shell_running(&self) -> bool {
        self.calls.shell_running()
    }

    /// Announces a call the model made (before it runs).
    pub(crate) fn announce(&mut self, id: &str, name: &str, args: &serde_json::Value) {
        self.calls.announce(id, name, args);
    }

    /// Applies a main-agent tool event; returns the id of the call it changed.
    pub(crate) fn apply(&mut self, event: &AgentEvent, now: Instant) -> Option<String> {
        self.calls.apply(event, now)
    }

    /// A call of a resumed history finished with `result`, read where the history
    /// holds it.
    pub(crate) fn finish_recorded(&mut self, result: crate::recorded::Recorded, now: Instant) {
        self.calls.finish_recorded(result, now);
    }

    /// Applies a subagent's tool event under the `spawn` call `parent`.
    pub(crate) fn apply_nested(&mut self, parent: &str, event: &AgentEvent, now: Instant) {
        self.calls.apply_nested(parent, event, now);
    }

    /// Puts back a subagent's finished call under its `spawn` (a session opened again).
    pub(crate) fn restore_nested(&mut self, call: &claw_runtime::session::SubagentCall) {
        self.calls.restore_nested(
            &call.parent_call_id,
            &call.call_id,
            &call.tool_name,
            &call.args,
            &call.result,
        );
    }

    /// The run ended: calls that never started are skipped.
    pub(crate) fn settle(&mut self) {
        self.calls.settle();
    }

    /// Forgets every call (another session).
    pub(crate) fn clear(&mut self) {
        self.calls.clear();
        self.selected = None;
    }

    /// Brings the flattened rows up to date before a frame.
    pub(crate) fn prepare(&mut self) {
        self.calls.refresh_rows();
    }

    /// Draws the tree into `area`.
    pub(crate) fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme, view: &TreeView) {
        pane_frame(theme, area, " Tools ", view.focused, buf);
        let body = super::layout::inner(area);
        let rows = self.calls.rows();
        if rows.is_empty() {
            let line = Line::from(Span::styled("No tool calls yet.", theme.dim()));
            buf.set_line(body.x, body.y, &line, body.width);
            return;
        }
        let height = usize::from(body.height);
        let selected_row = self
            .selected
            .as_deref()
            .filter(|_| view.focused)
            .and_then(|sel| {
                rows.iter()
                    .position(|r| matches!(r, TreeRow::Call { id, .. } if id == sel))
            });
        let top = match selected_row {
            // Keep the selection in view, with its preview line when there is room.
            Some(row) => (row + 2).saturating_sub(height).min(row),
            None => rows.len().saturating_sub(height),
        };
        for (i, row) in rows.iter().skip(top).take(height).enumerate() {
            let y = body.y + i as u16;
            let line = self.row_line(row, theme, view);
            put_line(buf, body.x, y, &line, body.width);
            if Some(top + i) == selected_row {
                buf.set_style(Rect::new(body.x, y, body.width, 1), theme.selection());
            }
        }
    }

    fn row_line(&self, row: &TreeRow, theme: &Theme, view: &TreeView) -> Line<'static> {
        let indent = |depth: usize| "  ".repeat(depth);
        match row {
            TreeRow::Turn(n) => Line::from(Span::styled(
                format!("Turn {n}"),
                theme.fg(Token::Accent).add_modifier(Modifier::BOLD),
            )),
            TreeRow::Shell => Line::from(Span::styled(
                "You ran",
                theme.fg(Token::User).add_modifier(Modifier::BOLD),
            )),
            TreeRow::Call { id, depth } => {
                let Some(node) = self.calls.node(id) else {
                    return Line::default();
                };
                let (symbol, token) = node.status.symbol();
                let symbol = if node.status == CallStatus::Running {
                    spinner(view.spinner)
                } else {
                    symbol
                };
                let mut spans = vec![
                    Span::raw(indent(*depth)),
                    Span::styled(format!("{symbol} "), theme.fg(token)),
                    Span::styled(
                        node.label().into_owned(),
                        theme.fg(Token::Tool).add_modifier(Modifier::BOLD),
                    ),
                ];
                if !node.summary.is_empty() {
                    spans.push(Span::styled(
                        format!(" {}", clean(&node.summary)),
                        theme.text(),
                    ));
                }
                let timing = match node.status {
                    CallStatus::Skipped | CallStatus::Queued => {
                        node.status.word().map(str::to_owned)
                    }
                    CallStatus::Interrupted => Some(match node.elapsed(view.now) {
                        Some(d) => format!("interrupted · {}", format_duration(d)),
                        None => "interrupted".to_owned(),
                    }),
                    _ => node.elapsed(view.now).map(format_duration),
                };
                if let Some(t) = timing {
                    spans.push(Span::styled(format!("  {t}"), theme.dim()));
                }
                Line::from(spans)
            }
            TreeRow::Live { depth, text } => Line::from(vec![
                Span::raw(indent(*depth)),
                Span::styled("  │ ", theme.dim()),
                Span::styled(clean(text), theme.dim()),
            ]),
            TreeRow::Preview { depth, text } => Line::from(vec![
                Span::raw(indent(*depth)),
                Span::styled("  └ ", theme.dim()),
                Span::styled(clean(text), theme.dim()),
            ]),
            TreeRow::Mark { depth, text } => {
                let token = if text.starts_with('⛔') {
                    Token::Error
                } else {
                    Token::Warning
                };
                Line::from(vec![
                    Span::raw(indent(*depth)),
                    Span::styled("  └ ", theme.dim()),
                    Span::styled(clean(text), theme.fg(token)),
                ])
            }
        }
    }
}
