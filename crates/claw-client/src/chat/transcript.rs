//! The chat transcript and its layout caches.
//!
//! Every entry keeps its wrapped rows for the current width, so a frame only copies the
//! visible rows. The streaming answer keeps a `head` of rows that can no longer change
//! (everything before the last blank line outside a code fence) and re-renders only its
//! `tail`. Row offsets are prefix sums, so finding the first visible entry is a binary
//! search: the cost of a frame does not grow with the transcript.
//!
//! A resumed history is not laid out at once: its entries are held, and laid out from
//! the newest one up as the view comes near them (`defer_all`, `reveal`), so resuming a
//! long session costs what its last screens cost.

mod rows;

pub use rows::Entry;

use super::entry::{EntryKind, RenderCtx};
use crate::msg::HighlightRequest;
use crate::wrap::Anchor;
use claw_agent::event::apply_delta;
use claw_agent::{AssistantMessage, MessageDelta};
use ratatui::text::Line;
use rows::Dirty;

/// A selectable item of the transcript: a tool card or a code block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The entry that shows it.
    pub entry: usize,
    /// Its place among that entry's items.
    pub ordinal: usize,
    /// Its rows in the whole transcript.
    pub rows: std::ops::Range<usize>,
    /// What it is.
    pub anchor: Anchor,
}

/// All entries and their row offsets.
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    offsets: Vec<usize>,
    width: u16,
    dirty: Vec<usize>,
    /// Streamed answers that ended: shown as streamed in one more frame (the last
    /// tokens appear at the cost of a tail), then rendered in full.
    finishing: Vec<usize>,
    /// The ones whose extra frame was drawn.
    finishing_ready: Vec<usize>,
    /// Entries before this one are held but not laid out yet (no rows).
    laid_from: usize,
}

impl Transcript {
    /// Appends an entry; returns its index.
    pub(super) fn push(&mut self, kind: EntryKind) -> usize {
        let streaming = false;
        self.push_entry(Entry::new(kind, streaming))
    }

    /// Appends an answer that is still arriving; returns its index.
    pub(super) fn push_streaming(&mut self, message: AssistantMessage) -> usize {
        self.push_entry(Entry::new(EntryKind::Assistant(Box::new(message)), true))
    }

    fn push_entry(&mut self, entry: Entry) -> usize {
        self.entries.push(entry);
        let i = self.entries.len() - 1;
        self.dirty.push(i);
        i
    }

    /// The entries.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Applies a streamed delta to the answer at `index`.
    pub(super) fn apply_delta(&mut self, index: usize, delta: &MessageDelta) {
        let Some(entry) = self.entries.get_mut(index) else {
            return;
        };
        if let EntryKind::Assistant(message) = &mut entry.kind {
            // Arguments stay unparsed until the message ends: parsing each fragment would
            // cost the square of their length.
            apply_delta(message, &mut entry.raw_args, delta);
            if entry.dirty == Dirty::Clean {
                entry.dirty = Dirty::Tail;
                self.dirty.push(index);
            }
        }
    }

    /// Replaces the answer at `index`, which was streamed on screen, with its final
    /// form. The next frame only adds the last tokens (a full render of a long answer
    /// would hold them back); the full render follows in the frame after.
    pub(super) fn finish_streamed(&mut self, index: usize, message: AssistantMessage) {
        let Some(entry) = self.entries.get_mut(index) else {
            return;
        };
        if !entry.streaming {
            return self.finish(index, message);
        }
        entry.kind = EntryKind::Assistant(Box::new(message));
        if entry.dirty == Dirty::Clean {
            entry.dirty = Dirty::Tail;
            self.dirty.push(index);
        }
        self.finishing.push(index);
    }

    /// Whether a streamed answer still waits for its full rendering.
    pub(super) fn finishing(&self) -> bool {
        !self.finishing.is_empty() || !self.finishing_ready.is_empty()
    }

