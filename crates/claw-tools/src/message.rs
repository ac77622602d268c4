//! The `message` tool: the agent sends a message outward (to the user or a channel)
//! through a callback; where it ends up is the runtime's business.

use crate::args;
use async_trait::async_trait;
use claw_agent::{ToolResult, ToolSpec, ToolUpdates, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use std::sync::Arc;
use std::sync::LazyLock;
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

/// The arguments of `message`.
#[derive(Deserialize, JsonSchema)]
pub struct MessageArgs {
    /// The message text
    content: String,
    /// Target channel (default: the current one)
    channel: Option<String>,
    /// Target chat on that channel (default: the current one)
    chat_id: Option<String>,
}

#[async_trait]
impl TypedTool for MessageTool {
    type Args = MessageArgs;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new(
                "message",
                "Message",
                "Send a message to the user right away, without ending your turn (e.g. progress \
         on a long task, or a reminder from a scheduled job). channel and chat_id default \
         to the current conversation.",
                args::schema::<MessageArgs>(),
            )
        });
        &SPEC
    }

    async fn run(
        &self,
        _call_id: &str,
        args: MessageArgs,
        _cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        if let Err(e) = args::non_blank("content", &args.content) {
            return ToolResult::error(e.to_string());
        }
        let message = OutboundMessage {
            channel: args::given(args.channel).unwrap_or_else(|| self.channel.clone()),
            chat_id: args::given(args.chat_id).unwrap_or_else(|| self.chat_id.clone()),
            content: args.content,
        };
        let text = format!("Message sent to {}:{}", message.channel, message.chat_id);
        let details = serde_json::to_value(&message).unwrap_or_default();
        (self.send)(message);
        ToolResult::text(text).with_details(details)
    }
}
