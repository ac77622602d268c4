//! A loaded session's history as the `session/update`s that show it: the user's
//! messages as user chunks (with their images), the answers as message and thought
//! chunks, each tool call with its result (a file change with the diff its hunks give:
//! the file has moved on since), notices and background results as they were shown.

use super::diff::diffs;
use super::tools::view;
use super::updates::{image_content, message_end, result_content};
use crate::agent::{Block, Message};
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, TextContent, ToolCall, ToolCallContent,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// The updates replaying `messages`, in order.
pub async fn replay(messages: &[Message], workspace: &Path) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    // Each call's arguments, for its result's diff.
    let mut args: HashMap<&str, &Value> = HashMap::new();
    for message in messages {
        match message {
            Message::User(user) => {
                if !user.content.is_empty() {
                    updates.push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                        ContentBlock::Text(TextContent::new(user.content.clone())),
                    )));
                }
                for image in user.images.iter().filter(|i| i.is_loaded()) {
                    updates.push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                        ContentBlock::Image(image_content(image)),
                    )));
                }
            }
            Message::Assistant(assistant) => {
                for block in &assistant.content {
                    match block {
                        Block::Text { text } if !text.is_empty() => {
                            updates.push(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                                ContentBlock::from(text.clone()),
                            )))
                        }
                        Block::Thinking { thinking, .. } if !thinking.is_empty() => {
                            updates.push(super::updates::thought(thinking.clone()));
                        }
                        Block::ToolCall { id, name, args: a } => {
                            args.insert(id, a);
                            let view = view(name, a, workspace);
                            updates.push(SessionUpdate::ToolCall(
                                ToolCall::new(id.clone(), view.title)
                                    .kind(view.kind)
                                    .status(ToolCallStatus::Pending)
                                    .locations(view.locations)
                                    .raw_input(a.clone()),
                            ));
                        }
                        _ => {}
                    }
                }
                updates.extend(message_end(message));
            }
            Message::ToolResult(result) => {
                let call_args = args.get(result.tool_call_id.as_str()).copied();
                let mut content: Vec<ToolCallContent> = Vec::new();
                if let (false, Some(call_args)) = (result.is_error, call_args) {
                    let shown = diffs(&result.tool_name, call_args, &result.details, None);
                    content.extend(shown.into_iter().map(ToolCallContent::from));
                }
                content.extend(result_content(
                    &result.tool_name,
                    &result.content,
                    &result.images,
                ));
                let status = if result.is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    result.tool_call_id.clone(),
                    ToolCallUpdateFields::new().status(status).content(content),
                )));
            }
            Message::Notification(_) | Message::Notice(_) => updates.extend(message_end(message)),
        }
    }
    updates
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AssistantMessage, StopReason, ToolResultMessage, UserMessage};
    use serde_json::json;

    #[tokio::test]
    async fn a_conversation_replays_in_order_with_its_tool_calls() {
        let messages = vec![
            Message::User(UserMessage::new("read notes.txt")),
            Message::Assistant(AssistantMessage {
                content: vec![
                    Block::Thinking {
                        thinking: "let me look".into(),
                        signature: None,
                    },
                    Block::Text {
                        text: "Reading it.".into(),
                    },
                    Block::ToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        args: json!({"path": "notes.txt"}),
                    },
                ],
                stop_reason: StopReason::ToolUse,
                ..AssistantMessage::default()
            }),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "c1".into(),
                tool_name: "read_file".into(),
                content: "alpha".into(),
                images: Vec::new(),
                details: Value::Null,
                is_error: false,
                timestamp: 0,
            }),
        ];
        let updates = replay(&messages, Path::new("/ws")).await;
        let kinds: Vec<&str> = updates
            .iter()
            .map(|u| match u {
                SessionUpdate::UserMessageChunk(_) => "user",
                SessionUpdate::AgentThoughtChunk(_) => "thought",
                SessionUpdate::AgentMessageChunk(_) => "agent",
                SessionUpdate::ToolCall(_) => "tool_call",
                SessionUpdate::ToolCallUpdate(_) => "tool_call_update",
                _ => "other",
            })
            .collect();
        assert_eq!(
            kinds,
            ["user", "thought", "agent", "tool_call", "tool_call_update"]
        );
        let SessionUpdate::ToolCallUpdate(done) = &updates[4] else {
            unreachable!()
        };
        assert_eq!(done.fields.status, Some(ToolCallStatus::Completed));
        assert_eq!(
            done.fields.content,
            Some(vec![ToolCallContent::from("alpha".to_owned())])
        );
    }
}
