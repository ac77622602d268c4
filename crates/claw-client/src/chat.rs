//! The chat part: the transcript (messages, answers as they stream, inline tool cards,
//! notices), its scroll position, the selected item (a card or a code block) and find.
//! Only the visible rows of the cached, wrapped transcript are copied into a frame.

mod card;
mod compaction;
mod drag;
mod draw;
mod entry;
mod find;
mod prepare;
mod scroll;
mod select;
mod transcript;

pub use card::{CARD_LINES, CardBody, CardInfo};
pub use drag::Cell;
pub(crate) use draw::ChatView;
pub use entry::EntryKind;
pub use find::{Find, FindMatch};
pub use select::Picked;
pub use transcript::{Entry, Item, Transcript};

use super::part::Handled;
use crate::recorded::Recorded;
use crate::theme::Theme;
use claw_agent::{AssistantMessage, Block, Message, MessageDelta, NoticeLevel, UserMessage};
use crossterm::event::{KeyCode, KeyEvent};
use scroll::Scroll;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// What the frame step hands the chat besides the theme: the clock and spinner of
/// running cards, and the key their footers name.
pub(crate) struct ChatFrame<'a> {
    /// Colours.
    pub theme: &'a Theme,
    /// The time of the frame.
    pub now: Instant,
    /// The spinner frame.
    pub spinner: usize,
    /// The key that expands a card's output.
    pub expand_key: &'a str,
}

/// The transcript, the answer streaming into it, the tool cards and the scroll position.
#[derive(Clone, Debug)]
pub struct Chat {
    transcript: Transcript,
    /// The entry of the answer being streamed.
    streaming: Option<usize>,
    /// An answer that began but has shown nothing yet: it gets its entry with its first
    /// piece (or its end), so that what happens meanwhile (retries) comes before it.
    unshown: Option<AssistantMessage>,
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
    /// Calls whose whole output their card shows.
    expanded: HashSet<String>,
    /// The selected item: (entry, its place among the entry's items).
    selected: Option<(usize, usize)>,
    /// Find in the transcript, while open.
    find: Option<Find>,
    /// Rows of the pane's text area at the last frame.
    height: usize,
    /// The view jumped to the top: the entries not laid out yet are, at the next frame.
    reveal_all: bool,
    /// Text selected with the mouse.
    drag: Option<drag::Drag>,
    /// The retry line counting down now, while its wait lasts.
    retry_entry: Option<usize>,
}

impl Default for Chat {
    fn default() -> Self {
        Self {
            transcript: Transcript::default(),
            streaming: None,
            unshown: None,
            call_entries: HashMap::new(),
            cards: HashMap::new(),
            expand_thinking: false,
            expand_summaries: false,
            compacting: None,
            has_summaries: false,
            scroll: Scroll::default(),
            last_total_rows: 0,
            last_stream_highlight: None,
            expanded: HashSet::new(),
            selected: None,
            find: None,
            height: 1,
            reveal_all: false,
            drag: None,
            retry_entry: None,
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

    /// Whether the conversation ends in an answer that failed (what `/retry` sends
    /// again); notices and retry lines after it do not count.
    pub fn ends_in_failure(&self) -> bool {
        self.transcript
            .entries()
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                EntryKind::Assistant(a) => Some(a.stop_reason == claw_agent::StopReason::Error),
                EntryKind::Recorded(r) => Some(
                    r.assistant()
                        .is_some_and(|a| a.stop_reason == claw_agent::StopReason::Error),
                ),
                EntryKind::User(_) | EntryKind::Shell { .. } | EntryKind::Compacted { .. } => {
                    Some(false)
                }
                _ => None,
            })
            .unwrap_or(false)
    }

    /// Whether the call's card shows all of its output.
    pub fn is_expanded(&self, id: &str) -> bool {
        self.expanded.contains(id)
    }

    /// Shows all of a call's output on its card, or only its last lines again; returns
    /// whether it is expanded now. The root then refreshes the card.
    pub(crate) fn toggle_expanded(&mut self, id: &str) -> bool {
        if !self.expanded.remove(id) {
            self.expanded.insert(id.to_owned());
            return true;
        }
        false
    }

    /// The newest card that has more output to show (or shows all of it), for the
    /// expand key when no card is selected.
    pub fn newest_expandable(&self) -> Option<String> {
        self.transcript
            .items()
            .into_iter()
            .rev()
            .find_map(|item| match &item.anchor {
                super::wrap::Anchor::Card(id)
                    if self
                        .cards
                        .get(id.as_ref())
                        .is_some_and(CardInfo::can_expand) =>
                {
                    Some(id.to_string())
                }
                _ => None,
            })
    }

