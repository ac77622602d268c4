//! Reading what an agent run left behind: event labels, tool ends, queues and history.

use claw_tui::agent::{Agent, AgentEvent, AssistantMessage, Message, QueueKind};
use claw_tui::llm::{LlmMessage, LlmRequest};

/// How often `label` occurs in `labels`.
pub fn count(labels: &[String], label: &str) -> usize {
    labels.iter().filter(|l| l.as_str() == label).count()
}

/// Where `label` first occurs in `labels`; panics (showing them) when it does not.
pub fn position(labels: &[String], label: &str) -> usize {
    labels
        .iter()
        .position(|l| l == label)
        .unwrap_or_else(|| panic!("no {label} in {labels:#?}"))
}

/// `(call id, content, is_error)` of every `tool_execution_end` event.
pub fn tool_ends(events: &[AgentEvent]) -> Vec<(String, String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                ..
            } => Some((tool_call_id.clone(), result.content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// `(call id, content, is_error)` of every tool result the model received in `request`.
pub fn sent_result_triples(request: &LlmRequest) -> Vec<(String, String, bool)> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            LlmMessage::ToolResult(r) => {
                Some((r.tool_call_id.clone(), r.content.clone(), r.is_error))
            }
            _ => None,
        })
        .collect()
}

/// The last assistant message that ended in `events`; panics when there is none.
pub fn final_assistant(events: &[AgentEvent]) -> AssistantMessage {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } => Some(a.clone()),
            _ => None,
        })
        .expect("an assistant message_end")
}

/// The text of `message`, which must be an assistant message.
pub fn assistant_text(message: &Message) -> String {
    message.as_assistant().expect("an assistant message").text()
}

/// The preview texts of what waits in `agent`'s queue of `kind`, in order.
pub fn queued_texts(agent: &Agent, kind: QueueKind) -> Vec<String> {
    agent
        .queued(kind)
        .iter()
        .map(Message::preview_text)
        .collect()
}

/// The contents of the user messages in `agent`'s history, in order.
pub fn user_messages_in_history(agent: &Agent) -> Vec<String> {
    user_contents(agent.state().messages.iter())
}

/// The contents of the user messages among `messages`, in order.
pub fn user_contents<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Vec<String> {
    messages
        .into_iter()
        .filter_map(|m| match m {
            Message::User(u) => Some(u.content.clone()),
            _ => None,
        })
        .collect()
}

/// `role:text` of every message `request` sent (`tool:` for tool results), in order.
pub fn request_transcript(request: &LlmRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .map(|m| match m {
            LlmMessage::User(u) => format!("user:{}", u.content),
            LlmMessage::Assistant(a) => format!("assistant:{}", a.text()),
            LlmMessage::ToolResult(r) => format!("tool:{}", r.content),
        })
        .collect()
}
