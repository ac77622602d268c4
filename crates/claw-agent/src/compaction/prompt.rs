//! The summary request: our prompt with fixed sections, the history written out as
//! text (tool results and arguments cut to [`MAX_TOOL_TEXT_CHARS`]), split into chunks
//! that each fit one request.

use super::tokens::estimate_text;
use crate::ImageData;
use crate::types::{Block, Message};

/// The most characters of one tool result (or one call's arguments) put in a summary
/// request.
pub const MAX_TOOL_TEXT_CHARS: usize = 2_000;

/// The sections every summary has, in order.
pub const SUMMARY_SECTIONS: [&str; 7] = [
    "## Goal",
    "## Constraints and preferences",
    "## Progress",
    "## Key decisions",
    "## Next steps",
    "## Critical facts",
    "## Files",
];

/// The system prompt of the summary request.
pub const SUMMARY_SYSTEM_PROMPT: &str = "You write the working summary of a conversation \
between a user and a coding agent (an LLM with file, shell and web tools). The agent will \
continue the work from your summary alone: everything it has not got verbatim must be in \
it. Be factual and specific, never invent anything, and write only the summary.";

const SECTION_GUIDE: &str = "\
## Goal
What the user wants, in their terms; every request still open.
## Constraints and preferences
Rules, preferences and requirements the user gave (style, tools, what not to do).
## Progress
### Done
### In progress
### Blocked
## Key decisions
Choices made and why.
## Next steps
What the agent should do next, in order.
## Critical facts
Exact paths, names, commands, numbers, error messages and values that must not be lost.
## Files
### Read
### Changed";

/// One summary request's share of the history, written out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryChunk {
    /// The messages as text, oldest first.
    pub text: String,
    /// Its estimated tokens.
    pub tokens: u64,
}

/// One message written out, and where it sits.
struct Item {
    text: String,
    /// A user message or notification: a new turn begins.
    turn_start: bool,
}

/// At most `max` characters of `text`, saying how much was cut.
fn cut_chars(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    // Mostly ASCII: the cut is at byte `max`, found without decoding every character.
    let end = if text.as_bytes()[..max].is_ascii() {
        Some((max, ' '))
    } else {
        text.char_indices().nth(max)
    };
    match end {
        None => text.to_owned(),
        Some((end, _)) => {
            let rest = text[end..].chars().count();
            format!("{}\n[… {rest} more characters cut]", &text[..end])
        }
    }
}

/// At most `max` bytes of `text` (on a character boundary), saying how much was cut.
fn cut_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    // Room for the note itself.
    let room = max.saturating_sub(48);
    let end = text
        .char_indices()
        .map(|(i, _)| i)
        .take_while(|&i| i <= room)
        .last()
        .unwrap_or(0);
    let rest = text[end..].chars().count();
    format!("{}\n[… {rest} more characters cut]", &text[..end])
}

/// The chips of a message's images, one per line after its text: the summary can say
/// what was shown without the pixels going into the summary request.
fn chips(images: &[ImageData]) -> String {
    images.iter().map(|i| format!("\n{}", i.chip())).collect()
}

/// A message as the summary request shows it; `None` for what the model never saw.
fn render(message: &Message) -> Option<Item> {
    let (text, turn_start) = match message {
        Message::User(u) => (
            format!("[user]\n{}{}", u.content.trim_end(), chips(&u.images)),
            true,
        ),
        Message::Notification(n) => (
            format!("[notification from {}]\n{}", n.source, n.content.trim_end()),
            true,
        ),
        Message::Notice(_) => return None,
        Message::Assistant(a) => {
            let mut parts = Vec::new();
            for block in &a.content {
                match block {
                    Block::Text { text } if !text.trim().is_empty() => {
                        parts.push(text.trim_end().to_owned());
                    }
                    Block::ToolCall { id, name, args } if !a.is_failed() => {
                        let args = cut_chars(&args.to_string(), MAX_TOOL_TEXT_CHARS);
                        parts.push(format!("[tool call {id}: {name}] {args}"));
                    }
                    _ => {}
                }
            }
            if parts.is_empty() {
                return None;
            }
            (format!("[assistant]\n{}", parts.join("\n")), false)
        }
        Message::ToolResult(r) => {
            let status = if r.is_error { ", error" } else { "" };
            let content = cut_chars(r.content.trim_end(), MAX_TOOL_TEXT_CHARS);
            (
                format!(
                    "[tool result {}: {}{status}]\n{content}{}",
                    r.tool_call_id,
                    r.tool_name,
                    chips(&r.images)
                ),
                false,
            )
        }
    };
    Some(Item { text, turn_start })
}

/// Builds chunks from items, each within `budget` tokens.
struct Packer {
    budget: u64,
    current: Vec<String>,
    tokens: u64,
    chunks: Vec<SummaryChunk>,
}

/// Items kept together (an answer and its results, or a whole turn) and their tokens.
struct Group {
    items: Vec<String>,
    tokens: u64,
}

