//! History → model messages: custom roles mapped or dropped, replay made well-formed.

use super::history::History;
use super::provider::{Held, LlmMessage};
use super::types::{
    AssistantMessage, Block, Message, StopReason, ToolResultMessage, UserMessage, now_ms,
};
use std::collections::HashSet;

/// The prefix that marks a notification (a background result, a cron job's output) for
/// the model, which receives it as user input.
pub const NOTIFICATION_PREFIX: &str = "[SYSTEM NOTIFICATION]";

/// Content of the result invented for a tool call that never got one.
pub const NO_RESULT_PROVIDED: &str = "No result provided";

/// The standard conversion: notifications become user input, notices are dropped.
/// Messages sent as they are stay borrowed from the history.
pub fn default_convert_to_llm(messages: &History) -> Vec<LlmMessage<'_>> {
    // Sized once: a list of a long session's messages grown by doubling would hold up
    // to twice the room, on every turn.
    let mut out = Vec::with_capacity(messages.len());
    for m in messages.iter() {
        out.push(match m {
            Message::User(u) => LlmMessage::User(Held::Borrowed(u)),
            Message::Assistant(a) => LlmMessage::Assistant(Held::Borrowed(a)),
            Message::ToolResult(r) => LlmMessage::ToolResult(Held::Borrowed(r)),
            Message::Notification(n) => LlmMessage::from(UserMessage {
                content: n.content.clone(),
                images: Vec::new(),
                timestamp: n.timestamp,
            }),
            Message::Notice(_) => continue,
        });
    }
    out
}

