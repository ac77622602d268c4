//! Keeps each finished subagent call beside the session that started the subagent
//! (`session::record_subagent_call`), so the tool tree shows a subagent's calls under
//! its `spawn` again when that session is opened later. The runtime's events are
//! watched on the forwarding task; the files are written on a thread of their own.

use crate::agent::AgentEvent;
use crate::runtime::RuntimeEvent;
use crate::session::{SubagentCall, record_subagent_call, session_path_by_id};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc;

/// Watches subagent events and hands finished calls to the writer thread.
pub(super) struct SubagentLog {
    /// The session each subagent reports to.
    origins: HashMap<String, String>,
    /// Calls started and not finished: their tool and arguments.
    started: HashMap<String, (String, Value)>,
    tx: mpsc::Sender<(String, SubagentCall)>,
}

impl SubagentLog {
    /// A log writing into the sessions of `workspace` under `data_dir`.
    pub(super) fn new(data_dir: PathBuf, workspace: PathBuf) -> Self {
        let (tx, rx) = mpsc::channel::<(String, SubagentCall)>();
        let spawned = std::thread::Builder::new()
            .name("subagent-log".into())
            .spawn(move || {
                let mut paths: HashMap<String, Option<PathBuf>> = HashMap::new();
                for (session, call) in rx {
                    let path = paths
                        .entry(session.clone())
                        .or_insert_with(|| session_path_by_id(&data_dir, &workspace, &session));
                    let Some(path) = path else {
                        continue;
                    };
                    if let Err(e) = record_subagent_call(path, &call) {
                        tracing::warn!("cannot record a subagent's call: {e}");
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("subagent calls will not be kept for later: {e}");
        }
        Self {
            origins: HashMap::new(),
            started: HashMap::new(),
            tx,
        }
    }

    /// Follows one runtime event.
    pub(super) fn observe(&mut self, event: &RuntimeEvent) {
        match event {
            RuntimeEvent::SubagentUpdate { info } => {
                self.origins.insert(info.id.clone(), info.chat_id.clone());
            }
            RuntimeEvent::SubagentEvent {
                subagent_id,
                parent_tool_call_id,
                event,
            } => match event {
                AgentEvent::ToolExecutionStart {
                    tool_call_id,
                    tool_name,
                    args,
                } => {
                    self.started
                        .insert(tool_call_id.clone(), (tool_name.clone(), args.clone()));
                }
                AgentEvent::ToolExecutionEnd {
                    tool_call_id,
                    tool_name,
                    result,
                    ..
                } => {
                    let (name, args) = self
                        .started
                        .remove(tool_call_id)
                        .unwrap_or_else(|| (tool_name.clone(), Value::Null));
                    let Some(session) = self.origins.get(subagent_id) else {
                        return;
                    };
                    let call = SubagentCall {
                        parent_call_id: parent_tool_call_id.clone(),
                        subagent_id: subagent_id.clone(),
                        call_id: tool_call_id.clone(),
                        tool_name: name,
                        args,
                        result: result.clone(),
                    };
                    let _ = self.tx.send((session.clone(), call));
                }
                _ => {}
            },
            _ => {}
        }
    }
}
