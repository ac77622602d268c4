//! Running the `Agent` on a scripted provider and reading what the run produced.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::scripted::{Reply, ScriptedProvider};
use super::until_agent_end;
use claw_tui::agent::{Agent, AgentEvent, Message, ToolResultMessage};
use claw_tui::llm::LlmMessage;
use std::sync::Arc;

/// An agent on a scripted provider with `tools`.
pub fn agent_with(
    replies: Vec<Reply>,
    tools: Vec<Arc<dyn claw_tui::agent::Tool>>,
) -> (Agent, Arc<ScriptedProvider>) {
    let provider = ScriptedProvider::new(replies);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_tools(tools);
    (agent, provider)
}

/// Prompts and collects the run's events.
pub async fn run(agent: &Agent, prompt: &str) -> Vec<AgentEvent> {
    let mut rx = agent.subscribe(None);
    agent.prompt(prompt).unwrap();
    until_agent_end(&mut rx).await
}

/// The tool result messages that entered the context, in order.
pub fn tool_results(events: &[AgentEvent]) -> Vec<ToolResultMessage> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd {
                message: Message::ToolResult(r),
            } => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The tool results the model received in `request`.
pub fn sent_results(request: &claw_tui::llm::LlmRequest) -> Vec<ToolResultMessage> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            LlmMessage::ToolResult(r) => Some(r.clone().into_owned()),
            _ => None,
        })
        .collect()
}

/// The final answer text of the run.
pub fn final_text(events: &[AgentEvent]) -> String {
    let Some(AgentEvent::AgentEnd { messages }) = events.last() else {
        panic!("the run did not end with agent_end")
    };
    messages
        .iter()
        .rev()
        .find_map(Message::as_assistant)
        .map(|a| a.text())
        .unwrap_or_default()
}

/// The user messages' texts of a request, in order.
pub fn user_texts(request: &claw_tui::llm::LlmRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            LlmMessage::User(u) => Some(u.content.clone()),
            _ => None,
        })
        .collect()
}
