//! The chat transcript and its layout caches.
//!
//! Every entry keeps its wrapped rows for the current width, so a frame only copies the
//! visible rows. The streaming answer keeps a `head` of rows that can no longer change
//! (everything before the last blank line outside a code fence) and re-renders only its
//! `tail`. Row offsets are prefix sums, so finding the first visible entry is a binary
//! search: the cost of a frame does not grow with the transcript.

use super::entry::{
    BlockTag, EntryKind, RenderCtx, block_tag, compacted_lines, ending_lines, gap_between,
    render_block_part, render_simple,
};
use crate::agent::event::apply_delta;
use crate::agent::{AssistantMessage, Block, MessageDelta};
use crate::tui::markdown::SplitScanner;
use crate::tui::msg::HighlightRequest;
use crate::tui::wrap::{StyledLine, wrap_into};
use ratatui::text::Line;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dirty {
    Clean,
    /// Only the streaming tail changed.
    Tail,
    /// Everything must be rendered again.
    Full,
}

/// How far the head of a streaming answer has been rendered.
#[derive(Clone, Debug, Default)]
struct Progress {
    done_blocks: usize,
    offset: usize,
    scanner: SplitScanner,
    last_tag: Option<BlockTag>,
}

/// One chat entry with its rows.
#[derive(Clone, Debug)]
pub struct Entry {
    /// What it is.
    pub kind: EntryKind,
    /// Whether it is an answer still arriving.
    pub streaming: bool,
    raw_args: Vec<String>,
    head: Vec<Line<'static>>,
    tail: Vec<Line<'static>>,
    progress: Progress,
    dirty: Dirty,
    needs_highlight: bool,
}

impl Entry {
    fn new(kind: EntryKind, streaming: bool) -> Self {
        Self {
            kind,
            streaming,
            raw_args: Vec::new(),
            head: Vec::new(),
            tail: Vec::new(),
            progress: Progress::default(),
            dirty: Dirty::Full,
            needs_highlight: false,
        }
    }

    /// Rows at the current width.
    pub fn height(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Row `i` at the current width.
    pub fn row(&self, i: usize) -> Option<&Line<'static>> {
        match i.checked_sub(self.head.len()) {
            None => self.head.get(i),
            Some(t) => self.tail.get(t),
        }
    }

    /// Renders what `dirty` asks for; returns the code blocks lacking a highlight.
    fn render(&mut self, first: bool, width: u16, ctx: &RenderCtx<'_>) -> Vec<HighlightRequest> {
        let mut missing = Vec::new();
        if self.dirty == Dirty::Full {
            self.head.clear();
            self.tail.clear();
            self.progress = Progress::default();
            if !first {
                self.head.push(Line::default());
            }
        }
        if self.streaming && matches!(self.kind, EntryKind::Assistant(_)) {
            self.render_streaming(width, ctx, &mut missing);
            self.dirty = Dirty::Clean;
            return missing;
        }
        let mut lines: Vec<StyledLine> = Vec::new();
        match &self.kind {
            EntryKind::Assistant(message) => {
                let mut last = None;
                for block in &message.content {
                    let tag = block_tag(block);
                    if gap_between(last, tag) {
                        lines.push(StyledLine::blank());
                    }
                    render_block_part(block, 0..usize::MAX, ctx, &mut lines, &mut missing);
                    last = Some(tag);
                }
                ending_lines(message, ctx.theme, &mut lines);
            }
            kind @ EntryKind::Compacted { .. } => {
                compacted_lines(kind, ctx, &mut lines, &mut missing);
            }
            other => render_simple(other, ctx.theme, &mut lines),
        }
        wrap_into(&lines, width, &mut self.head);
        self.dirty = Dirty::Clean;
        missing
    }

