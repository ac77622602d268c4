//! `--mode rpc`: commands as JSON lines on stdin, events and responses as JSON lines on
//! stdout. The protocol is documented in docs/rpc.md.

use super::rpc_command;
use super::rpc_controls::{checkpoint_command, refused};
use super::write_json_line;
use crate::agent::{Agent, QueueKind, QueueMode, UserMessage};
use crate::checkpoint::Conflicts;
use crate::mcp::McpManager;
use crate::runtime::supervisor::UserInput;
use crate::runtime::{AgentMode, Supervisor, SupervisorOutcome};
use crate::setup::Controls;
use crate::tools::exec::{ApprovalDecision, ApprovalRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

pub use super::rpc_input::DEFAULT_MAX_LINE_BYTES;
pub use super::rpc_loop::{RpcOptions, RpcRuntime, serve};

/// A command read from stdin (read by `rpc_command::parse`, against its generated schema).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Command {
    Prompt {
        content: String,
    },
    Steer {
        content: String,
    },
    FollowUp {
        content: String,
    },
    Abort,
    InterruptTools,
    Compact {
        #[serde(default)]
        instructions: Option<String>,
    },
    GetState,
    SetQueueMode {
        queue: QueueName,
        mode: QueueMode,
    },
    Approve {
        id: String,
        decision: ApprovalDecision,
    },
    SetMode {
        mode: AgentMode,
    },
    Undo {
        #[serde(default = "skip")]
        conflicts: Conflicts,
    },
    Rewind {
        turn: usize,
        #[serde(default)]
        files: bool,
        #[serde(default)]
        conversation: bool,
        #[serde(default = "skip")]
        conflicts: Conflicts,
    },
    Diff,
    GetRequests,
    GetRequest {
        index: usize,
    },
}

fn skip() -> Conflicts {
    Conflicts::Skip
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum QueueName {
    Steering,
    FollowUp,
}

/// Who waits for which approval, by request id, with the request's line.
type Waiting = HashMap<String, (oneshot::Sender<ApprovalDecision>, Value)>;

/// How an approval request is put to whoever can answer it.
type Announce = Arc<dyn Fn(&Value) + Send + Sync>;

/// Approval requests waiting for an `approve` command, by id.
#[derive(Clone)]
pub struct PendingApprovals {
    /// `None` once input has ended: nobody is left to answer.
    waiting: Arc<Mutex<Option<Waiting>>>,
    announce: Announce,
}

impl Default for PendingApprovals {
    /// Requests printed on stdout, as `--mode rpc` does.
    fn default() -> Self {
        Self::announcing(write_json_line)
    }
}

impl PendingApprovals {
    /// Requests put by `announce` (e.g. to every client attached to the session).
    pub fn announcing(announce: impl Fn(&Value) + Send + Sync + 'static) -> Self {
        Self {
            waiting: Arc::new(Mutex::new(Some(HashMap::new()))),
            announce: Arc::new(announce),
        }
    }

    /// Announces an `approval_request` line and waits for the matching `approve`
    /// command; denies when the process shuts down first, or at once after the end of
    /// input.
    pub async fn ask(&self, request: ApprovalRequest) -> ApprovalDecision {
        let (tx, rx) = oneshot::channel();
        let mut line = json!({"type": "approval_request"});
        if let (Some(map), Ok(Value::Object(fields))) =
            (line.as_object_mut(), serde_json::to_value(&request))
        {
            map.extend(fields);
        }
        match self.waiting.lock().ok().as_deref_mut() {
            Some(Some(waiting)) => {
                waiting.insert(request.id.clone(), (tx, line.clone()));
            }
            _ => return ApprovalDecision::Deny,
        }
        (self.announce)(&line);
        rx.await.unwrap_or(ApprovalDecision::Deny)
    }

    /// The `approval_request` lines still waiting for an answer (for a client that
    /// joins while they wait).
    pub fn waiting_requests(&self) -> Vec<Value> {
        let waiting = self.waiting.lock().ok();
        waiting
            .as_deref()
            .and_then(Option::as_ref)
            .map(|w| w.values().map(|(_, line)| line.clone()).collect())
            .unwrap_or_default()
    }

    /// The end of input: what waits is denied, and so is every later request.
    pub fn close(&self) {
        let waiting = self.waiting.lock().ok().and_then(|mut w| w.take());
        for (_, (tx, _)) in waiting.into_iter().flatten() {
            let _ = tx.send(ApprovalDecision::Deny);
        }
    }

    /// Answers request `id`; false when no such request waits (never asked, or already
    /// answered: the first answer wins).
    pub fn resolve(&self, id: &str, decision: ApprovalDecision) -> bool {
        let sender = self
            .waiting
            .lock()
            .ok()
            .and_then(|mut w| w.as_mut().and_then(|w| w.remove(id)));
        sender.is_some_and(|(tx, _)| tx.send(decision).is_ok())
    }
}

/// What the commands read besides the supervisor.
#[derive(Clone, Copy)]
pub(crate) struct Sources<'a> {
    /// Hooks, checkpoints and plan mode.
    pub controls: &'a Controls,
    /// The MCP servers `get_state` lists.
    pub mcp: &'a McpManager,
    /// The session's request log.
    pub requests: &'a crate::llm::RequestTap,
    /// The custom commands and skills a `prompt` may name (`None`: it comes made, from
    /// an attached client).
    pub prompts: Option<&'a crate::typed::PromptFiles>,
}

