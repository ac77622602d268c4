//! The request inspector overlay (`/inspect`, F3): the session's requests as a list;
//! Enter opens one in three views: Breakdown (what the input is made of), Body (the
//! exact JSON, folded per message, searchable with `/`) and Diff (what changed since
//! the agent's previous request, cache-busting changes in the warning colour). The log
//! is read by the runtime (`inspector::Effect::Load`); everything here is computed from it
//! when a request is opened, and drawing only copies rows.

mod body;
mod draw;

use claw_runtime::inspect::{Breakdown, Change, RequestLog, RequestRow, breakdown, diff, rows};
use crossterm::event::{KeyCode, KeyEvent};
use std::sync::Arc;

pub(super) use draw::draw;

/// The three views of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    /// What the input is made of.
    Breakdown,
    /// The exact JSON.
    Body,
    /// What changed since the agent's previous request.
    Diff,
}

impl Tab {
    fn next(self) -> Self {
        match self {
            Tab::Breakdown => Tab::Body,
            Tab::Body => Tab::Diff,
            Tab::Diff => Tab::Breakdown,
        }
    }
}

/// The `/` search of the Body view.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Search {
    /// The query line is open for typing.
    typing: bool,
    query: String,
    /// The query found nothing.
    missed: bool,
}

/// One request opened.
#[derive(Clone, Debug, PartialEq)]
struct Detail {
    /// Its position in the log.
    n: usize,
    tab: Tab,
    breakdown: Option<Breakdown>,
    /// `None`: the agent's first request.
    changes: Option<Vec<Change>>,
    body: body::BodyDoc,
    /// The Body view's selected block.
    cursor: usize,
    /// First row shown (of the current view).
    scroll: u16,
    search: Search,
}

/// The inspector's state.
#[derive(Clone, Debug)]
pub struct Inspector {
    log: Arc<RequestLog>,
    rows: Vec<RequestRow>,
    selected: usize,
    detail: Option<Detail>,
}

impl PartialEq for Inspector {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.log, &other.log)
            && self.selected == other.selected
            && self.detail == other.detail
    }
}

impl Eq for Inspector {}

/// What a key did to the inspector.
pub(super) enum InspectKey {
    /// It stays open.
    Stay,
    /// It closes.
    Close,
}

impl Inspector {
    /// The inspector over `log`: at request `open` (a position) opened, else the list
    /// with the latest request selected.
    pub fn new(log: Arc<RequestLog>, open: Option<usize>) -> Self {
        let rows = rows(&log);
        let mut inspector = Self {
            selected: rows.len().saturating_sub(1),
            rows,
            log,
            detail: None,
        };
        if let Some(n) = open.filter(|&n| n < inspector.rows.len()) {
            inspector.selected = n;
            inspector.open(n);
        }
        inspector
    }

    fn open(&mut self, n: usize) {
        self.detail = Some(Detail {
            n,
            tab: Tab::Breakdown,
            breakdown: breakdown(&self.log, n),
            changes: diff(&self.log, n),
            body: body::BodyDoc::build(&self.log, n),
            cursor: 0,
            scroll: 0,
            search: Search::default(),
        });
    }

    /// The request opened (its position), if one is.
    pub fn opened(&self) -> Option<usize> {
        self.detail.as_ref().map(|d| d.n)
    }

    /// The view of the opened request.
    pub fn tab(&self) -> Option<Tab> {
        self.detail.as_ref().map(|d| d.tab)
    }

    /// Handles a key; `page` is the number of rows a page moves.
    pub(super) fn handle_key(&mut self, key: &KeyEvent, page: u16) -> InspectKey {
        let Some(detail) = &mut self.detail else {
            return self.list_key(key, usize::from(page));
        };
        if detail.search.typing {
            search_key(detail, key.code);
            return InspectKey::Stay;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Backspace => self.detail = None,
            KeyCode::Tab => {
                detail.tab = detail.tab.next();
                detail.scroll = 0;
            }
            KeyCode::Char('1') => (detail.tab, detail.scroll) = (Tab::Breakdown, 0),
            KeyCode::Char('2') => (detail.tab, detail.scroll) = (Tab::Body, 0),
            KeyCode::Char('3') => (detail.tab, detail.scroll) = (Tab::Diff, 0),
            _ if detail.tab == Tab::Body => body_key(detail, key.code, page),
            code => detail.scroll = scrolled(detail.scroll, code, page),
        }
        InspectKey::Stay
    }