/// Makes a converted history safe to send: aborted and errored assistant messages are
/// dropped, results that answer no kept call are dropped, and every kept tool call
/// without a result gets an error result `No result provided` right after its message.
/// A user message that follows one whose answer was dropped starts with a note saying
/// why (see [`unanswered_note`]), so the model never sees two user messages in a row
/// without knowing that the first got no answer.
///
/// ```
/// use claw_agent::convert::{NO_RESULT_PROVIDED, sanitize_for_llm};
/// use claw_agent::{AssistantMessage, Block, StopReason, UserMessage};
/// use claw_agent::provider::LlmMessage;
///
/// // The session was interrupted while `ls` ran: the call never got its result.
/// let mut call = AssistantMessage::empty("model");
/// call.stop_reason = StopReason::ToolUse;
/// call.content.push(Block::ToolCall { id: "c1".into(), name: "ls".into(), args: serde_json::json!({}) });
/// let history = vec![
///     LlmMessage::from(UserMessage::new("list files")),
///     LlmMessage::from(call),
///     LlmMessage::from(UserMessage::new("hello?")),
/// ];
/// let sent = sanitize_for_llm(history);
/// assert_eq!(sent.len(), 4);
/// match &sent[2] {
///     LlmMessage::ToolResult(r) => assert!(r.is_error && r.content == NO_RESULT_PROVIDED),
///     other => panic!("expected the invented result, got {other:?}"),
/// }
/// ```
pub fn sanitize_for_llm(messages: Vec<LlmMessage<'_>>) -> Vec<LlmMessage<'_>> {
    // The usual history needs nothing: handed back as it is, without a second list.
    if already_sane(&messages) {
        return messages;
    }
    rebuild(messages)
}

/// The sanitized history, built anew.
fn rebuild(messages: Vec<LlmMessage<'_>>) -> Vec<LlmMessage<'_>> {
    let mut out = Vec::with_capacity(messages.len());
    // Calls of the latest kept assistant message still waiting for a result, in order.
    let mut open: Vec<(String, String)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    // Why the last kept message, a user's, lost its answer.
    let mut unanswered: Option<String> = None;
    for message in messages {
        match message {
            LlmMessage::Assistant(a) if a.is_failed() => {
                if matches!(out.last(), Some(LlmMessage::User(_))) {
                    unanswered = Some(unanswered_note(&a));
                }
            }
            LlmMessage::ToolResult(r) => {
                let belongs = open.iter().any(|(id, _)| *id == r.tool_call_id);
                if belongs && answered.insert(r.tool_call_id.clone()) {
                    out.push(LlmMessage::ToolResult(r));
                }
            }
            other => {
                close_open_calls(&mut out, &mut open, &answered);
                answered.clear();
                let other = match (other, unanswered.take()) {
                    (LlmMessage::User(mut user), Some(note))
                        if matches!(out.last(), Some(LlmMessage::User(_))) =>
                    {
                        let content = format!("{note}\n\n{}", user.content);
                        user.to_mut().content = content;
                        LlmMessage::User(user)
                    }
                    (other, _) => other,
                };
                if let LlmMessage::Assistant(a) = &other {
                    open = a.tool_calls().into_iter().map(|c| (c.id, c.name)).collect();
                }
                out.push(other);
            }
        }
    }
    close_open_calls(&mut out, &mut open, &answered);
    out
}

/// Whether [`sanitize_for_llm`] would hand `messages` back unchanged: no failed answer,
/// every result answers a call of the assistant message before it, once, and every call
/// has its result before the next user or assistant message.
fn already_sane(messages: &[LlmMessage<'_>]) -> bool {
    let mut open: Vec<&str> = Vec::new();
    let mut answered: HashSet<&str> = HashSet::new();
    for message in messages {
        match message {
            LlmMessage::Assistant(a) if a.is_failed() => return false,
            LlmMessage::ToolResult(r) => {
                let id = r.tool_call_id.as_str();
                if !open.contains(&id) || !answered.insert(id) {
                    return false;
                }
            }
            other => {
                if open.iter().any(|id| !answered.contains(id)) {
                    return false;
                }
                answered.clear();
                open.clear();
                if let LlmMessage::Assistant(a) = other {
                    open.extend(a.content.iter().filter_map(|b| match b {
                        Block::ToolCall { id, .. } => Some(id.as_str()),
                        _ => None,
                    }));
                }
            }
        }
    }
    open.iter().all(|id| answered.contains(id))
}

/// How [`unanswered_note`] begins (a scripted model strips the note by it).
pub const UNANSWERED_NOTE_START: &str = "[The previous message got no complete answer: ";

/// The note put before the next user message when `failed`, the answer to the one
/// before, is dropped: `[The previous message got no complete answer: <why>]`.
pub fn unanswered_note(failed: &AssistantMessage) -> String {
    let why = failed
        .error_message
        .as_deref()
        .map(|e| e.trim().trim_end_matches('.'))
        .filter(|e| !e.is_empty())
        .unwrap_or(match failed.stop_reason {
            StopReason::Aborted => "it was interrupted",
            _ => "the request failed",
        });
    format!("{UNANSWERED_NOTE_START}{why}.]")
}

fn close_open_calls(
    out: &mut Vec<LlmMessage<'_>>,
    open: &mut Vec<(String, String)>,
    answered: &HashSet<String>,
) {
    for (id, name) in open.drain(..) {
        if !answered.contains(&id) {
            out.push(LlmMessage::from(ToolResultMessage {
                tool_call_id: id,
                tool_name: name,
                content: NO_RESULT_PROVIDED.to_owned(),
                images: Vec::new(),
                details: serde_json::Value::Null,
                is_error: true,
                timestamp: now_ms(),
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoticeLevel;

    fn borrowed(message: &LlmMessage<'_>) -> bool {
        match message {
            LlmMessage::User(m) => m.is_borrowed(),
            LlmMessage::Assistant(m) => m.is_borrowed(),
            LlmMessage::ToolResult(m) => m.is_borrowed(),
        }
    }

    /// A long session's request must not hold a second copy of the conversation: what
    /// is sent as it is stays borrowed from the history, through the sanitizer too.
    #[test]
    fn messages_sent_as_they_are_are_borrowed_not_copied() {
        let mut call = AssistantMessage::empty("m");
        call.stop_reason = StopReason::ToolUse;
        call.content.push(Block::ToolCall {
            id: "c1".into(),
            name: "read".into(),
            args: serde_json::json!({}),
        });
        let result = ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "read".into(),
            content: "x".repeat(1000),
            images: Vec::new(),
            details: serde_json::json!({"big": "y"}),
            is_error: false,
            timestamp: 1,
        };
        let history = History::from(vec![
            Message::User(UserMessage::new("read it")),
            Message::Assistant(call),
            Message::ToolResult(result),
            Message::notice(NoticeLevel::Info, "not sent"),
        ]);
        let sent = sanitize_for_llm(default_convert_to_llm(&history));
        assert_eq!(sent.len(), 3);
        assert!(sent.iter().all(borrowed), "{sent:#?}");
    }

    /// The one message the sanitizer changes (a note before a user message whose
    /// predecessor lost its answer) is copied; the history itself is not changed.
    #[test]
    fn a_message_the_sanitizer_changes_is_copied_and_the_history_kept() {
        let mut failed = AssistantMessage::empty("m");
        failed.stop_reason = StopReason::Aborted;
        let history = History::from(vec![
            Message::User(UserMessage::new("first")),
            Message::Assistant(failed),
            Message::User(UserMessage::new("second")),
        ]);
        let sent = sanitize_for_llm(default_convert_to_llm(&history));
        assert_eq!(sent.len(), 2);
        assert!(borrowed(&sent[0]));
        let LlmMessage::User(second) = &sent[1] else {
            panic!("{sent:#?}")
        };
        assert!(!second.is_borrowed());
        assert!(second.content.ends_with("\n\nsecond"), "{}", second.content);
        let Some(Message::User(kept)) = history.get(2) else {
            panic!()
        };
        assert_eq!(kept.content, "second");
    }

    /// The shortcut agrees with the rebuild on every history of up to five messages
    /// made of user prompts, answers with one or two calls, failed answers and results.
    #[test]
    fn a_history_is_handed_back_exactly_when_the_rebuild_would_not_change_it() {
        let answer = |calls: &[&str], failed: bool| {
            let mut a = AssistantMessage::empty("m");
            a.stop_reason = if failed {
                StopReason::Error
            } else {
                StopReason::ToolUse
            };
            for id in calls {
                a.content.push(Block::ToolCall {
                    id: (*id).into(),
                    name: "t".into(),
                    args: serde_json::json!({}),
                });
            }
            LlmMessage::from(a)
        };
        let result = |id: &str| {
            LlmMessage::from(ToolResultMessage {
                tool_call_id: id.into(),
                tool_name: "t".into(),
                content: "r".into(),
                images: Vec::new(),
                details: serde_json::Value::Null,
                is_error: false,
                timestamp: 1,
            })
        };
        let kinds = [
            LlmMessage::from(UserMessage::new("u")),
            answer(&[], false),
            answer(&["a"], false),
            answer(&["a", "b"], false),
            answer(&["a"], true),
            result("a"),
            result("b"),
        ];
        let mut histories: Vec<Vec<LlmMessage<'static>>> = vec![Vec::new()];
        let mut checked = 0;
        for _ in 0..5 {
            let mut longer = Vec::new();
            for history in &histories {
                for kind in &kinds {
                    let mut next = history.clone();
                    next.push(kind.clone());
                    let unchanged = rebuild(next.clone()) == next;
                    assert_eq!(already_sane(&next), unchanged, "{next:#?}");
                    checked += 1;
                    longer.push(next);
                }
            }
            histories = longer;
        }
        assert_eq!(checked, 7 + 49 + 343 + 2401 + 16807);
    }
}
