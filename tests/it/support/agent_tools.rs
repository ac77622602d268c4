//! Tools the agent tests share: one that steers from inside its call, one that waits
//! for its cancellation, one that must never run.

use super::{DEADLINE, FnTool, text_schema};
use claw_tui::agent::{Agent, Tool, ToolResult};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::sync::mpsc;

/// A tool `step {text}` that counts its executions and, when `text` is `steer`, queues
/// `steer_text` as steering from inside the call.
pub fn stepping_tool(
    agent: &Agent,
    runs: &Arc<AtomicUsize>,
    steer_text: &'static str,
) -> Arc<dyn Tool> {
    let agent = agent.clone();
    let runs = runs.clone();
    FnTool::new("step", text_schema(), move |_, args, _, _| {
        let agent = agent.clone();
        let runs = runs.clone();
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            let text = args["text"].as_str().unwrap_or_default().to_owned();
            if text == "steer" {
                agent.steer(steer_text);
            }
            ToolResult::text(format!("{text} done"))
        }
    })
}

/// A tool that sends its call id on `started`, then waits for its cancellation token
/// and returns `result` (so a kept result proves the tool saw the stop).
pub fn waits_for_cancel(
    name: &str,
    started: mpsc::UnboundedSender<String>,
    result: ToolResult,
) -> Arc<dyn Tool> {
    FnTool::new(name, text_schema(), move |id, _, cancel, _| {
        let started = started.clone();
        let result = result.clone();
        async move {
            started.send(id).unwrap();
            cancel.cancelled().await;
            result
        }
    })
}

/// A tool that records in `ran` whether it was ever executed.
pub fn tripwire(name: &str, ran: &Arc<AtomicBool>) -> Arc<dyn Tool> {
    let ran = ran.clone();
    FnTool::new(name, text_schema(), move |_, _, _, _| {
        ran.store(true, Ordering::SeqCst);
        async { ToolResult::text("ran") }
    })
}

/// The next call id a [`waits_for_cancel`] tool reports (fails after [`DEADLINE`]).
pub async fn tool_started(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(DEADLINE, rx.recv())
        .await
        .expect("timed out waiting for a tool to start")
        .expect("channel open")
}