    /// Keys while the chat has focus (`height`: its rows): arrows scroll, Home and End
    /// jump, `[` `]` select a card or code block, `c` copies it, `o` or Enter expands a
    /// selected card.
    pub(crate) fn handle_key(&mut self, key: &KeyEvent, height: usize) -> Handled {
        match key.code {
            KeyCode::Up => self.scroll_by(-1, height),
            KeyCode::Down => self.scroll_by(1, height),
            KeyCode::Home => self.scroll_to(false),
            KeyCode::End => self.scroll_to(true),
            // Enter on a selected card or code block is the selection's; else it
            // expands the compaction summaries.
            KeyCode::Enter if self.has_summaries && self.selected.is_none() => {
                return self.toggle_summaries();
            }
            _ => return self.selection_key(key, height),
        }
        Handled::changed()
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

    /// Adds a notice, or counts it on the last one when that says the same (`3× …`), so
    /// a job that fires often does not fill the chat.
    pub(crate) fn notice_counted(&mut self, level: NoticeLevel, text: String) -> Handled {
        let last = self.transcript.len().checked_sub(1);
        let seen = last
            .and_then(|i| match &self.transcript.entries()[i].kind {
                EntryKind::Notice(l, shown) if *l == level => times_said(shown, &text),
                _ => None,
            })
            .zip(last);
        match seen {
            Some((times, index)) => {
                let counted = format!("{}× {text}", times + 1);
                self.transcript
                    .replace(index, EntryKind::Notice(level, counted));
                Handled::changed()
            }
            None => self.notice(level, text),
        }
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

    /// A prompt or an answer of a resumed history, shown where the history holds it;
    /// `cards` are an answer's calls' states in the tree.
    pub(crate) fn recorded(
        &mut self,
        recorded: Recorded,
        cards: Vec<(String, CardInfo)>,
    ) -> Handled {
        let calls: Vec<String> = recorded
            .assistant()
            .into_iter()
            .flat_map(|m| &m.content)
            .filter_map(|b| match b {
                Block::ToolCall { id, .. } => Some(id.clone()),
                _ => None,
            })
            .collect();
        let index = self.transcript.push(EntryKind::Recorded(recorded));
        for id in calls {
            self.call_entries.insert(id, index);
        }
        self.cards.extend(cards);
        Handled::changed()
    }

    /// An answer began to stream (its entry comes with its first piece).
    pub(crate) fn start_answer(&mut self, message: AssistantMessage) -> Handled {
        self.streaming = None;
        self.unshown = Some(message);
        Handled::unchanged()
    }

    /// A piece of the streaming answer arrived.
    pub(crate) fn apply_delta(&mut self, delta: &MessageDelta) -> Handled {
        if self.streaming.is_none()
            && let Some(message) = self.unshown.take()
        {
            self.streaming = Some(self.transcript.push_streaming(message));
        }
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
        self.unshown = None;
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
        self.unshown = None;
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

    /// Time passed: cards of running calls show a new elapsed time and spinner frame.
    pub(crate) fn tick(&mut self) -> bool {
        let mut any = false;
        if let Some(entry) = self.retry_entry {
            self.transcript.invalidate(entry);
            any = true;
        }
        for (id, card) in &self.cards {
            if card.status == crate::tool_tree::CallStatus::Running
                && let Some(&entry) = self.call_entries.get(id)
            {
                self.transcript.invalidate(entry);
                any = true;
            }
        }
        any
    }

    /// A failed request waits to be retried: its line counts down until
    /// [`Chat::retry_began`].
    pub(crate) fn retry_waits(&mut self, kind: EntryKind) -> Handled {
        let entry = self.transcript.push(kind);
        self.retry_entry = Some(entry);
        Handled::changed()
    }

    /// The retry's wait is over (the request went again, or the run ended): its line
    /// stops counting.
    pub(crate) fn retry_began(&mut self) {
        let Some(index) = self.retry_entry.take() else {
            return;
        };
        let Some(EntryKind::Retry {
            attempt,
            max_attempts,
            delay_ms,
            reason,
            since,
            ..
        }) = self.transcript.entries().get(index).map(|e| e.kind.clone())
        else {
            return;
        };
        let done = EntryKind::Retry {
            attempt,
            max_attempts,
            delay_ms,
            reason,
            since,
            live: false,
        };
        self.transcript.replace(index, done);
    }

    /// Shows a card for a call the chat learnt of outside an answer (a `!command`):
    /// `entry` is the entry that draws it.
    pub(crate) fn own_card(&mut self, id: &str, kind: EntryKind, card: CardInfo) -> Handled {
        let entry = self.transcript.push(kind);
        self.call_entries.insert(id.to_owned(), entry);
        self.cards.insert(id.to_owned(), card);
        Handled::changed()
    }

    /// The theme changed: every entry is drawn again.
    pub(crate) fn restyle(&mut self) {
        self.transcript.invalidate_all();
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
        self.expanded.clear();
        self.selected = None;
        self.find = None;
        self.drag = None;
        self.retry_entry = None;
        self.streaming = None;
        self.unshown = None;
        self.compacting = None;
        self.has_summaries = false;
        self.follow();
        self.last_total_rows = 0;
        self.reveal_all = false;
    }
}

/// How many times `shown` says `text`: once as it is, `n` as `n× text`.
fn times_said(shown: &str, text: &str) -> Option<u32> {
    if shown == text {
        return Some(1);
    }
    let count = shown.strip_suffix(text)?.strip_suffix("× ")?;
    count.parse().ok()
}

/// A user message's text followed by a chip for each attached image, one per line:
/// `[image: shot.png 1280×720, 210 KB]`.
/// What the chat shows of the user's message: its text, then a chip per image.
pub(crate) fn user_text(message: &UserMessage) -> Cow<'_, str> {
    if message.images.is_empty() {
        Cow::Borrowed(&message.content)
    } else {
        Cow::Owned(with_chips(message.content.clone(), &message.images))
    }
}

fn with_chips(text: String, images: &[claw_agent::ImageData]) -> String {
    images.iter().fold(text, |mut out, image| {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&image.chip());
        out
    })
}