    fn list_key(&mut self, key: &KeyEvent, page: usize) -> InspectKey {
        let last = self.rows.len().saturating_sub(1);
        self.selected = match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return InspectKey::Close,
            KeyCode::Enter if !self.rows.is_empty() => {
                self.open(self.selected);
                self.selected
            }
            KeyCode::Up | KeyCode::Char('k') => self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => (self.selected + 1).min(last),
            KeyCode::PageUp => self.selected.saturating_sub(page),
            KeyCode::PageDown => (self.selected + page).min(last),
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            _ => self.selected,
        };
        InspectKey::Stay
    }
}

fn scrolled(scroll: u16, code: KeyCode, page: u16) -> u16 {
    match code {
        KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
        KeyCode::PageUp => scroll.saturating_sub(page),
        KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_add(page),
        KeyCode::Home | KeyCode::Char('g') => 0,
        KeyCode::End | KeyCode::Char('G') => u16::MAX,
        _ => scroll,
    }
}

/// Body view keys: ↑↓ select a block, Enter folds or unfolds it, `a` unfolds all (or
/// folds all), `/` searches, `n` finds the next hit, PgUp/PgDn scroll.
fn body_key(detail: &mut Detail, code: KeyCode, page: u16) {
    let doc = &mut detail.body;
    let last = doc.blocks.len().saturating_sub(1);
    match code {
        KeyCode::Up | KeyCode::Char('k') => detail.cursor = detail.cursor.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => detail.cursor = (detail.cursor + 1).min(last),
        KeyCode::Home | KeyCode::Char('g') => detail.cursor = 0,
        KeyCode::End | KeyCode::Char('G') => detail.cursor = last,
        KeyCode::Enter | KeyCode::Char(' ') => {
            if let Some(block) = doc.blocks.get_mut(detail.cursor).filter(|b| b.foldable) {
                if block.folded {
                    block.unfold();
                } else {
                    block.folded = true;
                }
            }
        }
        KeyCode::Char('a') => {
            let fold = doc.blocks.iter().any(|b| b.foldable && !b.folded);
            for block in doc.blocks.iter_mut().filter(|b| b.foldable) {
                if fold {
                    block.folded = true;
                } else {
                    block.unfold();
                }
            }
        }
        KeyCode::Char('/') => {
            detail.search = Search {
                typing: true,
                ..Search::default()
            };
            return;
        }
        KeyCode::Char('n') => {
            find_next(detail);
            return;
        }
        KeyCode::PageUp | KeyCode::PageDown => {
            detail.scroll = scrolled(detail.scroll, code, page);
            return;
        }
        _ => return,
    }
    detail.scroll = u16::try_from(detail.body.row_of(detail.cursor)).unwrap_or(u16::MAX);
}

fn search_key(detail: &mut Detail, code: KeyCode) {
    match code {
        KeyCode::Esc => detail.search = Search::default(),
        KeyCode::Enter => {
            detail.search.typing = false;
            find_next(detail);
        }
        KeyCode::Backspace => {
            detail.search.query.pop();
        }
        KeyCode::Char(c) => detail.search.query.push(c),
        _ => {}
    }
}

/// Moves to the next block holding the query, unfolding it.
fn find_next(detail: &mut Detail) {
    let Some((b, row)) = detail.body.find(&detail.search.query, detail.cursor) else {
        detail.search.missed = true;
        return;
    };
    detail.search.missed = false;
    detail.cursor = b;
    let at = detail.body.row_of(b) + row;
    detail.scroll = u16::try_from(at.saturating_sub(2)).unwrap_or(u16::MAX);
}
