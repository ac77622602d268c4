//! Where the verbatim part begins: the cut.

use super::tokens::estimate_message;
use crate::History;
use crate::types::Message;

/// Chooses the first message kept verbatim when compacting `history`, whose messages
/// before `start` are already summarised. The result `c` (`start <= c <= len`)
/// summarises `start..c` and keeps `c..`:
///
/// - it never falls on a tool result, so no call is separated from its result;
/// - it is at most `protected_from`: the messages injected for the request about to be
///   made (the prompt, steering, a follow-up) are always kept;
/// - it keeps as much as fits in `keep_recent` tokens. When not even the newest group
///   fits, the newest group (an answer and its results) is kept anyway if it takes at
///   most `max_keep` tokens, and summarised too otherwise.
///
/// `c == start` means there is nothing to summarise.
///
/// ```
/// use claw_agent::{History, Message};
/// use claw_agent::compaction::choose_cut;
/// let messages: Vec<Message> = (0..10).map(|i| Message::user("x".repeat(400 + i))).collect();
/// let history = History::from(messages);
/// // Each message is about 105 tokens: 300 tokens keep the newest two.
/// assert_eq!(choose_cut(&history, 0, history.len(), 300, 1_000), 8);
/// // The prompt just injected (position 9) is kept whatever it costs.
/// assert_eq!(choose_cut(&history, 0, 9, 0, 0), 9);
/// ```
pub fn choose_cut(
    history: &History,
    start: usize,
    protected_from: usize,
    keep_recent: u64,
    max_keep: u64,
) -> usize {
    let len = history.len();
    let limit = protected_from.min(len);
    if limit <= start {
        return start.min(len);
    }
    let valid = |c: usize| !matches!(history[c], Message::ToolResult(_));
    // Tokens of `c..len`, grown as `c` moves back.
    let mut kept: u64 = history.iter_from(limit).map(estimate_message).sum();
    // The earliest cut whose kept part fits `keep_recent`.
    let mut best = None;
    // The latest cut that keeps anything: the start of the newest group, with its size.
    let mut newest_group = None;
    let mut c = limit;
    loop {
        if c < len && valid(c) {
            if newest_group.is_none() {
                newest_group = Some((c, kept));
            }
            if kept <= keep_recent {
                best = Some(c);
            }
        }
        // Moving back only adds tokens.
        if c == start || (kept > keep_recent && newest_group.is_some()) {
            break;
        }
        c -= 1;
        kept += estimate_message(&history[c]);
    }
    match (best, newest_group) {
        (Some(best), _) => best,
        // The protected part alone is over budget: it is kept, the rest summarised.
        (None, Some((c, _))) if limit < len => c,
        (None, Some((c, tokens))) if tokens <= max_keep => c,
        (None, _) if limit < len => start,
        (None, _) => len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AssistantMessage, Block, ToolResultMessage};

    fn call(id: &str) -> Message {
        Message::Assistant(AssistantMessage {
            content: vec![Block::ToolCall {
                id: id.into(),
                name: "read_file".into(),
                args: serde_json::json!({"path": "a"}),
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
    fn the_cut_never_separates_a_call_from_its_results() {
        let history = History::from(vec![
            Message::user("go"),
            call("a"),
            result("a", 4000),
            result("a2", 4000),
            call("b"),
            result("b", 40),
        ]);
        for keep in 0..3_000 {
            let c = choose_cut(&history, 0, history.len(), keep, 10_000);
            assert!(
                !matches!(history.get(c), Some(Message::ToolResult(_))),
                "{keep}: {c}"
            );
        }
        // 2,000 tokens keep the last call and its result but not the big results.
        assert_eq!(choose_cut(&history, 0, history.len(), 2_000, 10_000), 4);
    }

    #[test]
    fn a_newest_group_too_big_to_keep_is_kept_up_to_max_keep() {
        let history = History::from(vec![Message::user("go"), call("a"), result("a", 40_000)]);
        assert_eq!(choose_cut(&history, 0, 3, 100, 20_000), 1);
        assert_eq!(choose_cut(&history, 0, 3, 100, 5_000), 3);
    }

    #[test]
    fn nothing_before_start_is_cut_again() {
        let history: Vec<Message> = (0..6).map(|i| Message::user(format!("{i}"))).collect();
        let history = History::from(history);
        assert_eq!(choose_cut(&history, 4, 6, 1_000_000, 0), 4);
        assert_eq!(choose_cut(&history, 6, 6, 0, 0), 6);
    }
}
