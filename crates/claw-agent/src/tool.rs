//! The `Tool` trait and its `ToolSpec`, tool results and partial-output updates.

use super::event::{AgentEvent, EventSink};
use super::image::ImageData;
use super::intercept::CheckedArgs;
use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio_util::sync::CancellationToken;

/// What a tool returns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Exactly what the model receives.
    pub content: String,
    /// Images the model receives with the text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageData>,
    /// Fuller data for the UI (diffs, exit codes...); never sent to the model.
    #[serde(default)]
    pub details: Value,
    /// Whether the call failed; always serialised.
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result with text content.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            images: Vec::new(),
            details: Value::Null,
            is_error: false,
        }
    }

    /// A failed result the model can read and act on.
    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            images: Vec::new(),
            details: Value::Null,
            is_error: true,
        }
    }

    /// The same result with `images` attached.
    pub fn with_images(mut self, images: Vec<ImageData>) -> Self {
        self.images = images;
        self
    }

    /// The same result with `details` attached.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

/// What providers send the model about a tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Tool name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

/// Lets a running tool publish partial output as `tool_execution_update` events.
#[derive(Clone, Debug)]
pub struct ToolUpdates {
    sink: Option<EventSink>,
    tool_call_id: String,
    tool_name: String,
    open: Arc<AtomicBool>,
}

impl ToolUpdates {
    /// Updates for one call, delivered to `sink`.
    pub fn new(sink: EventSink, tool_call_id: &str, tool_name: &str) -> Self {
        Self {
            sink: Some(sink),
            tool_call_id: tool_call_id.to_owned(),
            tool_name: tool_name.to_owned(),
            open: Arc::new(AtomicBool::new(true)),
        }
    }

    /// Updates that go nowhere (for calling a tool outside the loop).
    pub fn discard() -> Self {
        Self {
            sink: None,
            tool_call_id: String::new(),
            tool_name: String::new(),
            open: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Publishes partial output; ignored once the call has ended.
    pub fn send(&self, partial: Value) {
        if let Some(sink) = &self.sink
            && self.open.load(Ordering::Acquire)
        {
            sink.emit(AgentEvent::ToolExecutionUpdate {
                tool_call_id: self.tool_call_id.clone(),
                tool_name: self.tool_name.clone(),
                partial,
            });
        }
    }

    /// Stops delivery, so no update can follow the call's end event. The loop closes
    /// its calls' updates itself; whoever runs a tool outside it (the client's `!command`)
    /// closes them before sending the end.
    pub fn close(&self) {
        self.open.store(false, Ordering::Release);
    }
}

/// What a tool is, as data: what the model is told about it, what the client shows,
/// and what the policy reads (whether it changes anything).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// Unique name the model calls it by.
    pub name: String,
    /// Short human label for the UI.
    pub label: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
    /// Whether a schema the validator cannot compile fails the calls (true) or lets
    /// them through unvalidated (false: schemas that come from elsewhere, like MCP's).
    pub strict: bool,
    /// Whether the tool changes nothing (files, processes, schedules, messages to the
    /// user): only such tools are offered in plan mode.
    pub read_only: bool,
}

impl ToolSpec {
    /// A strict tool that may change things.
    pub fn new(
        name: impl Into<String>,
        label: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
    ) -> Self {
        Self {
            name: name.into(),
            label: label.into(),
            description: description.into(),
            parameters,
            strict: true,
            read_only: false,
        }
    }

    /// The same spec for a tool that changes nothing.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// The same spec with a schema from elsewhere: calls go through unvalidated when
    /// it does not compile.
    pub fn lenient(mut self) -> Self {
        self.strict = false;
        self
    }
}

/// A capability the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// What the tool is. The methods below read it; implementations give only this.
    fn spec(&self) -> &ToolSpec;
    /// Unique name the model calls it by.
    fn name(&self) -> &str {
        &self.spec().name
    }
    /// Short human label for the UI.
    fn label(&self) -> &str {
        &self.spec().label
    }
    /// What it does, for the model.
    fn description(&self) -> &str {
        &self.spec().description
    }
    /// JSON Schema of the arguments.
    fn parameters(&self) -> Value {
        self.spec().parameters.clone()
    }
    /// Runs the call with its checked arguments (see [`CheckedArgs`]); must return
    /// promptly once `cancel` fires.
    async fn execute(
        &self,
        call_id: &str,
        args: CheckedArgs,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> ToolResult;
    /// The result a call with `args` would be refused with before anything runs (a
    /// command a deny rule forbids), so that nobody is asked to approve it; `None`:
    /// nothing is known to be refused.
    fn refusal(&self, _args: &CheckedArgs) -> Option<ToolResult> {
        None
    }
}

/// A tool whose arguments are one Rust type: its spec's parameters are that type's
/// schema ([`crate::tool_args::schema`]), and its calls' checked arguments are read into
/// it once, a problem answered with the one [`crate::ArgsError`]. Every `TypedTool` is a
/// [`Tool`].
#[async_trait]
pub trait TypedTool: Send + Sync {
    /// The arguments.
    type Args: DeserializeOwned + Send;
    /// What the tool is (its parameters: `tool_args::schema::<Self::Args>()`).
    fn spec(&self) -> &ToolSpec;
    /// Runs the call; must return promptly once `cancel` fires.
    async fn run(
        &self,
        call_id: &str,
        args: Self::Args,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> ToolResult;
    /// See [`Tool::refusal`].
    fn refusal(&self, _args: &Self::Args) -> Option<ToolResult> {
        None
    }
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn spec(&self) -> &ToolSpec {
        TypedTool::spec(self)
    }

    async fn execute(
        &self,
        call_id: &str,
        args: CheckedArgs,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> ToolResult {
        match crate::tool_args::read::<T::Args>(args.into_value()) {
            Ok(args) => self.run(call_id, args, cancel, updates).await,
            Err(problem) => ToolResult::error(problem.to_string()),
        }
    }

    fn refusal(&self, args: &CheckedArgs) -> Option<ToolResult> {
        match crate::tool_args::read::<T::Args>(args.value().clone()) {
            Ok(args) => TypedTool::refusal(self, &args),
            Err(problem) => Some(ToolResult::error(problem.to_string())),
        }
    }
}
