//! A message of a resumed history as the client shows it: a place in the history the
//! agent holds, not a copy. The chat's entries and the tool tree's results of a resumed
//! session point into that one shared history, so a long session is in memory once.

use claw_agent::{AssistantMessage, Message, ToolResult, ToolResultMessage, UserMessage};
use serde_json::Value;
use std::sync::Arc;

/// Message `index` of a history shared with the agent.
#[derive(Clone, Debug)]
pub struct Recorded {
    history: Arc<[Message]>,
    index: usize,
}

impl Recorded {
    /// Message `index` of `history` (`None` past its end).
    pub fn new(history: &Arc<[Message]>, index: usize) -> Option<Self> {
        (index < history.len()).then(|| Self {
            history: history.clone(),
            index,
        })
    }

    /// The message.
    pub fn message(&self) -> &Message {
        // In range: `new` checked it, and the history never changes.
        &self.history[self.index]
    }

    /// The history it is part of (the agent's own, when the client resumed it).
    pub fn history(&self) -> &Arc<[Message]> {
        &self.history
    }

    /// Its place in the history.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The message, when it is an answer.
    pub fn assistant(&self) -> Option<&AssistantMessage> {
        self.message().as_assistant()
    }

    /// The message, when it is the user's.
    pub fn user(&self) -> Option<&UserMessage> {
        match self.message() {
            Message::User(u) => Some(u),
            _ => None,
        }
    }

    /// The message, when it is a tool's result.
    pub fn tool_result(&self) -> Option<&ToolResultMessage> {
        match self.message() {
            Message::ToolResult(r) => Some(r),
            _ => None,
        }
    }
}

/// A finished call's result as the tool tree keeps it: received live, or a place in a
/// resumed history.
#[derive(Clone, Debug)]
pub enum CallResult {
    /// From the call's `tool_execution_end`.
    Live(ToolResult),
    /// A tool result message of a resumed history.
    Recorded(Recorded),
}

/// The details of a result that has none.
static NO_DETAILS: Value = Value::Null;

impl CallResult {
    /// Exactly what the model received.
    pub fn content(&self) -> &str {
        match self {
            CallResult::Live(r) => &r.content,
            CallResult::Recorded(r) => r.tool_result().map_or("", |m| m.content.as_str()),
        }
    }

    /// The fuller data for the UI (diffs, exit codes, hook marks).
    pub fn details(&self) -> &Value {
        match self {
            CallResult::Live(r) => &r.details,
            CallResult::Recorded(r) => r.tool_result().map_or(&NO_DETAILS, |m| &m.details),
        }
    }

    /// The images the result carries (an MCP tool's screenshots, say).
    pub fn images(&self) -> &[claw_agent::ImageData] {
        match self {
            CallResult::Live(r) => &r.images,
            CallResult::Recorded(r) => r.tool_result().map_or(&[], |m| m.images.as_slice()),
        }
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        match self {
            CallResult::Live(r) => r.is_error,
            CallResult::Recorded(r) => r.tool_result().is_some_and(|m| m.is_error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_result_reads_the_shared_message() {
        let history: Arc<[Message]> = vec![
            Message::user("go"),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "c1".into(),
                tool_name: "exec".into(),
                content: "done".into(),
                images: Vec::new(),
                details: serde_json::json!({"exit_code": 0}),
                is_error: true,
                timestamp: 0,
            }),
        ]
        .into();
        assert!(Recorded::new(&history, 2).is_none());
        let result = CallResult::Recorded(Recorded::new(&history, 1).unwrap());
        assert_eq!(result.content(), "done");
        assert_eq!(result.details()["exit_code"], 0);
        assert!(result.is_error());
        // The text is the history's own, not a copy.
        let Message::ToolResult(shared) = &history[1] else {
            panic!("message 1 is a result");
        };
        assert!(std::ptr::eq(result.content(), shared.content.as_str()));
        // Not a result: nothing to show rather than a panic.
        let user = CallResult::Recorded(Recorded::new(&history, 0).unwrap());
        assert_eq!(
            (user.content(), user.details(), user.is_error()),
            ("", &Value::Null, false)
        );
    }
}
