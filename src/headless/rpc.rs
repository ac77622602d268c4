//! `--mode rpc`: commands as JSON lines on stdin, events and responses as JSON lines on
//! stdout. The protocol is documented in docs/rpc.md.

use super::write_json_line;
use crate::agent::{Agent, AgentEvent, QueueKind, QueueMode};
use crate::checkpoint::{Conflicts, UndoOutcome};
use crate::hooks::PromptDecision;
use crate::runtime::{AgentMode, RuntimeEvent, Supervisor, SupervisorOutcome};
use crate::setup::Controls;
use crate::tools::exec::{ApprovalDecision, ApprovalRequest};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::{mpsc, oneshot};

/// A command read from stdin.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Command {
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
}

fn skip() -> Conflicts {
    Conflicts::Skip
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum QueueName {
    Steering,
    FollowUp,
}

const COMMANDS: &str = "prompt, steer, follow_up, abort, get_state, set_queue_mode, approve, \
                        set_mode, undo, rewind, diff";

/// Approval requests waiting for an `approve` command, by id.
#[derive(Clone, Default)]
pub struct PendingApprovals {
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>>,
}

impl PendingApprovals {
    /// Prints an `approval_request` line and waits for the matching `approve` command;
    /// denies when the process shuts down first.
    pub async fn ask(&self, request: ApprovalRequest) -> ApprovalDecision {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(request.id.clone(), tx);
        }
        let mut line = json!({"type": "approval_request"});
        if let (Some(map), Ok(Value::Object(fields))) =
            (line.as_object_mut(), serde_json::to_value(&request))
        {
            map.extend(fields);
        }
        write_json_line(&line);
        rx.await.unwrap_or(ApprovalDecision::Deny)
    }

    fn resolve(&self, id: &str, decision: ApprovalDecision) -> bool {
        let sender = self.waiting.lock().ok().and_then(|mut w| w.remove(id));
        sender.is_some_and(|tx| tx.send(decision).is_ok())
    }
}

/// Serves RPC commands from `input` until EOF, then waits for the running prompt to
/// finish; returns the exit code.
pub async fn serve(
    supervisor: &Supervisor,
    controls: &Controls,
    runtime_events: mpsc::UnboundedReceiver<RuntimeEvent>,
    approvals: PendingApprovals,
    input: impl AsyncRead + Unpin,
) -> i32 {
    let agent = supervisor.agent();
    let events = agent.subscribe(None);
    let (done_tx, done_rx) = oneshot::channel();
    let forwarder = tokio::spawn(forward_events(events, runtime_events, done_rx));
    let mut lines = BufReader::new(input).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) if line.trim().is_empty() => {}
            Ok(Some(line)) => {
                write_json_line(&handle_line(supervisor, controls, &approvals, &line).await)
            }
            Ok(None) => break,
            Err(e) => {
                write_json_line(
                    &json!({"type": "response", "ok": false, "error": format!("cannot read stdin: {e}")}),
                );
                break;
            }
        }
    }
    agent.wait_for_idle().await;
    // `state()` takes the lock under which `agent_end` is handed to subscribers, so after
    // it every event of the run is in the forwarder's channel.
    let _ = agent.state();
    let _ = done_tx.send(());
    let _ = forwarder.await;
    super::EXIT_OK
}

async fn forward_events(
    mut events: mpsc::UnboundedReceiver<AgentEvent>,
    mut runtime_events: mpsc::UnboundedReceiver<RuntimeEvent>,
    mut done: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            biased;
            event = events.recv() => match event {
                Some(event) => write_json_line(&event),
                None => return,
            },
            Some(event) = runtime_events.recv() => {
                super::report_on_stderr(&event);
                write_json_line(&event);
            }
            _ = &mut done => {
                while let Ok(event) = events.try_recv() {
                    write_json_line(&event);
                }
                return;
            }
        }
    }
}

/// The text the prompt hooks let through, or the response refusing it.
async fn prompted(controls: &Controls, name: &str, content: String) -> Result<String, Value> {
    match controls.hooks.prompt(&content).await {
        PromptDecision::Send(text) => Ok(text),
        PromptDecision::Block(reason) => Err(json!({
            "type": "response", "command": name, "ok": false, "blocked": true,
            "error": format!("a prompt hook blocked it: {reason}"),
        })),
    }
}

/// Runs checkpoint work off the async runtime (it reads and writes files).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(format!("the operation stopped unexpectedly: {e}")))
}