    fn render_streaming(
        &mut self,
        width: u16,
        ctx: &RenderCtx<'_>,
        missing: &mut Vec<HighlightRequest>,
    ) {
        let EntryKind::Assistant(message) = &self.kind else {
            return;
        };
        let blocks = &message.content;
        self.tail.clear();
        let Some(last) = blocks.len().checked_sub(1) else {
            return;
        };
        let p = &mut self.progress;
        let mut lines = Vec::new();
        while p.done_blocks < last {
            let block = &blocks[p.done_blocks];
            if let Block::Text { text } = block
                && p.offset > 0
            {
                if !text[p.offset.min(text.len())..].trim().is_empty() {
                    lines.push(StyledLine::blank());
                    render_block_part(block, p.offset..text.len(), ctx, &mut lines, missing);
                }
            } else {
                if gap_between(p.last_tag, block_tag(block)) {
                    lines.push(StyledLine::blank());
                }
                render_block_part(block, 0..usize::MAX, ctx, &mut lines, missing);
                p.last_tag = Some(block_tag(block));
            }
            p.done_blocks += 1;
            p.offset = 0;
            p.scanner = SplitScanner::default();
        }
        let block = &blocks[last];
        if let Block::Text { text } = block {
            let boundary = p.scanner.advance(text);
            if boundary > p.offset && !text[p.offset..boundary].trim().is_empty() {
                if p.offset == 0 {
                    if gap_between(p.last_tag, BlockTag::Text) {
                        lines.push(StyledLine::blank());
                    }
                    p.last_tag = Some(BlockTag::Text);
                } else {
                    lines.push(StyledLine::blank());
                }
                render_block_part(block, p.offset..boundary, ctx, &mut lines, missing);
            }
            p.offset = p.offset.max(boundary);
        }
        wrap_into(&lines, width, &mut self.head);
        let mut tail_lines = Vec::new();
        let mut ignored = Vec::new();
        match block {
            Block::Text { text } if text.len() > p.offset => {
                if text[p.offset..].trim().is_empty() {
                    return;
                }
                let continues = p.offset > 0;
                if continues || gap_between(p.last_tag, BlockTag::Text) {
                    tail_lines.push(StyledLine::blank());
                }
                // Code in the unfinished tail is highlighted once it is part of the head.
                render_block_part(
                    block,
                    p.offset..text.len(),
                    ctx,
                    &mut tail_lines,
                    &mut ignored,
                );
            }
            Block::Text { .. } => {}
            other => {
                if gap_between(p.last_tag, block_tag(other)) {
                    tail_lines.push(StyledLine::blank());
                }
                render_block_part(other, 0..usize::MAX, ctx, &mut tail_lines, &mut ignored);
            }
        }
        wrap_into(&tail_lines, width, &mut self.tail);
    }
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
}

impl Transcript {
    /// Appends an entry; returns its index.
    pub(super) fn push(&mut self, kind: EntryKind) -> usize {
        let streaming = false;
        self.push_entry(Entry::new(kind, streaming))
    }

    /// Appends an answer that is still arriving; returns its index.
    pub(super) fn push_streaming(&mut self, message: AssistantMessage) -> usize {
        self.push_entry(Entry::new(EntryKind::Assistant(message), true))
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
        entry.kind = EntryKind::Assistant(message);
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
            entry.kind = EntryKind::Assistant(message);
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
        let from = from.min(self.offsets.len().saturating_sub(1));
        self.offsets.truncate(from + 1);
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        for i in from..self.entries.len() {
            let next = self.offsets[i] + self.entries[i].height();
            self.offsets.push(next);
        }
        missing
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

    /// The text of the last answer, for `/copy`.
    pub(super) fn last_answer(&self) -> Option<String> {
        self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::Assistant(m) if !m.text().trim().is_empty() => Some(m.text()),
            _ => None,
        })
    }

    /// Forgets every entry.
    pub(super) fn clear(&mut self) {
        *self = Transcript {
            width: self.width,
            ..Transcript::default()
        };
    }
}
