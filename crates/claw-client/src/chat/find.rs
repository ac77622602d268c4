//! Find in the transcript: a search line at the bottom of the chat, every match
//! highlighted, Enter and Shift+Enter (or Down and Up) jump to the next and previous
//! match. Matches are looked up in the wrapped rows, again whenever the rows change, so
//! find keeps working while an answer streams in.

use super::Chat;
use super::transcript::Transcript;
use crate::part::Handled;
use crate::wrap::str_width;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// One match: a row of the transcript and the cells it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FindMatch {
    /// The row.
    pub row: usize,
    /// Its first cell.
    pub column: usize,
    /// How many cells.
    pub width: usize,
}

/// The open search line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Find {
    query: String,
    matches: Vec<FindMatch>,
    /// The match jumped to last.
    current: Option<usize>,
    stale: bool,
}

impl Find {
    /// What is searched for.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// The matches, top to bottom.
    pub fn matches(&self) -> &[FindMatch] {
        &self.matches
    }

    /// The index of the match jumped to last.
    pub fn current(&self) -> Option<usize> {
        self.current
    }

    /// Rows were added above every match (older entries laid out): the matches move
    /// down with the rows they are in.
    pub(super) fn shift(&mut self, rows: usize) {
        for m in &mut self.matches {
            m.row += rows;
        }
    }

    pub(super) fn is_stale(&self) -> bool {
        self.stale
    }

    /// Looks the query up again in the transcript's rows (case-insensitive).
    pub(super) fn refresh(&mut self, transcript: &Transcript) {
        self.stale = false;
        let previous = self.current.and_then(|i| self.matches.get(i)).copied();
        self.matches.clear();
        let needle = self.query.to_lowercase();
        if needle.is_empty() {
            self.current = None;
            return;
        }
        let total = transcript.total_rows();
        for (row, line) in transcript.rows(0, total).enumerate() {
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            let hay = text.to_lowercase();
            let mut from = 0;
            while let Some(at) = hay[from..].find(&needle) {
                let start = from + at;
                self.matches.push(FindMatch {
                    row,
                    column: str_width(&hay[..start]),
                    width: str_width(&needle).max(1),
                });
                from = start + needle.len();
            }
        }
        // The match jumped to stays current while rows are added below it.
        self.current = previous.and_then(|p| self.matches.iter().position(|m| *m == p));
    }
}

impl Chat {
    /// The search line, while open.
    pub fn find(&self) -> Option<&Find> {
        self.find.as_ref()
    }

    /// Opens the search line (or keeps it open).
    pub(crate) fn open_find(&mut self) -> Handled {
        if self.find.is_none() {
            self.find = Some(Find {
                stale: true,
                ..Find::default()
            });
        }
        Handled::changed()
    }

    /// Keys while the search line is open: typing edits the query, Enter and Down jump
    /// to the next match, Shift+Enter and Up to the previous one, Esc closes it. Every
    /// key is the search line's.
    pub(crate) fn find_key(&mut self, key: &KeyEvent) -> Handled {
        let Some(find) = &mut self.find else {
            return Handled::ignored();
        };
        let shifted = key
            .modifiers
            .intersects(KeyModifiers::SHIFT | KeyModifiers::ALT);
        let typing = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Esc => {
                self.find = None;
                return Handled::changed();
            }
            KeyCode::Enter if shifted => return self.jump(-1),
            KeyCode::Enter | KeyCode::Down => return self.jump(1),
            KeyCode::Up | KeyCode::BackTab => return self.jump(-1),
            KeyCode::Backspace => {
                find.query.pop();
            }
            KeyCode::Char(c) if typing => find.query.push(c),
            _ => return Handled::unchanged(),
        }
        find.refresh(&self.transcript);
        self.first_match_in_view();
        Handled::changed()
    }

    /// After the query changed: the first match from the view's top down (else the
    /// last one) becomes current and is scrolled into view.
    fn first_match_in_view(&mut self) {
        let top = self.top(self.height);
        let Some(find) = &mut self.find else {
            return;
        };
        let first = find
            .matches
            .iter()
            .position(|m| m.row >= top)
            .or_else(|| find.matches.len().checked_sub(1));
        find.current = first;
        if let Some(i) = first {
            let row = find.matches[i].row;
            self.reveal(row..row + 1, self.height);
        }
    }

    /// Jumps to the next (`1`) or previous (`-1`) match, wrapping around.
    fn jump(&mut self, delta: isize) -> Handled {
        let height = self.height;
        let Some(find) = &mut self.find else {
            return Handled::unchanged();
        };
        let n = find.matches.len();
        if n == 0 {
            return Handled::unchanged();
        }
        let next = match find.current {
            Some(i) => (i as isize + delta).rem_euclid(n as isize) as usize,
            None if delta > 0 => 0,
            None => n - 1,
        };
        find.current = Some(next);
        let row = find.matches[next].row;
        self.reveal(row..row + 1, height);
        Handled::changed()
    }
}
