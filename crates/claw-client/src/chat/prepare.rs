//! Bringing the chat up to date before a frame: the layout of what is on screen, the
//! older history laid out as the view nears it, and the code highlights to ask for.

use super::entry::RenderCtx;
use super::{Chat, ChatFrame, Scroll, Transcript};
use crate::highlight::HighlightStore;
use crate::part::Handled;
use ratatui::layout::Rect;
use std::time::Duration;

/// Shortest time between two highlight requests for the answer being streamed.
const STREAM_HIGHLIGHT_GAP: Duration = Duration::from_millis(250);

/// Rows of a resumed history kept laid out above the view: when fewer are left while
/// scrolling up, older entries are laid out until twice as many are.
const REVEAL_AHEAD: usize = 200;

impl Chat {
    /// Brings the layout caches up to date for a pane whose text area is `inner`, and
    /// asks for the highlights of the code on screen (of the streaming answer, only its
    /// newest block, a few times a second). `changed` says another frame is due.
    pub(crate) fn prepare(
        &mut self,
        inner: Rect,
        highlights: &mut HighlightStore,
        frame: &ChatFrame<'_>,
    ) -> Handled {
        let now = frame.now;
        let ctx = RenderCtx {
            theme: frame.theme,
            highlights: highlights.cache(),
            cards: &self.cards,
            expand_thinking: self.expand_thinking,
            now,
            spinner: frame.spinner,
            expand_key: frame.expand_key,
            width: inner.width,
            expand_summaries: self.expand_summaries,
        };
        let relaid = self.transcript.needs_layout(inner.width);
        let rendered = self.transcript.layout(inner.width, &ctx);
        let height = self.text_rows(usize::from(inner.height));
        self.height = height.max(1);
        let searching = self.find.as_ref().is_some_and(|f| !f.query().is_empty());
        let top = self.top(height);
        let revealed = reveal_older(
            &mut self.transcript,
            &mut self.scroll,
            &mut self.reveal_all,
            searching,
            top,
            &ctx,
        );
        if let Some(find) = &mut self.find {
            find.shift(revealed);
        }
        if let Some(drag) = &mut self.drag {
            drag.shift(revealed);
        }
        let total = self.transcript.total_rows();
        if total > self.last_total_rows + revealed && !self.scroll.follow {
            self.scroll.unseen = true;
        }
        let grew = total != self.last_total_rows;
        self.last_total_rows = total;
        if let Some(find) = &mut self.find
            && (grew || relaid || find.is_stale())
        {
            find.refresh(&self.transcript);
        }
        let top = self.top(height);
        let visible = self.transcript.entries_in(top, height);
        let mut wanted: Vec<(usize, Vec<_>)> = Vec::new();
        for (entry, requests) in rendered {
            if Some(entry) == self.streaming {
                // While an answer streams, only its newest code block is highlighted, at
                // most a few times a second: each result re-renders the whole answer, and
                // a fast stream would otherwise highlight every block it scrolls past.
                let newest = requests
                    .into_iter()
                    .rev()
                    .find(|r| !highlights.is_waiting(r.key));
                let due = self
                    .last_stream_highlight
                    .is_none_or(|t| now.saturating_duration_since(t) >= STREAM_HIGHLIGHT_GAP);
                if let Some(request) = newest.filter(|_| due) {
                    self.last_stream_highlight = Some(now);
                    wanted.push((entry, vec![request]));
                }
            } else if visible.contains(&entry) {
                wanted.push((entry, requests));
            }
        }
        wanted.extend(self.transcript.missing_highlights(visible, &ctx));
        let mut handled = Handled::default();
        for (entry, requests) in wanted {
            self.transcript.highlights_requested(entry);
            for request in requests {
                if let Some(effect) = highlights.request_for(entry, request) {
                    handled.effects.push(effect);
                }
            }
        }
        // A streamed answer that just ended gets its final rendering in the next frame.
        handled.changed = self.transcript.finishing();
        handled
    }
}

/// Lays out older entries of a resumed history when the view (its first row `top`)
/// comes near the top of what is laid out (all of them after Home, or while find has a
/// query), keeping the rows on screen where they are; returns the rows added.
fn reveal_older(
    transcript: &mut Transcript,
    scroll: &mut Scroll,
    reveal_all: &mut bool,
    searching: bool,
    top: usize,
    ctx: &RenderCtx<'_>,
) -> usize {
    let to_top = std::mem::take(reveal_all);
    if transcript.deferred() == 0 {
        return 0;
    }
    let wanted = if to_top || searching {
        usize::MAX
    } else if top < REVEAL_AHEAD {
        2 * REVEAL_AHEAD - top
    } else {
        return 0;
    };
    let added = transcript.reveal(wanted, ctx);
    // Home shows the first rows; otherwise the rows on screen stay.
    if !scroll.follow && !to_top {
        scroll.top = top + added;
    }
    added
}
