//! Bus messages as the notifications the model reads: one each, or a backlog of
//! several as one notification that lists them.

use super::NOTIFICATION_PREFIX;
use crate::agent::{Message, NotificationMessage};
use crate::runtime::bus::InboundMessage;

/// Wraps a bus message as the notification the model reads.
pub fn to_notification(message: &InboundMessage) -> Message {
    Message::Notification(NotificationMessage {
        source: message.sender_id.clone(),
        content: format!("{NOTIFICATION_PREFIX}\n{}", message.content),
        timestamp: message.timestamp,
    })
}

/// The notifications waiting, as the model gets them: a backlog of several is one
/// notification that lists each (one message, one run), in the order they arrived.
pub fn notifications(pending: &[InboundMessage]) -> Vec<Message> {
    match pending {
        [] => Vec::new(),
        [one] => vec![to_notification(one)],
        many => {
            let first = &many[0].sender_id;
            let source = if many.iter().all(|m| &m.sender_id == first) {
                first.clone()
            } else {
                "background".to_owned()
            };
            let items: Vec<String> = many
                .iter()
                .enumerate()
                .map(|(i, m)| format!("{}. {}", i + 1, m.content))
                .collect();
            vec![Message::Notification(NotificationMessage {
                source,
                content: format!(
                    "{NOTIFICATION_PREFIX}\n{} background results arrived; each is listed below, \
                     oldest first.\n\n{}",
                    many.len(),
                    items.join("\n\n")
                ),
                timestamp: many.iter().map(|m| m.timestamp).max().unwrap_or(0),
            })]
        }
    }
}