impl Group {
    fn new(items: Vec<String>) -> Self {
        let tokens = items.iter().map(|t| estimate_text(t) + 1).sum();
        Self { items, tokens }
    }
}

impl Packer {
    fn flush(&mut self) {
        if !self.current.is_empty() {
            let text = std::mem::take(&mut self.current).join("\n\n");
            let tokens = estimate_text(&text);
            self.chunks.push(SummaryChunk { text, tokens });
        }
        self.tokens = 0;
    }

    /// Adds a group if it fits in the current chunk or an empty one; gives it back when
    /// it is larger than a whole chunk.
    fn add(&mut self, group: Group) -> Option<Group> {
        if group.tokens > self.budget {
            return Some(group);
        }
        if self.tokens + group.tokens > self.budget {
            self.flush();
        }
        self.tokens += group.tokens;
        self.current.extend(group.items);
        None
    }

    /// A group larger than a whole chunk: its oldest items are cut until it fits.
    fn add_cut(&mut self, group: Group) {
        self.flush();
        let budget_bytes = usize::try_from(self.budget.saturating_mul(4)).unwrap_or(usize::MAX);
        let mut texts = group.items;
        let mut total: usize = texts.iter().map(|t| t.len() + 2).sum();
        for text in &mut texts {
            if total <= budget_bytes {
                break;
            }
            let others = total - text.len();
            let kept = cut_bytes(text, budget_bytes.saturating_sub(others));
            total = others + kept.len();
            *text = kept;
        }
        self.current = texts;
        self.flush();
    }
}

/// Writes `messages` out and splits them into chunks of at most `budget` tokens: whole
/// turns where they fit, a turn too large for one request on its own (split between
/// answers, never between a call and its results), and a single answer with its
/// results too large even then has its oldest parts cut until it fits.
pub fn plan_summary<'a>(
    messages: impl IntoIterator<Item = &'a Message>,
    budget: u64,
) -> Vec<SummaryChunk> {
    let budget = budget.max(1);
    // turn → groups (an answer with its results) → items
    let mut turns: Vec<Vec<Vec<String>>> = Vec::new();
    for item in messages.into_iter().filter_map(render) {
        let is_result = item.text.starts_with("[tool result ");
        if item.turn_start || turns.is_empty() {
            turns.push(Vec::new());
        }
        if let Some(turn) = turns.last_mut() {
            match turn.last_mut() {
                Some(group) if is_result => group.push(item.text),
                _ => turn.push(vec![item.text]),
            }
        }
    }
    let mut packer = Packer {
        budget,
        current: Vec::new(),
        tokens: 0,
        chunks: Vec::new(),
    };
    for turn in turns {
        let groups: Vec<Group> = turn.into_iter().map(Group::new).collect();
        let tokens: u64 = groups.iter().map(|g| g.tokens).sum();
        if tokens <= budget {
            let whole = Group {
                items: groups.into_iter().flat_map(|g| g.items).collect(),
                tokens,
            };
            // Fits (perhaps in a fresh chunk): nothing comes back.
            let _ = packer.add(whole);
            continue;
        }
        packer.flush();
        for group in groups {
            if let Some(large) = packer.add(group) {
                packer.add_cut(large);
            }
        }
        // What follows a turn split up starts a chunk of its own.
        packer.flush();
    }
    packer.flush();
    packer.chunks
}

/// The user message of one summary request: the previous summary to update (if any),
/// the chunk, the user's focus and the sections asked for.
pub fn summary_request_text(
    chunk: &SummaryChunk,
    previous: Option<&str>,
    focus: Option<&str>,
) -> String {
    let mut text = String::new();
    match previous {
        Some(previous) => {
            text.push_str(
                "This is the summary of the conversation so far:\n\n<previous-summary>\n",
            );
            text.push_str(previous.trim());
            text.push_str(
                "\n</previous-summary>\n\nThe messages below continue the conversation after \
                 it. Update the summary with them: keep everything from it that still \
                 matters, move work that got finished to Done, and add what is new.\n\n",
            );
        }
        None => text.push_str("Summarise the conversation below.\n\n"),
    }
    text.push_str("<conversation>\n");
    text.push_str(&chunk.text);
    text.push_str("\n</conversation>\n\n");
    if let Some(focus) = focus.map(str::trim).filter(|f| !f.is_empty()) {
        text.push_str(&format!(
            "The user asks the summary to pay particular attention to: {focus}\n\n"
        ));
    }
    text.push_str(
        "Write the summary now, in Markdown, with exactly these sections (write \"none\" \
         under a section with nothing in it):\n\n",
    );
    text.push_str(SECTION_GUIDE);
    text
}

