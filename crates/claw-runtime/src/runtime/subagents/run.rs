//! One subagent's life: its own `Agent`, the forwarding of its events, and how its end
//! is classified and reported.

use super::{SubagentInfo, SubagentManager, SubagentStatus};
use crate::agent::{Agent, AgentEvent, Message, NoticeLevel};
use crate::runtime::bus::{InboundMessage, SYSTEM_CHANNEL};
use crate::runtime::event::RuntimeEvent;
use crate::tools::policy::{AgentRole, SubagentRef};
use tokio_util::sync::CancellationToken;

/// The `sender_id` of subagent results on the bus.
pub const SENDER: &str = "subagent";

/// What a started subagent's task needs.
pub(super) struct Job {
    pub(super) id: String,
    pub(super) label: String,
    pub(super) task: String,
    pub(super) parent_tool_call_id: String,
    pub(super) cancel: CancellationToken,
}

/// How a subagent ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// It answered.
    Done(String),
    /// It failed for this reason.
    Failed(String),
    /// It ran out of turns; its last text so far.
    TurnLimit { partial: Option<String> },
    /// It was cancelled; its last text so far.
    Cancelled { partial: Option<String> },
}

impl Outcome {
    pub(super) fn status(&self) -> SubagentStatus {
        match self {
            Outcome::Done(_) => SubagentStatus::Done,
            Outcome::Failed(_) => SubagentStatus::Failed,
            Outcome::TurnLimit { .. } => SubagentStatus::TurnLimit,
            Outcome::Cancelled { .. } => SubagentStatus::Cancelled,
        }
    }

    /// The `system` message telling the main agent how the subagent ended.
    pub(super) fn notification(&self, info: &SubagentInfo, max_turns: u32) -> InboundMessage {
        let head = |verb: &str| format!("[Subagent \"{}\" ({}) {verb}]", info.label, info.id);
        let partial_text = |partial: &Option<String>| match partial {
            Some(text) => format!("Its last partial answer:\n{text}"),
            None => "It had not written any answer yet.".to_owned(),
        };
        let content = match self {
            Outcome::Done(text) => format!("{}\n{text}", head("completed")),
            Outcome::Failed(reason) => format!("{}\n{reason}", head("failed")),
            Outcome::TurnLimit { partial } => format!(
                "{}\nIt reached its turn limit ({max_turns} turns) before finishing the task, \
                 so the task is not done. {}",
                head("failed"),
                partial_text(partial)
            ),
            Outcome::Cancelled { partial } => format!(
                "{}\nIt was cancelled by the user before it finished. {}",
                head("cancelled"),
                partial_text(partial)
            ),
        };
        let message = InboundMessage::new(SYSTEM_CHANNEL, SENDER, info.chat_id.clone(), content);
        // The user cancelled it: they know, and the model hears of it with the next run.
        match self {
            Outcome::Cancelled { .. } => message.deferred(),
            _ => message,
        }
    }
}

/// Runs the subagent `job` to its end, forwarding its events, then reports the outcome.
pub(super) async fn run(manager: SubagentManager, job: Job) {
    let outcome = drive(&manager, &job).await;
    manager.finish(&job.id, outcome);
}

/// The subagent's agent; its tools come from the policy, so `[tools] disabled`,
/// approval and the rest hold for it as for the main agent, and its approval requests
/// name it.
fn build_agent(manager: &SubagentManager, job: &Job) -> Agent {
    let shared = &manager.shared;
    let config = &shared.config;
    let provider = config.requests.tagged(shared.provider.clone(), &job.id);
    let agent = Agent::new(provider, config.model.clone());
    agent.set_system_prompt(manager.system_prompt());
    let role = AgentRole::Subagent(SubagentRef {
        id: job.id.clone(),
        label: job.label.clone(),
        task: job.task.clone(),
    });
    shared.policy.equip(&agent, &role);
    agent.set_max_turns(config.max_turns);
    agent.set_thinking_level(config.thinking);
    agent.set_tool_execution(config.tool_execution);
    // A long task fills the window as the main agent's does: compacted the same way.
    agent.configure(|c| {
        c.compaction = config.compaction.clone();
        c.context_window = config.context_window;
    });
    agent
}

async fn drive(manager: &SubagentManager, job: &Job) -> Outcome {
    if job.cancel.is_cancelled() {
        return Outcome::Cancelled { partial: None };
    }
    let agent = build_agent(manager, job);
    let mut events = agent.subscribe(None);
    // History stays empty: the task is the subagent's whole context.
    if let Err(e) = agent.prompt(job.task.clone()) {
        return Outcome::Failed(format!("It could not start: {e}"));
    }
    let mut cancelled = false;
    let added = loop {
        let event = tokio::select! {
            biased;
            () = job.cancel.cancelled(), if !cancelled => {
                cancelled = true;
                agent.abort();
                continue;
            }
            event = events.recv() => event,
        };
        let Some(event) = event else {
            // The agent lives in this scope, so its sender cannot be gone; be safe anyway.
            break Vec::new();
        };
        manager.observe(&job.id, &event);
        let end = match &event {
            AgentEvent::AgentEnd { messages } => Some(messages.clone()),
            _ => None,
        };
        manager.shared.events.send(RuntimeEvent::SubagentEvent {
            subagent_id: job.id.clone(),
            parent_tool_call_id: job.parent_tool_call_id.clone(),
            event,
        });
        if let Some(messages) = end {
            break messages;
        }
    };
    classify(&added, cancelled)
}

/// Decides how a run that added `messages` ended.
fn classify(messages: &[Message], cancelled: bool) -> Outcome {
    let last_text = messages
        .iter()
        .rev()
        .filter_map(Message::as_assistant)
        .map(|a| a.text())
        .find(|t| !t.trim().is_empty());
    if cancelled {
        return Outcome::Cancelled { partial: last_text };
    }
    // The loop ends a run at its turn limit with a warning notice as the last message.
    if let Some(Message::Notice(notice)) = messages.last()
        && notice.level == NoticeLevel::Warning
    {
        return Outcome::TurnLimit { partial: last_text };
    }
    match messages.iter().rev().find_map(Message::as_assistant) {
        Some(last) if last.is_failed() => Outcome::Failed(format!(
            "Its model call failed: {}",
            last.error_message
                .as_deref()
                .unwrap_or("no details were given")
        )),
        Some(last) => {
            let text = last.text();
            if text.trim().is_empty() {
                Outcome::Done("(It finished without writing an answer.)".to_owned())
            } else {
                Outcome::Done(text)
            }
        }
        None => Outcome::Failed(
            "Its loop ended without an answer (an internal error); try spawning it again."
                .to_owned(),
        ),
    }
}

impl SubagentManager {
    /// Folds one of the subagent's events into its dashboard record.
    fn observe(&self, id: &str, event: &AgentEvent) {
        let mut state = self.shared.lock();
        let Some(record) = state.record(id) else {
            return;
        };
        let changed = match event {
            AgentEvent::TurnStart { turn } => {
                record.info.turns = *turn;
                true
            }
            AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } => {
                record.info.tokens += a.usage.total_tokens();
                true
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                ..
            } => {
                record
                    .active_tools
                    .push((tool_call_id.clone(), tool_name.clone()));
                true
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                record.active_tools.retain(|(call, _)| call != tool_call_id);
                true
            }
            _ => false,
        };
        if changed {
            self.shared.announce(record);
        }
    }
}