/// Runs one command line and returns its response object.
pub(crate) async fn handle_line(
    supervisor: &Supervisor,
    sources: Sources<'_>,
    approvals: &PendingApprovals,
    line: &str,
) -> Value {
    let Sources {
        controls,
        mcp,
        requests,
        prompts,
    } = sources;
    let agent = supervisor.agent();
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => {
            return failure(
                None,
                format!("invalid JSON ({e}); send one JSON object per line"),
            );
        }
    };
    let name = value.get("type").and_then(Value::as_str).map(str::to_owned);
    let command = match rpc_command::parse(value) {
        Ok(command) => command,
        Err(e) => return failure(name.as_deref(), e.to_string()),
    };
    let name = name.unwrap_or_default();
    match command {
        // The supervisor runs the prompt hooks, then decides atomically: idle starts a
        // run, busy queues.
        Command::Prompt { content } => {
            let content = match prompts.map(|p| p.prepare(&content)).transpose() {
                Ok(made) => made.unwrap_or(content),
                Err(e) => return failure(Some(&name), e.to_string()),
            };
            match supervisor
                .deliver(UserInput::Submit(UserMessage::new(content)))
                .await
            {
                Err(blocked) => refused(&name, &blocked),
                Ok(SupervisorOutcome::Started) => success(&name, json!({})),
                Ok(_) => success(
                    &name,
                    json!({"queued": "follow_up", "note": "the agent is busy; queued as a follow-up"}),
                ),
            }
        }
        Command::Steer { content } => match supervisor.deliver(UserInput::Steer(content)).await {
            Err(blocked) => refused(&name, &blocked),
            Ok(SupervisorOutcome::Started) => {
                success(&name, json!({"note": "the agent was idle; started a run"}))
            }
            Ok(_) => success(&name, json!({"queued": "steering"})),
        },
        Command::FollowUp { content } => {
            match supervisor.deliver(UserInput::FollowUp(content)).await {
                Err(blocked) => refused(&name, &blocked),
                Ok(_) => success(&name, json!({})),
            }
        }
        Command::SetMode { mode } => {
            controls.modes.set(mode);
            success(&name, json!({"mode": mode}))
        }
        command @ (Command::Undo { .. } | Command::Rewind { .. } | Command::Diff) => {
            checkpoint_command(controls, &name, command).await
        }
        Command::GetRequests => match crate::inspect::rpc::list(requests).await {
            Ok(fields) => success(&name, fields),
            Err(e) => failure(Some(&name), e.to_string()),
        },
        Command::GetRequest { index } => match crate::inspect::rpc::one(requests, index).await {
            Ok(fields) => success(&name, fields),
            Err(e) => failure(Some(&name), e.to_string()),
        },
        Command::Abort => {
            supervisor.abort();
            success(&name, json!({}))
        }
        Command::InterruptTools => {
            agent.interrupt_tools();
            success(&name, json!({}))
        }
        Command::Compact { instructions } => match supervisor.compact(instructions) {
            Ok(()) => success(&name, json!({})),
            Err(e) => failure(Some(&name), format!("cannot compact now: {e}")),
        },
        Command::GetState => {
            let mut state = state_json(agent);
            state["mcp_servers"] = json!(mcp.servers());
            success(&name, json!({"state": state}))
        }
        Command::SetQueueMode { queue, mode } => {
            let kind = match queue {
                QueueName::Steering => QueueKind::Steering,
                QueueName::FollowUp => QueueKind::FollowUp,
            };
            agent.set_queue_mode(kind, mode);
            success(&name, json!({}))
        }
        Command::Approve { id, decision } => {
            if approvals.resolve(&id, decision) {
                success(&name, json!({}))
            } else {
                failure(
                    Some(&name),
                    format!("no approval request with id \"{id}\" is waiting"),
                )
            }
        }
    }
}

/// The `state` of `get_state` (without the MCP servers).
pub(crate) fn state_json(agent: &Agent) -> Value {
    let state = agent.state();
    let texts = |kind| {
        agent
            .queued(kind)
            .iter()
            .map(|m| m.preview_text())
            .collect::<Vec<_>>()
    };
    let mut usage = crate::agent::Usage::default();
    for message in state
        .messages
        .iter()
        .filter_map(crate::agent::Message::as_assistant)
    {
        usage.add(&message.usage);
    }
    json!({
        "model": state.model,
        "thinking": state.thinking,
        "is_streaming": state.is_streaming,
        "error": state.error,
        "pending_tool_calls": state.pending_tool_calls,
        "steering": texts(QueueKind::Steering),
        "follow_up": texts(QueueKind::FollowUp),
        "usage": usage,
        "context_usage": agent.context_usage(),
        "compaction": state.compaction,
        "message_count": state.messages.len(),
        "messages": *state.messages,
    })
}

/// A command's successful response, with `extra`'s fields.
pub(crate) fn success(command: &str, extra: Value) -> Value {
    let mut response = json!({"type": "response", "command": command, "ok": true});
    if let (Some(map), Value::Object(extra)) = (response.as_object_mut(), extra) {
        map.extend(extra);
    }
    response
}

/// A command's failed response.
pub(crate) fn failure(command: Option<&str>, error: String) -> Value {
    json!({"type": "response", "command": command, "ok": false, "error": error})
}
