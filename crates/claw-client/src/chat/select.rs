//! Selecting one item of the chat, a tool card or a code block, with `[` and `]`; `c`
//! copies it (a code block's original lines, a card's whole output), `o` or Enter
//! shows all of a selected card's output or only its last lines again.

use super::Chat;
use crate::msg::Effect;
use crate::part::{Handled, Intent};
use crate::wrap::Anchor;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What is selected, as the root needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Picked {
    /// The card of this call.
    Card(String),
    /// A code block with this source.
    Code(String),
}

impl Chat {
    /// The selected item, if any.
    pub fn picked(&self) -> Option<Picked> {
        let (entry, ordinal) = self.selected?;
        let entry = self.transcript.entries().get(entry)?;
        let (_, anchor) = entry.anchors().nth(ordinal)?;
        Some(match anchor {
            Anchor::Card(id) => Picked::Card(id.to_string()),
            Anchor::Code(code) => Picked::Code(code.to_string()),
        })
    }

    /// The rows of the selected item in the whole transcript.
    pub(super) fn selected_rows(&self) -> Option<std::ops::Range<usize>> {
        let (entry, ordinal) = self.selected?;
        self.transcript.item_rows(entry, ordinal)
    }

    /// Drops the selection; returns whether there was one.
    pub(crate) fn unselect(&mut self) -> bool {
        self.selected.take().is_some()
    }

    /// The selection keys of a focused chat.
    pub(super) fn selection_key(&mut self, key: &KeyEvent, height: usize) -> Handled {
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return Handled::ignored();
        }
        match key.code {
            KeyCode::Char('[') => self.step(-1, height),
            KeyCode::Char(']') => self.step(1, height),
            KeyCode::Char('c') => match self.picked() {
                Some(Picked::Code(code)) => Handled::changed()
                    .ask(Intent::Hint(
                        "code block sent to the clipboard (OSC 52)".into(),
                        crate::part::HINT,
                    ))
                    .with(Effect::Copy(code)),
                Some(Picked::Card(id)) => Handled::changed().ask(Intent::CopyOutput(id)),
                None => Handled::changed().ask(Intent::Hint(
                    "select a code block or card first ([ and ])".into(),
                    crate::part::HINT,
                )),
            },
            KeyCode::Char('o') | KeyCode::Enter => match self.picked() {
                Some(Picked::Card(id)) => Handled::changed().ask(Intent::ExpandCard(id)),
                _ => Handled::unchanged(),
            },
            _ => Handled::ignored(),
        }
    }

    /// Selects the item `delta` places away (from the bottom of the view when nothing
    /// is selected) and scrolls it into view.
    fn step(&mut self, delta: isize, height: usize) -> Handled {
        let items = self.transcript.items();
        if items.is_empty() {
            return Handled::unchanged();
        }
        let current = self.selected.and_then(|(entry, ordinal)| {
            items
                .iter()
                .position(|i| i.entry == entry && i.ordinal == ordinal)
        });
        let next = match current {
            Some(i) => i.saturating_add_signed(delta).min(items.len() - 1),
            None => {
                // The last item that starts in (or above) the view.
                let bottom = self.top(height) + height;
                let last_seen = items
                    .iter()
                    .rposition(|i| i.rows.start < bottom)
                    .unwrap_or(0);
                if delta > 0 {
                    items
                        .iter()
                        .position(|i| i.rows.start >= self.top(height))
                        .unwrap_or(last_seen)
                } else {
                    last_seen
                }
            }
        };
        let item = &items[next];
        self.selected = Some((item.entry, item.ordinal));
        self.reveal(item.rows.clone(), height);
        Handled::changed()
    }

    /// Scrolls so that `rows` are in view (their start, if they are taller than it).
    pub(super) fn reveal(&mut self, rows: std::ops::Range<usize>, height: usize) {
        let top = self.top(height);
        let max_top = self.transcript.total_rows().saturating_sub(height);
        let wanted = if rows.start < top {
            rows.start
        } else if rows.end > top + height {
            rows.end.saturating_sub(height).min(rows.start)
        } else {
            return;
        };
        self.scroll.top = wanted.min(max_top);
        self.scroll.follow = self.scroll.top >= max_top;
        if self.scroll.follow {
            self.scroll.unseen = false;
        }
    }
}
