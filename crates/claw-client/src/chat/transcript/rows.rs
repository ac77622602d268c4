//! One chat entry with its rows: what it is, and its wrapped rows at the current
//! width (for a streaming answer, a `head` that no longer changes and a `tail`).

use super::super::entry::{
    BlockTag, EntryKind, RenderCtx, block_tag, compacted_lines, ending_lines, gap_between,
    render_block_part, render_simple, shell_lines, user_lines,
};
use crate::chat::user_text;
use crate::markdown::SplitScanner;
use crate::msg::HighlightRequest;
use crate::wrap::{Anchor, AnchorRows, StyledLine, wrap_anchored};
use claw_agent::{AssistantMessage, Block, Message};
use ratatui::text::Line;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dirty {
    Clean,
    /// Only the streaming tail changed.
    Tail,
    /// Everything must be rendered again.
    Full,
}

/// How far the head of a streaming answer has been rendered.
#[derive(Clone, Debug, Default)]
pub(super) struct Progress {
    done_blocks: usize,
    offset: usize,
    scanner: SplitScanner,
    last_tag: Option<BlockTag>,
}

/// One chat entry with its rows.
///
/// The rows live in a box of their own, made when the entry is laid out and dropped
/// when it is forgotten: a long resumed session has tens of thousands of entries, of
/// which only those near the screen are ever laid out, and an entry that is not costs
/// a few words instead of six empty lists.
#[derive(Clone, Debug)]
pub struct Entry {
    /// What it is.
    pub kind: EntryKind,
    /// Whether it is an answer still arriving.
    pub streaming: bool,
    /// A streaming answer's tool-call arguments as they arrived (parsed at its end).
    pub(super) raw_args: Vec<String>,
    pub(super) dirty: Dirty,
    pub(super) needs_highlight: bool,
    rows: Option<Box<Rows>>,
}

/// An entry's wrapped rows at the current width.
#[derive(Clone, Debug, Default)]
struct Rows {
    head: Vec<Line<'static>>,
    tail: Vec<Line<'static>>,
    /// The selectable items (cards, code blocks) in `head`, and in `tail` (rows
    /// counted from the tail's start).
    head_anchors: Vec<AnchorRows>,
    tail_anchors: Vec<AnchorRows>,
    progress: Progress,
}

impl Entry {
    pub(super) fn new(kind: EntryKind, streaming: bool) -> Self {
        Self {
            kind,
            streaming,
            raw_args: Vec::new(),
            dirty: Dirty::Full,
            needs_highlight: false,
            rows: None,
        }
    }

    /// Forgets its rows: it is laid out again when it is revealed.
    pub(super) fn unlay(&mut self) {
        self.rows = None;
        self.dirty = Dirty::Full;
        self.needs_highlight = false;
    }

    /// Rows at the current width.
    pub fn height(&self) -> usize {
        self.rows
            .as_ref()
            .map_or(0, |r| r.head.len() + r.tail.len())
    }

    /// Row `i` at the current width.
    pub fn row(&self, i: usize) -> Option<&Line<'static>> {
        let rows = self.rows.as_ref()?;
        match i.checked_sub(rows.head.len()) {
            None => rows.head.get(i),
            Some(t) => rows.tail.get(t),
        }
    }

    /// The selectable items it shows, with their rows within the entry, in order.
    pub fn anchors(&self) -> impl Iterator<Item = (std::ops::Range<usize>, &Anchor)> {
        let (head_anchors, tail_anchors, head) = match self.rows.as_deref() {
            Some(r) => (&r.head_anchors[..], &r.tail_anchors[..], r.head.len()),
            None => (&[][..], &[][..], 0),
        };
        head_anchors
            .iter()
            .map(|a| (a.rows.clone(), &a.anchor))
            .chain(
                tail_anchors
                    .iter()
                    .map(move |a| (a.rows.start + head..a.rows.end + head, &a.anchor)),
            )
    }

    /// Renders what `dirty` asks for; returns the code blocks lacking a highlight.
    pub(super) fn render(
        &mut self,
        first: bool,
        width: u16,
        ctx: &RenderCtx<'_>,
    ) -> Vec<HighlightRequest> {
        let mut missing = Vec::new();
        let rows = self.rows.get_or_insert_with(Box::default);
        if self.dirty == Dirty::Full {
            **rows = Rows::default();
            if !first {
                rows.head.push(Line::default());
            }
        }
        if self.streaming
            && let EntryKind::Assistant(message) = &self.kind
        {
            rows.render_streaming(message, width, ctx, &mut missing);
            self.dirty = Dirty::Clean;
            return missing;
        }
        let mut lines: Vec<StyledLine> = Vec::new();
        match &self.kind {
            EntryKind::Assistant(message) => answer_lines(message, ctx, &mut lines, &mut missing),
            EntryKind::Recorded(recorded) => match recorded.message() {
                Message::Assistant(message) => answer_lines(message, ctx, &mut lines, &mut missing),
                Message::User(u) => user_lines(&user_text(u), ctx.theme, &mut lines),
                // Only prompts and answers are shown in place; the rest are copied.
                _ => {}
            },
            EntryKind::Shell { id, command, keep } => {
                shell_lines(id, command, *keep, ctx, &mut lines);
            }
            kind @ EntryKind::Compacted { .. } => {
                compacted_lines(kind, ctx, &mut lines, &mut missing);
            }
            other => render_simple(other, ctx, &mut lines),
        }
        wrap_anchored(&lines, width, &mut rows.head, &mut rows.head_anchors);
        self.dirty = Dirty::Clean;
        missing
    }
}

impl Rows {
    fn render_streaming(
        &mut self,
        message: &AssistantMessage,
        width: u16,
        ctx: &RenderCtx<'_>,
        missing: &mut Vec<HighlightRequest>,
    ) {
        let blocks = &message.content;
        self.tail.clear();
        self.tail_anchors.clear();
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
        wrap_anchored(&lines, width, &mut self.head, &mut self.head_anchors);
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
        wrap_anchored(&tail_lines, width, &mut self.tail, &mut self.tail_anchors);
    }
}

/// A finished answer: its blocks, then how it ended when not normally.
fn answer_lines(
    message: &AssistantMessage,
    ctx: &RenderCtx<'_>,
    lines: &mut Vec<StyledLine>,
    missing: &mut Vec<HighlightRequest>,
) {
    let mut last = None;
    for block in &message.content {
        let tag = block_tag(block);
        if gap_between(last, tag) {
            lines.push(StyledLine::blank());
        }
        render_block_part(block, 0..usize::MAX, ctx, lines, missing);
        last = Some(tag);
    }
    ending_lines(message, ctx.theme, lines);
}
