//! The chat part: the transcript (messages, answers as they stream, inline tool cards,
//! notices) and its scroll position. Only the visible rows of the cached, wrapped
//! transcript are copied into a frame.

mod entry;
mod transcript;

pub use entry::{CardInfo, EntryKind, short_tokens};
pub use transcript::{Entry, Transcript};

use super::highlight::HighlightStore;
use super::part::Handled;
use super::theme::{Theme, Token};
use super::widgets::{pane_frame, put_line};
use super::wrap::{StyledLine, str_width, wrap};
use crate::agent::{
    AssistantMessage, CompactionEnd, CompactionResult, Message, MessageDelta, NoticeLevel,
};
use crossterm::event::{KeyCode, KeyEvent};
use entry::RenderCtx;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Shortest time between two highlight requests for the answer being streamed.
const STREAM_HIGHLIGHT_GAP: Duration = Duration::from_millis(250);

/// The chat's scroll position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Scroll {
    /// Whether the view sticks to the bottom (follows the stream).
    follow: bool,
    /// First visible row when not following.
    top: usize,
    /// Whether content arrived below while scrolled up.
    unseen: bool,
}

/// The transcript, the answer streaming into it, the tool cards and the scroll position.
#[derive(Clone, Debug)]
pub struct Chat {
    transcript: Transcript,
    /// The entry of the answer being streamed.
    streaming: Option<usize>,
    /// The entry that shows each tool call's card.
    call_entries: HashMap<String, usize>,
    /// Card states of tool calls by id.
    cards: HashMap<String, CardInfo>,
    expand_thinking: bool,
    /// Whether compaction summaries are expanded (Enter in the chat; Ctrl+T too).
    expand_summaries: bool,
    /// The live line of the compaction running now.
    compacting: Option<usize>,
    /// Whether any compaction divider is shown (Enter toggles their summaries).
    has_summaries: bool,
    scroll: Scroll,
    /// Rows at the last frame (more rows while scrolled up: something new is below).
    last_total_rows: usize,
    last_stream_highlight: Option<Instant>,
}

impl Default for Chat {
    fn default() -> Self {
        Self {
            transcript: Transcript::default(),
            streaming: None,
            call_entries: HashMap::new(),
            cards: HashMap::new(),
            expand_thinking: false,
            expand_summaries: false,
            compacting: None,
            has_summaries: false,
            scroll: Scroll {
                follow: true,
                top: 0,
                unseen: false,
            },
            last_total_rows: 0,
            last_stream_highlight: None,
        }
    }
}

impl Chat {
    /// The transcript.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The card state of the tool call `id`.
    pub fn card(&self, id: &str) -> Option<&CardInfo> {
        self.cards.get(id)
    }

    /// Whether thinking blocks are expanded.
    pub fn thinking_expanded(&self) -> bool {
        self.expand_thinking
    }

    /// The text of the last answer, for `/copy`.
    pub fn last_answer(&self) -> Option<String> {
        self.transcript.last_answer()
    }

    /// The first visible row in a pane of `height` rows.
    pub fn top(&self, height: usize) -> usize {
        let max_top = self.transcript.total_rows().saturating_sub(height);
        if self.scroll.follow {
            max_top
        } else {
            self.scroll.top.min(max_top)
        }
    }

