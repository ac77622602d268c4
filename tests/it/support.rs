//! Shared test helpers: a scripted in-process provider, small tools, event collection.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::new_ret_no_self,
    missing_docs
)]

pub mod acp;
pub mod agent_tools;
pub mod attach;
pub mod bin;
pub mod compacting;
pub mod control;
pub mod cron;
pub mod exec;
pub mod fake_llm;
pub mod gating;
pub mod history;
pub mod hostile;
pub mod json_text;
pub mod mcp;
pub mod mcp_fixture;
pub mod png_bomb;
pub mod poll;
pub mod pty;
pub mod reading;
pub mod readme;
pub mod rpc;
pub mod runs;
pub mod runtime;
pub mod scripted;
pub mod skip;
pub mod tmpfs;
pub mod tui;
pub mod web;

use claw_tui::agent::{AgentEvent, CheckedArgs, Message, Tool, ToolResult, ToolSpec, ToolUpdates};
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

pub use runs::{agent_with, final_text, run, sent_results, tool_results};
pub use scripted::{Reply, ScriptedProvider};

/// The built-in tools' names, in the order the registry lists them.
pub const BUILTIN_TOOLS: [&str; 8] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "exec",
    "spawn",
    "message",
    "cron",
];

/// Upper bound for waiting on an event that must come; a failure, never a synchronisation.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Receives events until (and including) `agent_end`.
pub async fn until_agent_end(rx: &mut UnboundedReceiver<AgentEvent>) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(DEADLINE, rx.recv())
            .await
            .expect("timed out waiting for agent_end")
            .expect("event channel closed");
        let end = matches!(event, AgentEvent::AgentEnd { .. });
        events.push(event);
        if end {
            return events;
        }
    }
}

/// Receives events until one matches `pred`, returning all received so far.
pub async fn until(
    rx: &mut UnboundedReceiver<AgentEvent>,
    pred: impl Fn(&AgentEvent) -> bool,
) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(DEADLINE, rx.recv())
            .await
            .expect("timed out waiting for an event")
            .expect("event channel closed");
        let hit = pred(&event);
        events.push(event);
        if hit {
            return events;
        }
    }
}

/// A compact name for an event, for asserting sequences.
pub fn label(event: &AgentEvent) -> String {
    match event {
        AgentEvent::AgentStart => "agent_start".into(),
        AgentEvent::AgentEnd { .. } => "agent_end".into(),
        AgentEvent::TurnStart { turn } => format!("turn_start:{turn}"),
        AgentEvent::TurnEnd { .. } => "turn_end".into(),
        AgentEvent::MessageStart { message } => format!("message_start:{}", role(message)),
        AgentEvent::MessageUpdate { .. } => "message_update".into(),
        AgentEvent::MessageEnd { message } => format!("message_end:{}", role(message)),
        AgentEvent::ToolExecutionStart { tool_call_id, .. } => format!("tool_start:{tool_call_id}"),
        AgentEvent::ToolExecutionUpdate { tool_call_id, .. } => {
            format!("tool_update:{tool_call_id}")
        }
        AgentEvent::ToolExecutionEnd { tool_call_id, .. } => format!("tool_end:{tool_call_id}"),
        AgentEvent::QueueUpdate { .. } => "queue_update".into(),
        AgentEvent::AutoRetryStart { attempt, .. } => format!("auto_retry_start:{attempt}"),
        AgentEvent::AutoRetryEnd { attempt } => format!("auto_retry_end:{attempt}"),
        AgentEvent::SettingUpdate { key, .. } => format!("setting_update:{key}"),
        AgentEvent::HistoryCut { kept } => format!("history_cut:{kept}"),
        AgentEvent::CompactionStart { .. } => "compaction_start".into(),
        AgentEvent::CompactionEnd(_) => "compaction_end".into(),
    }
}