    /// Replaces the entry at `index` (the live compaction line by its outcome).
    pub(super) fn replace(&mut self, index: usize, kind: EntryKind) {
        if let Some(entry) = self.entries.get_mut(index) {
            entry.kind = kind;
            entry.streaming = false;
            self.invalidate(index);
        }
    }

    /// Replaces the answer at `index` with its final form.
    pub(super) fn finish(&mut self, index: usize, message: AssistantMessage) {
        if let Some(entry) = self.entries.get_mut(index) {
            entry.kind = EntryKind::Assistant(Box::new(message));
            entry.streaming = false;
            self.invalidate(index);
        }
    }

    /// Marks an entry for a full re-render.
    pub(super) fn invalidate(&mut self, index: usize) {
        if let Some(entry) = self.entries.get_mut(index) {
            if entry.dirty == Dirty::Clean {
                self.dirty.push(index);
            }
            entry.dirty = Dirty::Full;
        }
    }

    /// Marks every entry for a full re-render (thinking toggled, theme changed).
    pub(super) fn invalidate_all(&mut self) {
        for i in 0..self.entries.len() {
            self.invalidate(i);
        }
    }

    /// Whether a layout at `width` would render anything again.
    pub(super) fn needs_layout(&self, width: u16) -> bool {
        width != self.width
            || !self.dirty.is_empty()
            || !self.finishing.is_empty()
            || !self.finishing_ready.is_empty()
            || self.offsets.len() != self.entries.len() + 1
    }

    /// Renders what changed at `width` and updates the offsets. Returns, per entry
    /// rendered, the code blocks it shows without a highlight.
    pub(super) fn layout(
        &mut self,
        width: u16,
        ctx: &RenderCtx<'_>,
    ) -> Vec<(usize, Vec<HighlightRequest>)> {
        if width != self.width {
            self.width = width;
            self.invalidate_all();
        }
        for i in std::mem::take(&mut self.finishing_ready) {
            if let Some(entry) = self.entries.get_mut(i) {
                entry.streaming = false;
            }
            self.invalidate(i);
        }
        self.finishing_ready = std::mem::take(&mut self.finishing);
        let mut missing = Vec::new();
        if self.dirty.is_empty() && self.offsets.len() == self.entries.len() + 1 {
            return missing;
        }
        let mut dirty = std::mem::take(&mut self.dirty);
        // Entries not laid out yet are rendered when they are revealed.
        dirty.retain(|&i| i >= self.laid_from);
        dirty.sort_unstable();
        dirty.dedup();
        let from = dirty.first().copied().unwrap_or(self.entries.len());
        for i in dirty {
            if let Some(entry) = self.entries.get_mut(i)
                && entry.dirty != Dirty::Clean
            {
                let requests = entry.render(i == 0, width, ctx);
                entry.needs_highlight = !requests.is_empty();
                if !requests.is_empty() {
                    missing.push((i, requests));
                }
            }
        }
        self.offsets_from(from);
        missing
    }

    /// Recomputes the row offsets of the entries from `from` on.
    fn offsets_from(&mut self, from: usize) {
        let from = from.min(self.offsets.len().saturating_sub(1));
        self.offsets.truncate(from + 1);
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        for i in from..self.entries.len() {
            let next = self.offsets[i] + self.entries[i].height();
            self.offsets.push(next);
        }
    }

    /// Holds every entry there is now without laying it out: they get their rows when
    /// `reveal` reaches them, newest first.
    pub(super) fn defer_all(&mut self) {
        for entry in &mut self.entries {
            entry.unlay();
        }
        self.laid_from = self.entries.len();
        self.dirty.clear();
        self.offsets.clear();
    }

    /// How many entries (the oldest) are not laid out yet.
    pub fn deferred(&self) -> usize {
        self.laid_from
    }

