//! History → model messages: custom roles mapped or dropped, replay made well-formed.

use super::history::History;
use super::provider::LlmMessage;
use super::types::{AssistantMessage, Message, StopReason, ToolResultMessage, UserMessage, now_ms};
use std::collections::HashSet;

/// The prefix that marks a notification (a background result, a cron job's output) for
/// the model, which receives it as user input.
pub const NOTIFICATION_PREFIX: &str = "[SYSTEM NOTIFICATION]";

/// Content of the result invented for a tool call that never got one.
pub const NO_RESULT_PROVIDED: &str = "No result provided";

/// The standard conversion: notifications become user input, notices are dropped.
pub fn default_convert_to_llm(messages: &History) -> Vec<LlmMessage> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::User(u) => Some(LlmMessage::User(u.clone())),
            Message::Assistant(a) => Some(LlmMessage::Assistant(a.clone())),
            // Without `details`: never sent to the model, and often the largest part.
            Message::ToolResult(r) => Some(LlmMessage::ToolResult(ToolResultMessage {
                tool_call_id: r.tool_call_id.clone(),
                tool_name: r.tool_name.clone(),
                content: r.content.clone(),
                images: r.images.clone(),
                details: serde_json::Value::Null,
                is_error: r.is_error,
                timestamp: r.timestamp,
            })),
            Message::Notification(n) => Some(LlmMessage::User(UserMessage {
                content: n.content.clone(),
                images: Vec::new(),
                timestamp: n.timestamp,
            })),
            Message::Notice(_) => None,
        })
        .collect()
}

/// Makes a converted history safe to send: aborted and errored assistant messages are
/// dropped, results that answer no kept call are dropped, and every kept tool call
/// without a result gets an error result `No result provided` right after its message.
/// A user message that follows one whose answer was dropped starts with a note saying
/// why (see [`unanswered_note`]), so the model never sees two user messages in a row
/// without knowing that the first got no answer.
///
/// ```
/// use claw_tui::agent::convert::{NO_RESULT_PROVIDED, sanitize_for_llm};
/// use claw_tui::agent::{AssistantMessage, Block, StopReason, UserMessage};
/// use claw_tui::llm::LlmMessage;
///
/// // The session was interrupted while `ls` ran: the call never got its result.
/// let mut call = AssistantMessage::empty("model");
/// call.stop_reason = StopReason::ToolUse;
/// call.content.push(Block::ToolCall { id: "c1".into(), name: "ls".into(), args: serde_json::json!({}) });
/// let history = vec![
///     LlmMessage::User(UserMessage::new("list files")),
///     LlmMessage::Assistant(call),
///     LlmMessage::User(UserMessage::new("hello?")),
/// ];
/// let sent = sanitize_for_llm(history);
/// assert_eq!(sent.len(), 4);
/// match &sent[2] {
///     LlmMessage::ToolResult(r) => assert!(r.is_error && r.content == NO_RESULT_PROVIDED),
///     other => panic!("expected the invented result, got {other:?}"),
/// }
/// ```
pub fn sanitize_for_llm(messages: Vec<LlmMessage>) -> Vec<LlmMessage> {
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
                        user.content = format!("{note}\n\n{}", user.content);
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
    format!("[The previous message got no complete answer: {why}.]")
}

fn close_open_calls(
    out: &mut Vec<LlmMessage>,
    open: &mut Vec<(String, String)>,
    answered: &HashSet<String>,
) {
    for (id, name) in open.drain(..) {
        if !answered.contains(&id) {
            out.push(LlmMessage::ToolResult(ToolResultMessage {
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
