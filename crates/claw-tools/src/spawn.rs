//! The `spawn` tool: starts a background subagent through a [`SpawnBackend`] that the
//! runtime provides.

use crate::args;
use async_trait::async_trait;
use claw_agent::{ToolResult, ToolSpec, ToolUpdates, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;

use std::sync::Arc;
use std::sync::LazyLock;
use tokio_util::sync::CancellationToken;

/// Starts subagents; implemented by the runtime.
#[async_trait]
pub trait SpawnBackend: Send + Sync {
    /// Why a spawn was refused; its `Display` is the model's error result.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Starts a subagent on `task` for the call `parent_call_id`; returns the text the
    /// model gets back (e.g. the subagent's id), or why it did not start.
    async fn spawn(
        &self,
        parent_call_id: &str,
        task: String,
        label: Option<String>,
    ) -> Result<String, Self::Error>;
}

/// Hands tasks to a [`SpawnBackend`].
pub struct SpawnTool<B> {
    backend: Arc<B>,
}

impl<B: SpawnBackend> SpawnTool<B> {
    /// The tool over `backend`.
    pub fn new(backend: Arc<B>) -> Self {
        Self { backend }
    }
}

/// The arguments of `spawn`.
#[derive(Deserialize, JsonSchema)]
pub struct SpawnArgs {
    /// What the subagent should do, self-contained
    task: String,
    /// Short name for the task
    label: Option<String>,
}

#[async_trait]
impl<B: SpawnBackend + 'static> TypedTool for SpawnTool<B> {
    type Args = SpawnArgs;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new(
                "spawn",
                "Spawn subagent",
                "Start a subagent that works on a task in the background with its own context; \
         its result is reported back to you when it finishes. Give it a complete, \
         self-contained task description. label is a short name shown to the user.",
                args::schema::<SpawnArgs>(),
            )
        });
        &SPEC
    }

    async fn run(
        &self,
        call_id: &str,
        args: SpawnArgs,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        if let Err(e) = args::non_blank("task", &args.task) {
            return ToolResult::error(e.to_string());
        }
        let SpawnArgs { task, label } = args;
        let label = args::given(label).map(|l| l.trim().to_owned());
        tokio::select! {
            result = self.backend.spawn(call_id, task, label) => match result {
                Ok(text) => ToolResult::text(text),
                Err(e) => ToolResult::error(e.to_string()),
            },
            () = cancel.cancelled() => ToolResult::error("Cancelled: spawning the subagent was aborted."),
        }
    }
}
