//! The `Tool` trait, tool results, partial-output updates and argument validation.

use super::event::{AgentEvent, EventSink};
use super::image::ImageData;
use super::intercept::{CheckedArgs, Interceptor, Next, ToolCallContext};
use super::tool_args::{ArgsError, InvalidSchema, violations};
use async_trait::async_trait;
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
    /// Runs the call; must return promptly once `cancel` fires.
    async fn execute(
        &self,
        call_id: &str,
        args: Value,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> ToolResult;
}

/// A tool together with its compiled argument validator (`Ok(None)`: not validated) and
/// the interceptors its calls run under.
struct Entry {
    tool: Arc<dyn Tool>,
    validator: Result<Option<jsonschema::Validator>, Arc<InvalidSchema>>,
    interceptors: Arc<[Arc<dyn Interceptor>]>,
}

impl Entry {
    fn new(tool: Arc<dyn Tool>, interceptors: Arc<[Arc<dyn Interceptor>]>) -> Self {
        let validator = match jsonschema::validator_for(&tool.spec().parameters) {
            Ok(validator) => Ok(Some(validator)),
            Err(e) if !tool.spec().strict => {
                tracing::info!(
                    tool = tool.name(),
                    "arguments are not validated: the schema does not compile ({e})"
                );
                Ok(None)
            }
            Err(e) => Err(Arc::new(InvalidSchema(e))),
        };
        Entry {
            tool,
            validator,
            interceptors,
        }
    }

    /// Checks `args` against the tool's schema; the error lists every failing path.
    fn check(&self, args: &Value) -> Result<(), ArgsError> {
        let name = self.tool.name();
        let validator = self
            .validator
            .as_ref()
            .map_err(|source| ArgsError::Uncheckable {
                name: name.to_owned(),
                source: source.clone(),
            })?;
        let Some(validator) = validator else {
            return Ok(());
        };
        let violations = violations(validator, args);
        if violations.0.is_empty() {
            return Ok(());
        }
        Err(ArgsError::Invalid {
            name: name.to_owned(),
            violations,
            received: args.clone(),
        })
    }
}

/// The tools of an agent, with argument schemas compiled once, and the interceptors
/// their calls run under (see [`crate::intercept`]).
#[derive(Clone, Default)]
pub struct ToolSet {
    entries: Arc<Vec<Arc<Entry>>>,
}

impl ToolSet {
    /// Compiles the schemas of `tools`; a broken schema fails only that tool's calls.
    /// Their calls run under no interceptor.
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Self {
        Self::intercepted(tools, Vec::new())
    }

    /// `tools` whose every call runs under `interceptors`, outermost first.
    pub fn intercepted(tools: Vec<Arc<dyn Tool>>, interceptors: Vec<Arc<dyn Interceptor>>) -> Self {
        let interceptors: Arc<[Arc<dyn Interceptor>]> = interceptors.into();
        let entries = tools
            .into_iter()
            .map(|tool| Arc::new(Entry::new(tool, interceptors.clone())))
            .collect();
        Self {
            entries: Arc::new(entries),
        }
    }

    /// These tools plus those of `older` that have no namesake here: a run under way
    /// gains new tools but keeps the ones it started with, with the interceptors they
    /// came with (plan mode, an MCP server that dropped the tool: their own guards then
    /// answer its calls).
    pub fn keeping(&self, older: &ToolSet) -> ToolSet {
        let missing: Vec<Arc<Entry>> = older
            .entries
            .iter()
            .filter(|e| self.find(e.tool.name()).is_none())
            .cloned()
            .collect();
        if missing.is_empty() {
            return self.clone();
        }
        let mut entries: Vec<Arc<Entry>> = self.entries.iter().cloned().collect();
        entries.extend(missing);
        ToolSet {
            entries: Arc::new(entries),
        }
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.find(name).map(|e| e.tool.clone())
    }

    /// The tools, in registration order.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.entries.iter().map(|e| e.tool.clone()).collect()
    }

    /// The names of the tools, in registration order.
    pub fn names(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| e.tool.name().to_owned())
            .collect()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The definitions providers send to the model.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.entries
            .iter()
            .map(|e| ToolDefinition {
                name: e.tool.name().to_owned(),
                description: e.tool.description().to_owned(),
                parameters: e.tool.parameters(),
            })
            .collect()
    }

    /// Checks `args` against the tool's schema; the error lists every failing path.
    pub fn validate(&self, name: &str, args: &Value) -> Result<(), ArgsError> {
        match self.find(name) {
            Some(entry) => entry.check(args),
            None => Err(ArgsError::UnknownTool {
                name: name.to_owned(),
            }),
        }
    }

    /// Calls the tool `name`: its arguments checked once, then `outer` and the set's
    /// interceptors around the tool (outermost first). Unknown tools and invalid
    /// arguments are error results the model can act on. The caller closes `updates`
    /// once it has the result.
    pub async fn call(
        &self,
        outer: Option<&Arc<dyn Interceptor>>,
        name: &str,
        call_id: &str,
        args: Value,
        cancel: &CancellationToken,
        updates: &ToolUpdates,
    ) -> ToolResult {
        let Some(entry) = self.find(name) else {
            return ToolResult::error(format!("Tool \"{name}\" not found"));
        };
        if let Err(problem) = entry.check(&args) {
            return ToolResult::error(problem.to_string());
        }
        let checker = |args: &Value| entry.check(args);
        let call = ToolCallContext {
            tool_call_id: call_id,
            tool: &entry.tool,
            cancel,
            updates,
            checker: &checker,
            ran: AtomicBool::new(false),
        };
        let args = CheckedArgs::new(args);
        match outer {
            Some(outer) => {
                let with_outer: Vec<Arc<dyn Interceptor>> = std::iter::once(outer.clone())
                    .chain(entry.interceptors.iter().cloned())
                    .collect();
                let next = Next {
                    rest: &with_outer,
                    call: &call,
                };
                next.run(args).await
            }
            None => {
                let next = Next {
                    rest: &entry.interceptors,
                    call: &call,
                };
                next.run(args).await
            }
        }
    }

    fn find(&self, name: &str) -> Option<&Arc<Entry>> {
        self.entries.iter().find(|e| e.tool.name() == name)
    }
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.entries.iter().map(|e| e.tool.name()).collect();
        f.debug_tuple("ToolSet").field(&names).finish()
    }
}