/// An undo or file rewind as response fields.
fn undo_fields(outcome: &UndoOutcome) -> Value {
    match outcome {
        UndoOutcome::Done(report) => json!({
            "done": true, "report": report, "message": report.message(),
        }),
        UndoOutcome::Confirm(question) => json!({
            "done": false, "confirm": question, "message": format!(
                "{} Nothing was changed; send it again with \"conflicts\": \"overwrite\" \
                 or \"skip\".", question.message()
            ),
        }),
    }
}

/// Runs `undo`, `rewind` and `diff`.
async fn checkpoint_command(controls: &Controls, name: &str, command: Command) -> Value {
    let checkpoints = controls.checkpoints.clone();
    let outcome = match command {
        Command::Undo { conflicts } => {
            blocking(move || checkpoints.undo(conflicts).map(|o| undo_fields(&o))).await
        }
        Command::Rewind {
            turn,
            files,
            conversation,
            conflicts,
        } => {
            if !files && !conversation {
                return failure(
                    Some(name),
                    "say what to rewind: \"files\": true, \"conversation\": true, or both".into(),
                );
            }
            blocking(move || {
                let mut fields = json!({});
                if files {
                    let outcome = checkpoints.rewind_files(turn, conflicts)?;
                    let confirm = matches!(outcome, UndoOutcome::Confirm(_));
                    fields["files"] = undo_fields(&outcome);
                    if confirm {
                        return Ok(fields);
                    }
                }
                if conversation {
                    let rewound = checkpoints.rewind_conversation(turn)?;
                    fields["conversation"] = json!({
                        "prompt": rewound.prompt,
                        "message_count": rewound.messages.len(),
                    });
                }
                Ok(fields)
            })
            .await
        }
        Command::Diff => blocking(move || checkpoints.session_diff())
            .await
            .map(|files| {
                let files: Vec<Value> = files
                    .iter()
                    .map(|f| json!({"change": f.change, "changed_outside": f.changed_outside}))
                    .collect();
                json!({ "files": files })
            }),
        _ => return failure(Some(name), "not a checkpoint command".into()),
    };
    match outcome {
        Ok(fields) => success(name, fields),
        Err(e) => failure(Some(name), e),
    }
}

/// Runs one command line and returns its response object.
async fn handle_line(
    supervisor: &Supervisor,
    controls: &Controls,
    approvals: &PendingApprovals,
    line: &str,
) -> Value {
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
    let command: Command = match serde_json::from_value(value) {
        Ok(command) => command,
        Err(e) => {
            let error = match &name {
                Some(n) if !COMMANDS.split(", ").any(|c| c == n) => {
                    format!("unknown command type \"{n}\"; expected one of {COMMANDS}")
                }
                Some(n) => format!("bad \"{n}\" command: {e}"),
                None => format!("missing \"type\"; expected one of {COMMANDS}"),
            };
            return failure(name.as_deref(), error);
        }
    };
    let name = name.unwrap_or_default();
    match command {
        // The supervisor decides atomically: idle starts a run, busy queues.
        Command::Prompt { content } => match prompted(controls, &name, content).await {
            Err(refusal) => refusal,
            Ok(content) => match supervisor.submit(content) {
                SupervisorOutcome::Started => success(&name, json!({})),
                _ => success(
                    &name,
                    json!({"queued": "follow_up", "note": "the agent is busy; queued as a follow-up"}),
                ),
            },
        },
        Command::Steer { content } => match prompted(controls, &name, content).await {
            Err(refusal) => refusal,
            Ok(content) => match supervisor.steer(content) {
                SupervisorOutcome::Started => {
                    success(&name, json!({"note": "the agent was idle; started a run"}))
                }
                _ => success(&name, json!({"queued": "steering"})),
            },
        },
        Command::FollowUp { content } => match prompted(controls, &name, content).await {
            Err(refusal) => refusal,
            Ok(content) => {
                agent.follow_up(content);
                success(&name, json!({}))
            }
        },
        Command::SetMode { mode } => {
            controls.modes.set(mode);
            success(&name, json!({"mode": mode}))
        }
        command @ (Command::Undo { .. } | Command::Rewind { .. } | Command::Diff) => {
            checkpoint_command(controls, &name, command).await
        }
        Command::Abort => {
            supervisor.abort();
            success(&name, json!({}))
        }
        Command::GetState => success(&name, json!({"state": state_json(agent)})),
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

fn state_json(agent: &Agent) -> Value {
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
        "message_count": state.messages.len(),
        "messages": *state.messages,
    })
}

fn success(command: &str, extra: Value) -> Value {
    let mut response = json!({"type": "response", "command": command, "ok": true});
    if let (Some(map), Value::Object(extra)) = (response.as_object_mut(), extra) {
        map.extend(extra);
    }
    response
}

fn failure(command: Option<&str>, error: String) -> Value {
    json!({"type": "response", "command": command, "ok": false, "error": error})
}