/// Labels of all events.
pub fn labels(events: &[AgentEvent]) -> Vec<String> {
    events.iter().map(label).collect()
}

/// The serialised role of a message.
pub fn role(message: &Message) -> &'static str {
    match message {
        Message::User(_) => "user",
        Message::Assistant(_) => "assistant",
        Message::ToolResult(_) => "tool_result",
        Message::Notification(_) => "notification",
        Message::Notice(_) => "notice",
    }
}

type Handler = dyn Fn(
        String,
        Value,
        CancellationToken,
        ToolUpdates,
    ) -> Pin<Box<dyn Future<Output = ToolResult> + Send>>
    + Send
    + Sync;

/// A tool whose behaviour is a closure; the schema is given by the test.
pub struct FnTool {
    spec: ToolSpec,
    handler: Box<Handler>,
}

impl FnTool {
    pub fn new<F, Fut>(name: &str, schema: Value, handler: F) -> Arc<dyn Tool>
    where
        F: Fn(String, Value, CancellationToken, ToolUpdates) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        Self::with_spec(ToolSpec::new(name, name, "a test tool", schema), handler)
    }

    /// A tool with `spec` (e.g. a read-only one) whose behaviour is `handler`.
    pub fn with_spec<F, Fut>(spec: ToolSpec, handler: F) -> Arc<dyn Tool>
    where
        F: Fn(String, Value, CancellationToken, ToolUpdates) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        Arc::new(Self {
            spec,
            handler: Box::new(move |id, args, cancel, updates| {
                Box::pin(handler(id, args, cancel, updates))
            }),
        })
    }
}

#[async_trait::async_trait]
impl Tool for FnTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn execute(
        &self,
        call_id: &str,
        args: CheckedArgs,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> ToolResult {
        (self.handler)(call_id.to_owned(), args.into_value(), cancel, updates).await
    }
}

/// Schema of a tool taking one required string `text`.
pub fn text_schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
}

/// A tool `echo {text}` returning the text.
pub fn echo_tool() -> Arc<dyn Tool> {
    FnTool::new("echo", text_schema(), |_, args, _, _| async move {
        ToolResult::text(args["text"].as_str().unwrap_or_default().to_owned())
    })
}

/// An `echo` tool that records the arguments of every call it ran, in order.
pub fn recording_echo() -> (Arc<dyn Tool>, Arc<std::sync::Mutex<Vec<Value>>>) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let tool = FnTool::new("echo", text_schema(), move |_, args, _, _| {
        log.lock().unwrap().push(args.clone());
        async move { ToolResult::text(args["text"].as_str().unwrap_or_default().to_owned()) }
    });
    (tool, seen)
}

/// Writes `text` to `path`, creating its parent directories.
pub fn write_creating_dirs(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The text of the file at `path`; panics naming the path when it cannot be read.
pub fn read_text(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `args` checked against `tool`'s schema as the agent loop checks them; the result the
/// model would get when they fail.
pub fn check(tool: &dyn Tool, args: Value) -> Result<CheckedArgs, ToolResult> {
    CheckedArgs::for_tool(tool, args).map_err(|problem| ToolResult::error(problem.to_string()))
}

/// `args` checked against `tool`'s schema; panics when they fail (a test's own call).
pub fn checked(tool: &dyn Tool, args: Value) -> CheckedArgs {
    CheckedArgs::for_tool(tool, args).unwrap_or_else(|e| panic!("invalid arguments: {e}"))
}

/// Calls `tool` directly, outside the agent loop, as call `call-1`: its arguments
/// checked first, as the loop checks them.
pub async fn call(tool: &dyn Tool, args: Value) -> ToolResult {
    let args = match check(tool, args) {
        Ok(args) => args,
        Err(refused) => return refused,
    };
    tool.execute(
        "call-1",
        args,
        CancellationToken::new(),
        ToolUpdates::discard(),
    )
    .await
}

/// The names of the entries in `dir`, sorted.
pub fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
