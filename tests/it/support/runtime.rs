//! Helpers shared by the runtime tests: a provider that routes each request to a
//! script chosen by the conversation's first user message (a subagent's task), so
//! concurrent subagents get deterministic answers whatever order they run in; and
//! settings read from a real config file in a temp home.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::scripted::message;
use crate::support::{DEADLINE, Reply, ScriptedProvider};
use claw_tui::agent::{Block, MessageDelta, StopReason};
use claw_tui::cli::Cli;
use claw_tui::config::Settings;
use claw_tui::llm::{LlmEvent, LlmMessage, LlmRequest, LlmStream, Provider};
use claw_tui::runtime::{RuntimeEvent, SubagentInfo, SubagentStatus};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

/// Routes requests by the first user message to one `ScriptedProvider` per task.
#[derive(Default)]
pub struct RoutingProvider {
    routes: Mutex<HashMap<String, Arc<ScriptedProvider>>>,
    unknown: Arc<ScriptedProvider>,
}

impl RoutingProvider {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Scripts the conversation that starts with `task`.
    pub fn route(&self, task: &str, replies: Vec<Reply>) -> Arc<ScriptedProvider> {
        let provider = ScriptedProvider::new(replies);
        self.routes
            .lock()
            .unwrap()
            .insert(task.to_owned(), provider.clone());
        provider
    }

    /// The requests made for `task`.
    pub fn requests(&self, task: &str) -> Vec<LlmRequest<'static>> {
        self.routes.lock().unwrap()[task].requests()
    }

    /// The script for conversations no route matches (e.g. one a cron fire starts).
    pub fn unrouted(&self) -> &ScriptedProvider {
        &self.unknown
    }
}

/// Settings as claw-tui resolves them from a config file holding `config` (plus the
/// test build as the exec sandbox launcher), with the workspace, data and state dirs
/// inside the returned temp dir.
pub fn settings(config: &str) -> (tempfile::TempDir, Settings) {
    use clap::Parser;
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let config_path = dir.path().join("config.toml");
    let launcher = format!("launcher = {:?}\n", env!("CARGO_BIN_EXE_claw-tui"));
    // The launcher goes into the file's own [exec] table, or a new one.
    let text = if config.contains("[exec]") {
        config.replacen("[exec]\n", &format!("[exec]\n{launcher}"), 1)
    } else {
        format!("{config}\n[exec]\n{launcher}")
    };
    std::fs::write(&config_path, text).unwrap();
    let cli = Cli::parse_from([
        "claw-tui".as_ref(),
        "--provider".as_ref(),
        "demo".as_ref(),
        "--config".as_ref(),
        config_path.as_os_str(),
        "--workspace".as_ref(),
        workspace.as_os_str(),
    ] as [&std::ffi::OsStr; 7]);
    let mut settings = claw_tui::config::resolve(&cli.config_flags(), &|_| None).unwrap();
    settings.data_dir = dir.path().join("data");
    settings.state_dir = dir.path().join("state");
    (dir, settings)
}

fn first_user(request: &LlmRequest) -> Option<String> {
    request.messages.iter().find_map(|m| match m {
        LlmMessage::User(u) => Some(u.content.clone()),
        _ => None,
    })
}

impl Provider for RoutingProvider {
    fn stream(&self, request: LlmRequest, cancel: CancellationToken) -> LlmStream {
        let route = first_user(&request)
            .and_then(|task| self.routes.lock().unwrap().get(&task).cloned())
            .unwrap_or_else(|| self.unknown.clone());
        route.stream(request, cancel)
    }
}

/// An answer with text followed by one tool call.
pub fn text_and_call(text: &str, id: &str, name: &str, args: Value) -> Reply {
    let events = vec![
        LlmEvent::Start,
        LlmEvent::Delta(MessageDelta::Text {
            index: 0,
            text: text.to_owned(),
        }),
        LlmEvent::Delta(MessageDelta::ToolCallStart {
            index: 1,
            id: id.to_owned(),
            name: name.to_owned(),
        }),
        LlmEvent::Delta(MessageDelta::ToolCallArgs {
            index: 1,
            json: args.to_string(),
        }),
        LlmEvent::Done(message(
            vec![
                Block::Text {
                    text: text.to_owned(),
                },
                Block::ToolCall {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    args,
                },
            ],
            StopReason::ToolUse,
        )),
    ];
    Reply::Events(events)
}

/// Receives runtime events until one matches `pred`; returns all received so far.
pub async fn until_runtime(
    rx: &mut UnboundedReceiver<RuntimeEvent>,
    pred: impl Fn(&RuntimeEvent) -> bool,
) -> Vec<RuntimeEvent> {
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(DEADLINE, rx.recv())
            .await
            .expect("timed out waiting for a runtime event")
            .expect("runtime event channel closed");
        let hit = pred(&event);
        events.push(event);
        if hit {
            return events;
        }
    }
}

/// Whether `event` reports subagent `id` reaching `status`.
pub fn is_status(event: &RuntimeEvent, id: &str, status: SubagentStatus) -> bool {
    matches!(event, RuntimeEvent::SubagentUpdate { info } if info.id == id && info.status == status)
}

/// The status updates in `events`, as `(id, status)`.
pub fn statuses(events: &[RuntimeEvent]) -> Vec<(String, SubagentStatus)> {
    let mut out: Vec<(String, SubagentStatus)> = Vec::new();
    for event in events {
        if let RuntimeEvent::SubagentUpdate { info } = event {
            let SubagentInfo { id, status, .. } = info;
            // Progress updates repeat the status; keep only the changes.
            if !out
                .iter()
                .rev()
                .find(|(i, _)| i == id)
                .is_some_and(|(_, s)| s == status)
            {
                out.push((id.clone(), *status));
            }
        }
    }
    out
}

/// A subagent's result as it arrives on the bus's system channel, for no session.
pub fn subagent_result(content: &str) -> claw_tui::runtime::InboundMessage {
    claw_tui::runtime::InboundMessage::new(
        claw_tui::runtime::SYSTEM_CHANNEL,
        "subagent",
        "",
        content,
    )
}
