//! The `spawn` tool: starts a background subagent through a [`SpawnBackend`] that the
//! runtime provides.

use crate::agent::{Tool, ToolResult, ToolUpdates};
use crate::tools::args::{optional_text, required_text};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Starts subagents; implemented by the runtime.
#[async_trait]
pub trait SpawnBackend: Send + Sync {
    /// Starts a subagent on `task` for the call `parent_call_id`; returns the text the
    /// model gets back (e.g. the subagent's id), or an error for the model.
    async fn spawn(
        &self,
        parent_call_id: &str,
        task: String,
        label: Option<String>,
    ) -> Result<String, String>;
}

/// Hands tasks to a [`SpawnBackend`].
pub struct SpawnTool {
    backend: Arc<dyn SpawnBackend>,
}

impl SpawnTool {
    /// The tool over `backend`.
    pub fn new(backend: Arc<dyn SpawnBackend>) -> Self {
        Self { backend }
    }
}

#[async_trait]
impl Tool for SpawnTool {
    fn name(&self) -> &str {
        "spawn"
    }

    fn label(&self) -> &str {
        "Spawn subagent"
    }

    fn description(&self) -> &str {
        "Start a subagent that works on a task in the background with its own context; \
         its result is reported back to you when it finishes. Give it a complete, \
         self-contained task description. label is a short name shown to the user."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "What the subagent should do, self-contained"},
                "label": {"type": "string", "description": "Short name for the task"}
            },
            "required": ["task"]
        })
    }

    async fn execute(
        &self,
        call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        let parsed = required_text(&args, "task")
            .and_then(|task| Ok((task.to_owned(), optional_text(&args, "label")?)));
        let (task, label) = match parsed {
            Ok(p) => p,
            Err(e) => return ToolResult::error(e),
        };
        let label = label.map(|l| l.trim().to_owned());
        tokio::select! {
            result = self.backend.spawn(call_id, task, label) => match result {
                Ok(text) => ToolResult::text(text),
                Err(e) => ToolResult::error(e),
            },
            () = cancel.cancelled() => ToolResult::error("Cancelled: spawning the subagent was aborted."),
        }
    }
}
