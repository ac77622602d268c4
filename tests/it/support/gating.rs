//! Scripted replies that stop part-way until the test lets them go on, and the small
//! readers the agent tests share.

use crate::support::Reply;
use claw_tui::agent::AgentEvent;
use claw_tui::llm::{LlmMessage, LlmRequest};
use std::sync::Arc;
use tokio::sync::Notify;

/// Splits a scripted reply after `split` events; the rest waits for `gate`.
pub fn gated(reply: Reply, split: usize, gate: &Arc<Notify>) -> Reply {
    let Reply::Events(mut events) = reply else {
        panic!("gated() needs an event reply");
    };
    let rest = events.split_off(split);
    Reply::Gated(events, gate.clone(), rest)
}

/// A scripted reply that streams nothing until `gate` is notified (a run that stays
/// busy for as long as the test needs).
pub fn held(reply: Reply, gate: &Arc<Notify>) -> Reply {
    gated(reply, 0, gate)
}

/// A text answer whose stream stops after its first delta until `gate` is notified.
pub fn gated_text(text: &str, gate: &Arc<Notify>) -> Reply {
    gated(Reply::text(&[text, " (end)"]), 2, gate)
}

/// Whether `event` is a streamed piece of a message.
pub fn is_update(event: &AgentEvent) -> bool {
    matches!(event, AgentEvent::MessageUpdate { .. })
}

/// The text of the last message of a request, when it is a user message.
pub fn last_user(request: &LlmRequest) -> Option<String> {
    match request.messages.last() {
        Some(LlmMessage::User(u)) => Some(u.content.clone()),
        _ => None,
    }
}