    /// Keys while the chat has focus (`height`: its rows): arrows scroll, Home and End
    /// jump.
    pub(crate) fn handle_key(&mut self, key: &KeyEvent, height: usize) -> Handled {
        match key.code {
            KeyCode::Up => self.scroll_by(-1, height),
            KeyCode::Down => self.scroll_by(1, height),
            KeyCode::Home => self.scroll_to(false),
            KeyCode::End => self.scroll_to(true),
            KeyCode::Enter if self.has_summaries => return self.toggle_summaries(),
            _ => return Handled::ignored(),
        }
        Handled::changed()
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
    fn scroll_to(&mut self, bottom: bool) {
        self.scroll.follow = bottom;
        self.scroll.top = 0;
        if bottom {
            self.scroll.unseen = false;
        }
    }

    /// Follows the bottom again (the user sent something).
    pub(crate) fn follow(&mut self) {
        self.scroll.follow = true;
        self.scroll.unseen = false;
    }

    /// Adds an entry.
    pub(crate) fn push(&mut self, kind: EntryKind) -> Handled {
        self.transcript.push(kind);
        Handled::changed()
    }

    /// Adds a notice.
    pub(crate) fn notice(&mut self, level: NoticeLevel, text: impl Into<String>) -> Handled {
        self.push(EntryKind::Notice(level, text.into()))
    }

    /// A message that is not an answer ended: the user's, a notification, a notice.
    pub(crate) fn message(&mut self, message: Message) -> Handled {
        let kind = match message {
            Message::User(u) => EntryKind::User(with_chips(u.content, &u.images)),
            Message::Notification(n) => EntryKind::Notification {
                source: n.source,
                text: n.content,
            },
            Message::Notice(n) => EntryKind::Notice(n.level, n.text),
            Message::Assistant(_) | Message::ToolResult(_) => return Handled::changed(),
        };
        self.push(kind)
    }

    /// An answer began to stream.
    pub(crate) fn start_answer(&mut self, message: AssistantMessage) -> Handled {
        self.streaming = Some(self.transcript.push_streaming(message));
        Handled::changed()
    }

    /// A piece of the streaming answer arrived.
    pub(crate) fn apply_delta(&mut self, delta: &MessageDelta) -> Handled {
        if let Some(i) = self.streaming {
            if let MessageDelta::ToolCallStart { id, .. } = delta {
                self.call_entries.insert(id.clone(), i);
            }
            self.transcript.apply_delta(i, delta);
        }
        Handled::changed()
    }

    /// An answer ended (streamed here or not); `cards` are its calls' states in the tree.
    pub(crate) fn end_answer(
        &mut self,
        message: AssistantMessage,
        cards: Vec<(String, CardInfo)>,
    ) -> Handled {
        let streamed = self.streaming.take();
        let index = match streamed {
            Some(i) => i,
            None => self.transcript.push_streaming(message.clone()),
        };
        for call in message.tool_calls() {
            self.call_entries.insert(call.id.clone(), index);
        }
        for (id, card) in cards {
            // The answer renders again as it finishes: no invalidation is needed.
            self.cards.insert(id, card);
        }
        if streamed.is_some() {
            self.transcript.finish_streamed(index, message);
        } else {
            self.transcript.finish(index, message);
        }
        Handled::changed()
    }

    /// The run ended: nothing streams any more. Returns the calls whose cards still
    /// show them queued or running.
    pub(crate) fn end_run(&mut self) -> Vec<String> {
        self.streaming = None;
        self.cards
            .iter()
            .filter(|(_, c)| c.is_pending())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Every call with a card.
    pub(crate) fn card_ids(&self) -> Vec<String> {
        self.cards.keys().cloned().collect()
    }

    /// A call's state changed: its card, and the answer that shows it, follow.
    pub(crate) fn set_card(&mut self, id: &str, card: CardInfo) -> Handled {
        if self.cards.get(id) == Some(&card) {
            return Handled::unchanged();
        }
        self.cards.insert(id.to_owned(), card);
        if let Some(&entry) = self.call_entries.get(id) {
            self.transcript.invalidate(entry);
        }
        Handled::changed()
    }

    /// A compaction began: the live line.
    pub(crate) fn compaction_started(&mut self, tokens_before: u64) -> Handled {
        let index = self
            .transcript
            .push(EntryKind::Compacting { tokens_before });
        self.compacting = Some(index);
        Handled::changed()
    }

    /// A compaction ended: the live line becomes the divider, or says why nothing
    /// changed.
    pub(crate) fn compaction_ended(&mut self, end: &CompactionEnd) -> Handled {
        let why = end.error.as_deref().unwrap_or("no reason was given");
        let kind = match end.outcome {
            CompactionResult::Aborted => EntryKind::Notice(
                NoticeLevel::Info,
                "Compaction cancelled: nothing changed, the model still gets the whole history."
                    .into(),
            ),
            CompactionResult::NothingToCompact => {
                EntryKind::Notice(NoticeLevel::Info, format!("Nothing to compact: {why}."))
            }
            CompactionResult::Failed => EntryKind::Notice(
                NoticeLevel::Warning,
                format!("Compaction failed, nothing changed: {why}"),
            ),
            CompactionResult::Compacted => {
                self.has_summaries = true;
                EntryKind::Compacted {
                    tokens_before: end.tokens_before,
                    tokens_after: end.tokens_after,
                    summary: end.summary.clone(),
                }
            }
        };
        match self.compacting.take() {
            Some(index) => self.transcript.replace(index, kind),
            None => {
                self.transcript.push(kind);
            }
        }
        Handled::changed()
    }

    /// A compaction recorded in a loaded session: its divider.
    pub(crate) fn compacted(&mut self, tokens_before: u64, tokens_after: u64, summary: String) {
        self.has_summaries = true;
        self.transcript.push(EntryKind::Compacted {
            tokens_before,
            tokens_after,
            summary,
        });
    }

    /// Expands or collapses every compaction summary.
    pub(crate) fn toggle_summaries(&mut self) -> Handled {
        self.expand_summaries = !self.expand_summaries;
        self.transcript.invalidate_all();
        Handled::changed()
    }

    /// Whether compaction summaries are expanded.
    pub fn summaries_expanded(&self) -> bool {
        self.expand_summaries
    }

    /// Expands or collapses every thinking block.
    pub(crate) fn toggle_thinking(&mut self) -> Handled {
        self.expand_thinking = !self.expand_thinking;
        self.transcript.invalidate_all();
        Handled::changed()
    }

    /// The highlight of code that entry `index` shows arrived.
    pub(crate) fn highlighted(&mut self, index: usize) {
        self.transcript.invalidate(index);
    }

    /// Forgets the conversation (another session); the scroll follows the bottom again.
    pub(crate) fn clear(&mut self) {
        self.transcript.clear();
        self.cards.clear();
        self.call_entries.clear();
        self.streaming = None;
        self.compacting = None;
        self.has_summaries = false;
        self.follow();
        self.last_total_rows = 0;
    }

    /// Brings the layout caches up to date for a pane whose text area is `inner`, and
    /// asks for the highlights of the code on screen (of the streaming answer, only its
    /// newest block, a few times a second). `changed` says another frame is due.
    pub(crate) fn prepare(
        &mut self,
        inner: Rect,
        highlights: &mut HighlightStore,
        theme: &Theme,
        now: Instant,
    ) -> Handled {
        let ctx = RenderCtx {
            theme,
            highlights: highlights.cache(),
            cards: &self.cards,
            expand_thinking: self.expand_thinking,
            expand_summaries: self.expand_summaries,
        };
        let rendered = self.transcript.layout(inner.width, &ctx);
        let total = self.transcript.total_rows();
        if total > self.last_total_rows && !self.scroll.follow {
            self.scroll.unseen = true;
        }
        self.last_total_rows = total;
        let height = usize::from(inner.height);
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

    /// Draws the pane into `area`.
    pub(crate) fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        let text_area = super::layout::inner(area);
        let height = usize::from(text_area.height);
        let total = self.transcript.total_rows();
        let top = self.top(height);
        let mut title = " Chat ".to_owned();
        if !self.scroll.follow && total > height {
            let percent = (top + height) * 100 / total.max(1);
            title = format!(" Chat · {percent}% ");
        }
        pane_frame(theme, area, &title, focused, buf);
        if self.transcript.is_empty() {
            let welcome = [
                StyledLine::plain(
                    "Welcome to claw-tui.",
                    theme.fg(Token::Accent).add_modifier(Modifier::BOLD),
                ),
                StyledLine::blank(),
                StyledLine::plain("Type a message below and press Enter.", theme.text()),
                StyledLine::plain(
                    "While the agent works, Enter queues a follow-up; Esc steers (with text) or interrupts (without).",
                    theme.dim(),
                ),
                StyledLine::plain("F1 shows every key; / lists the commands.", theme.dim()),
            ];
            for (i, line) in wrap(&welcome, text_area.width)
                .iter()
                .enumerate()
                .take(height)
            {
                buf.set_line(text_area.x, text_area.y + i as u16, line, text_area.width);
            }
            return;
        }
        for (i, row) in self.transcript.rows(top, height).enumerate() {
            put_line(
                buf,
                text_area.x,
                text_area.y + i as u16,
                row,
                text_area.width,
            );
        }
        if !self.scroll.follow && self.scroll.unseen && text_area.height > 0 {
            let marker = " ↓ new messages below (End) ";
            let width = str_width(marker) as u16;
            let x = text_area.x + text_area.width.saturating_sub(width);
            let y = text_area.y + text_area.height - 1;
            let style = theme
                .fg(Token::Accent)
                .add_modifier(Modifier::BOLD | Modifier::REVERSED);
            buf.set_stringn(x, y, marker, usize::from(text_area.width), style);
        }
    }
}

/// A user message's text followed by a chip for each attached image, one per line:
/// `[image: shot.png 1280×720, 210 KB]`.
fn with_chips(text: String, images: &[crate::agent::ImageData]) -> String {
    images.iter().fold(text, |mut out, image| {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&image.chip());
        out
    })
}
