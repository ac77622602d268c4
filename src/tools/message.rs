//! The `message` tool: the agent sends a message outward (to the user or a channel)
//! through a callback; where it ends up is the runtime's business.

use crate::agent::{Tool, ToolResult, ToolUpdates};
use crate::tools::args::{optional_text, required_text};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The channel used when the model names none.
pub const DEFAULT_CHANNEL: &str = "cli";
/// The chat used when the model names none.
pub const DEFAULT_CHAT_ID: &str = "direct";

/// A message on its way out of the agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboundMessage {
    /// Where it goes, e.g. `cli`.
    pub channel: String,
    /// Which conversation on that channel.
    pub chat_id: String,
    /// The text.
    pub content: String,
}

/// Delivers outbound messages (the TUI shows a card, headless mode prints to stderr).
pub type MessageSender = Arc<dyn Fn(OutboundMessage) + Send + Sync>;

/// Sends messages through an injected [`MessageSender`].
pub struct MessageTool {
    send: MessageSender,
    channel: String,
    chat_id: String,
}

impl MessageTool {
    /// A tool delivering through `send`, defaulting to `cli:direct`.
    pub fn new(send: MessageSender) -> Self {
        Self::with_defaults(send, DEFAULT_CHANNEL, DEFAULT_CHAT_ID)
    }

    /// A tool delivering through `send` with its own default channel and chat.
    pub fn with_defaults(
        send: MessageSender,
        channel: impl Into<String>,
        chat_id: impl Into<String>,
    ) -> Self {
        Self {
            send,
            channel: channel.into(),
            chat_id: chat_id.into(),
        }
    }
}

#[async_trait]
impl Tool for MessageTool {
    fn name(&self) -> &str {
        "message"
    }

    fn label(&self) -> &str {
        "Message"
    }

    fn description(&self) -> &str {
        "Send a message to the user right away, without ending your turn (e.g. progress \
         on a long task, or a reminder from a scheduled job). channel and chat_id default \
         to the current conversation."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "The message text"},
                "channel": {"type": "string", "description": "Target channel (default: the current one)"},
                "chat_id": {"type": "string", "description": "Target chat on that channel (default: the current one)"}
            },
            "required": ["content"]
        })
    }

    async fn execute(
        &self,
        _call_id: &str,
        args: Value,
        _cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        let parsed = required_text(&args, "content").and_then(|content| {
            Ok(OutboundMessage {
                channel: optional_text(&args, "channel")?
                    .unwrap_or(&self.channel)
                    .to_owned(),
                chat_id: optional_text(&args, "chat_id")?
                    .unwrap_or(&self.chat_id)
                    .to_owned(),
                content: content.to_owned(),
            })
        });
        let message = match parsed {
            Ok(m) => m,
            Err(e) => return ToolResult::error(e),
        };
        let text = format!("Message sent to {}:{}", message.channel, message.chat_id);
        let details = serde_json::to_value(&message).unwrap_or_default();
        (self.send)(message);
        ToolResult::text(text).with_details(details)
    }
}