    /// Lays out the newest entries not laid out yet until they make at least `rows`
    /// rows (or none is left); returns the rows added above the others. Code they show
    /// is highlighted once it is on screen (`missing_highlights`).
    pub(super) fn reveal(&mut self, rows: usize, ctx: &RenderCtx<'_>) -> usize {
        let mut added = 0;
        let before = self.laid_from;
        while self.laid_from > 0 && added < rows {
            self.laid_from -= 1;
            let i = self.laid_from;
            let entry = &mut self.entries[i];
            entry.dirty = Dirty::Full;
            let requests = entry.render(i == 0, self.width, ctx);
            entry.needs_highlight = !requests.is_empty();
            added += entry.height();
        }
        if self.laid_from < before {
            self.offsets_from(self.laid_from);
        }
        added
    }

    /// Renders again the entries in `range` that show code without a highlight and
    /// returns those blocks (asked only for what is on screen).
    pub(super) fn missing_highlights(
        &mut self,
        range: std::ops::Range<usize>,
        ctx: &RenderCtx<'_>,
    ) -> Vec<(usize, Vec<HighlightRequest>)> {
        let mut out = Vec::new();
        let end = range.end.min(self.entries.len());
        for i in range.start.min(end)..end {
            let entry = &mut self.entries[i];
            if !entry.needs_highlight || entry.streaming {
                continue;
            }
            entry.dirty = Dirty::Full;
            let requests = entry.render(i == 0, self.width, ctx);
            entry.needs_highlight = false;
            if !requests.is_empty() {
                out.push((i, requests));
            }
        }
        out
    }

    /// Marks that an entry's missing highlights were requested.
    pub(super) fn highlights_requested(&mut self, index: usize) {
        if let Some(e) = self.entries.get_mut(index) {
            e.needs_highlight = false;
        }
    }

    /// Rows in all, at the current width.
    pub fn total_rows(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// The entries overlapping rows `top..top + height`.
    pub fn entries_in(&self, top: usize, height: usize) -> std::ops::Range<usize> {
        if self.offsets.len() < 2 {
            return 0..0;
        }
        let first = self
            .offsets
            .partition_point(|&o| o <= top)
            .saturating_sub(1);
        let last = self.offsets.partition_point(|&o| o < top + height);
        first..last.min(self.entries.len()).max(first)
    }

    /// The rows `top..top + height` (fewer at the end).
    pub fn rows(&self, top: usize, height: usize) -> impl Iterator<Item = &Line<'static>> {
        let range = self.entries_in(top, height);
        let start = range.start;
        self.entries[range]
            .iter()
            .enumerate()
            .flat_map(move |(k, e)| {
                let offset = self.offsets[start + k];
                let from = top.saturating_sub(offset);
                let to = (top + height).saturating_sub(offset).min(e.height());
                (from..to).filter_map(move |r| e.row(r))
            })
    }

    /// Every selectable item, top to bottom (as laid out by the last frame).
    pub fn items(&self) -> Vec<Item> {
        let mut items = Vec::new();
        for (i, entry) in self.entries.iter().enumerate() {
            let Some(&offset) = self.offsets.get(i) else {
                break;
            };
            for (ordinal, (rows, anchor)) in entry.anchors().enumerate() {
                items.push(Item {
                    entry: i,
                    ordinal,
                    rows: rows.start + offset..rows.end + offset,
                    anchor: anchor.clone(),
                });
            }
        }
        items
    }

    /// The rows of item `ordinal` of entry `entry`, in the whole transcript.
    pub fn item_rows(&self, entry: usize, ordinal: usize) -> Option<std::ops::Range<usize>> {
        let offset = *self.offsets.get(entry)?;
        let (rows, _) = self.entries.get(entry)?.anchors().nth(ordinal)?;
        Some(rows.start + offset..rows.end + offset)
    }

    /// The text of the last answer, for `/copy`.
    pub(super) fn last_answer(&self) -> Option<String> {
        self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::Assistant(m) if !m.text().trim().is_empty() => Some(m.text()),
            EntryKind::Recorded(r) => r
                .assistant()
                .map(AssistantMessage::text)
                .filter(|t| !t.trim().is_empty()),
            _ => None,
        })
    }

    /// Forgets every entry.
    pub(super) fn clear(&mut self) {
        *self = Transcript {
            width: self.width,
            laid_from: 0,
            ..Transcript::default()
        };
    }
}