/// Tokens of a summary request's fixed parts (prompt, instructions, previous summary,
/// focus), to leave room for them.
pub(super) fn request_overhead(previous: Option<&str>, focus: Option<&str>) -> u64 {
    let empty = SummaryChunk {
        text: String::new(),
        tokens: 0,
    };
    estimate_text(SUMMARY_SYSTEM_PROMPT)
        + estimate_text(&summary_request_text(&empty, previous, focus))
        + 16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AssistantMessage, ToolResultMessage};

    fn call(id: &str) -> Message {
        Message::Assistant(AssistantMessage {
            content: vec![Block::ToolCall {
                id: id.into(),
                name: "read_file".into(),
                args: serde_json::json!({"path": format!("{id}.txt")}),
            }],
            ..AssistantMessage::default()
        })
    }

    fn result(id: &str, size: usize) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read_file".into(),
            content: "r".repeat(size),
            images: Vec::new(),
            details: serde_json::Value::Null,
            is_error: false,
            timestamp: 0,
        })
    }

    #[test]
    fn tool_results_are_cut_to_two_thousand_characters() {
        let chunks = plan_summary(
            &[Message::user("go"), call("a"), result("a", 9_000)],
            100_000,
        );
        assert_eq!(chunks.len(), 1);
        let text = &chunks[0].text;
        assert!(text.contains(&format!(
            "{}\n[… 7000 more characters cut]",
            "r".repeat(2_000)
        )));
        assert!(!text.contains(&"r".repeat(2_001)));
        assert!(text.contains("[tool call a: read_file] {\"path\":\"a.txt\"}"));
    }

    #[test]
    fn images_are_named_by_their_chips_not_sent() {
        let image = crate::ImageData {
            name: "shot.png".into(),
            mime: "image/png".into(),
            width: 1280,
            height: 720,
            size: 209_500,
            sha256: String::new(),
            data: bytes::Bytes::from_static(b"PIXELS"),
        };
        let message = crate::UserMessage::new("what is this?").with_images(vec![image]);
        let chunks = plan_summary(&[Message::User(message)], 100_000);
        assert_eq!(
            chunks[0].text,
            "[user]\nwhat is this?\n[image: shot.png 1280×720, 204.6 KiB]"
        );
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        assert_eq!(cut_chars("abc", 5), "abc");
        assert_eq!(cut_chars("abcdef", 4), "abcd\n[… 2 more characters cut]");
        assert_eq!(cut_chars("ééééé", 2), "éé\n[… 3 more characters cut]");
        assert_eq!(cut_chars("ab€cd", 3), "ab€\n[… 2 more characters cut]");
        let cut = cut_bytes(&"é".repeat(100), 60);
        assert!(cut.len() <= 60 + 40 && cut.starts_with('é'), "{cut}");
    }

    #[test]
    fn turns_stay_whole_and_calls_stay_with_their_results() {
        let mut history = Vec::new();
        for turn in 0..6 {
            history.push(Message::user(format!("turn {turn}")));
            for call_no in 0..3 {
                let id = format!("c{turn}-{call_no}");
                history.push(call(&id));
                history.push(result(&id, 1_500));
            }
        }
        // About 1,200 tokens a turn: two turns a chunk.
        let chunks = plan_summary(&history, 2_600);
        assert_eq!(
            chunks.len(),
            3,
            "{:?}",
            chunks.iter().map(|c| c.tokens).collect::<Vec<_>>()
        );
        for chunk in &chunks {
            assert!(chunk.tokens <= 2_600);
            assert!(chunk.text.starts_with("[user]"));
            for line in chunk.text.lines().filter(|l| l.starts_with("[tool call ")) {
                let id = &line["[tool call ".len()..line.find(':').unwrap_or(0)];
                assert!(chunk.text.contains(&format!("[tool result {id}: ")), "{id}");
            }
        }
        // A turn larger than a chunk is split between its answers.
        let big = plan_summary(&history[..10], 900);
        assert!(big.len() >= 2);
        assert!(big.iter().all(|c| c.tokens <= 900));
    }

    #[test]
    fn a_group_larger_than_a_request_is_cut_oldest_first() {
        let history = vec![
            Message::user("u".repeat(20_000)),
            Message::user("v".repeat(300)),
        ];
        let chunks = plan_summary(&history, 1_000);
        assert!(chunks.iter().all(|c| c.tokens <= 1_000), "{chunks:?}");
        assert!(chunks[0].text.contains("more characters cut"));
        assert!(
            chunks
                .last()
                .is_some_and(|c| c.text.contains(&"v".repeat(300)))
        );
    }

    #[test]
    fn the_request_asks_for_every_section_and_updates_a_previous_summary() {
        let chunk = SummaryChunk {
            text: "[user]\nhi".into(),
            tokens: 3,
        };
        let first = summary_request_text(&chunk, None, Some("the parser"));
        for section in SUMMARY_SECTIONS {
            assert!(first.contains(section), "{section}");
        }
        assert!(first.contains("pay particular attention to: the parser"));
        let second = summary_request_text(&chunk, Some("## Goal\nold goal"), None);
        assert!(second.contains("<previous-summary>\n## Goal\nold goal\n</previous-summary>"));
        assert!(second.contains("Update the summary"));
    }
}
