//! The approval part: tool calls waiting for the user's yes or no, oldest first, shown
//! above everything else; while one waits, every key goes to it.
//!
//! What the user approves is what runs, so the dialog hides nothing: the whole command,
//! each of its lines numbered, control characters shown as text, scrollable when it is
//! taller than the screen, with its line count in the header and the keys always on
//! screen (`approval/dialog.rs`).

mod dialog;

use super::msg::Effect;
use super::part::{Handled, Intent};
use crate::theme::Theme;
use claw_runtime::keymap::Action;
use claw_tools::exec::{ApprovalDecision, ApprovalRequest};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::collections::VecDeque;

/// The requests waiting for an answer, oldest first, and how far the oldest one's
/// dialog is scrolled.
#[derive(Clone, Debug, Default)]
pub struct ApprovalQueue {
    waiting: VecDeque<ApprovalRequest>,
    /// The first row of the dialog's scrolled part shown (kept within the text).
    scroll: u16,
}

impl ApprovalQueue {
    /// How many requests wait.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// A tool call asks for approval.
    pub(crate) fn push(&mut self, request: ApprovalRequest) -> Handled {
        self.waiting.push_back(request);
        Handled::changed()
    }

    /// Takes request `id` out of the queue: someone else answered it. The request, if
    /// it still waited here.
    pub(crate) fn answered_elsewhere(&mut self, id: &str) -> Option<ApprovalRequest> {
        let at = self.waiting.iter().position(|r| r.id == id)?;
        if at == 0 {
            self.scroll = 0;
        }
        self.waiting.remove(at)
    }

    /// y allows, a allows for the session, n or the interrupt key denies, the cancel key
    /// does what it does everywhere; the arrows, PgUp/PgDn, Home/End and j/k scroll the
    /// request on a `screen` of that size; every other key is swallowed while a request
    /// waits.
    pub(crate) fn handle_key(
        &mut self,
        key: &KeyEvent,
        action: Option<Action>,
        screen: Rect,
    ) -> Handled {
        if self.waiting.is_empty() {
            return Handled::ignored();
        }
        let decision = match (key.code, action) {
            (KeyCode::Char('y' | 'Y'), _) => ApprovalDecision::Allow,
            (KeyCode::Char('a' | 'A'), _) => ApprovalDecision::AllowSession,
            (KeyCode::Char('n' | 'N'), _) | (_, Some(Action::Interrupt)) => ApprovalDecision::Deny,
            (_, Some(Action::Cancel)) => return Handled::changed().ask(Intent::Cancel),
            (code, _) => return self.scroll_key(code, screen),
        };
        self.scroll = 0;
        let answered = Handled::changed();
        match self.waiting.pop_front() {
            Some(request) => answered.with(Effect::Approve {
                id: request.id,
                decision,
            }),
            None => answered,
        }
    }

    /// Moves the view of the oldest request's text for a scrolling key; any other key
    /// is swallowed.
    fn scroll_key(&mut self, code: KeyCode, screen: Rect) -> Handled {
        let Some(request) = self.waiting.front() else {
            return Handled::unchanged();
        };
        let extent = dialog::Extent::of(request, self.waiting.len(), screen);
        let page = extent.page.max(1);
        let scroll = match code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll.saturating_add(1),
            KeyCode::PageUp => self.scroll.saturating_sub(page),
            KeyCode::PageDown => self.scroll.saturating_add(page),
            KeyCode::Home => 0,
            KeyCode::End => u16::MAX,
            _ => return Handled::unchanged(),
        };
        let scroll = scroll.min(extent.max_scroll);
        if scroll == self.scroll {
            return Handled::unchanged();
        }
        self.scroll = scroll;
        Handled::changed()
    }

    /// Draws the oldest request over `area`.
    pub(crate) fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if let Some(request) = self.waiting.front() {
            dialog::draw(request, self.waiting.len(), self.scroll, area, buf, theme);
        }
    }
}
