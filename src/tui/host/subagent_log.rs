//! Keeps each finished subagent call beside the session that started the subagent
//! (`session::SubagentCallWriter`), so the tool tree shows a subagent's calls under
//! its `spawn` again when that session is opened later. The runtime's events are
//! watched on the forwarding task; the files are written on a thread of their own,
//! which says a failed write into the session on screen and, while one fails, tries
//! again every few seconds so the calls held back go out once there is room.

use crate::agent::AgentEvent;
use crate::runtime::RuntimeEvent;
use crate::session::{SideLogReport, SubagentCall, SubagentCallWriter, session_path_by_id};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;
use tokio::sync::watch;

/// How often writing is tried again while it fails (a full disk).
const RETRY: Duration = Duration::from_secs(2);

/// Watches subagent events and hands finished calls to the writer thread.
pub(super) struct SubagentLog {
    /// The session each subagent reports to.
    origins: HashMap<String, String>,
    /// Calls started and not finished: their tool and arguments.
    started: HashMap<String, (String, Value)>,
    tx: mpsc::Sender<(String, SubagentCall)>,
}

impl SubagentLog {
    /// A log writing into the sessions of `workspace` under `data_dir`; how writing
    /// goes is reported into the latest of `reports` (the session on screen).
    pub(super) fn new(
        data_dir: PathBuf,
        workspace: PathBuf,
        reports: watch::Receiver<SideLogReport>,
    ) -> Self {
        let (tx, rx) = mpsc::channel::<(String, SubagentCall)>();
        let spawned = std::thread::Builder::new()
            .name("subagent-log".into())
            .spawn(move || write_loop(&rx, &reports, &data_dir, &workspace));
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

/// Writes the calls that come in `rx` until it closes, then what still waits. The
/// report of the session on screen is taken for each write only, so no session's
/// status is kept open by this thread.
fn write_loop(
    rx: &mpsc::Receiver<(String, SubagentCall)>,
    reports: &watch::Receiver<SideLogReport>,
    data_dir: &std::path::Path,
    workspace: &std::path::Path,
) {
    let mut writer = SubagentCallWriter::new();
    let mut paths: HashMap<String, Option<PathBuf>> = HashMap::new();
    loop {
        let next = if writer.is_failing() {
            rx.recv_timeout(RETRY)
        } else {
            rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
        };
        let report = reports.borrow().clone();
        match next {
            Ok((session, call)) => {
                let path = paths
                    .entry(session.clone())
                    .or_insert_with(|| session_path_by_id(data_dir, workspace, &session));
                match path {
                    Some(path) => writer.record(path, &call, &report),
                    None => tracing::warn!(
                        "a subagent's call is not kept: its session {session} has no file"
                    ),
                }
            }
            Err(RecvTimeoutError::Timeout) => writer.retry(&report),
            Err(RecvTimeoutError::Disconnected) => {
                writer.retry(&report);
                return;
            }
        }
    }
}
