//! The chat's scroll position: following the stream, or held at a row.

use super::Chat;

/// The chat's scroll position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Scroll {
    /// Whether the view sticks to the bottom (follows the stream).
    pub(super) follow: bool,
    /// First visible row when not following.
    pub(super) top: usize,
    /// Whether content arrived below while scrolled up.
    pub(super) unseen: bool,
}

impl Default for Scroll {
    /// A new chat follows the bottom.
    fn default() -> Self {
        Self {
            follow: true,
            top: 0,
            unseen: false,
        }
    }
}

impl Chat {
    /// The first visible row in a pane of `height` rows.
    pub fn top(&self, height: usize) -> usize {
        let max_top = self.transcript.total_rows().saturating_sub(height);
        if self.scroll.follow {
            max_top
        } else {
            self.scroll.top.min(max_top)
        }
    }

    /// Rows of text a pane of `pane_rows` inner rows shows (the search line takes one).
    pub fn text_rows(&self, pane_rows: usize) -> usize {
        if self.find.is_some() && pane_rows > 1 {
            pane_rows - 1
        } else {
            pane_rows
        }
    }

    /// Whether the view sticks to the bottom.
    pub fn following(&self) -> bool {
        self.scroll.follow
    }

    /// Scrolls by `delta` rows (negative: up) in a pane of `height` rows.
    pub(crate) fn scroll_by(&mut self, delta: isize, height: usize) {
        let max_top = self.transcript.total_rows().saturating_sub(height);
        let next = self.top(height).saturating_add_signed(delta).min(max_top);
        self.scroll.top = next;
        self.scroll.follow = next >= max_top;
        if self.scroll.follow {
            self.scroll.unseen = false;
        }
    }

    /// Jumps to the top, or to the bottom (and follows again).
    pub(crate) fn scroll_to(&mut self, bottom: bool) {
        self.scroll.follow = bottom;
        self.scroll.top = 0;
        if bottom {
            self.scroll.unseen = false;
        } else {
            self.reveal_all = true;
        }
    }

    /// The history shown so far is laid out lazily, newest first, as the view comes
    /// near it (a resumed session is ready without laying out all of it).
    pub(crate) fn defer_history(&mut self) {
        self.transcript.defer_all();
        self.last_total_rows = 0;
    }

    /// Follows the bottom again (the user sent something).
    pub(crate) fn follow(&mut self) {
        self.scroll.follow = true;
        self.scroll.unseen = false;
    }
}
