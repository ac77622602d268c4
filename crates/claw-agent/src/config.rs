//! Per-run configuration of the loop: model, limits, tool mode, context and tool hooks.

use super::compaction::{CompactionSettings, ContextBudget, resolve_window};
use super::convert::default_convert_to_llm;
use super::history::History;
use super::provider::LlmMessage;
use super::tool::ToolResult;
use super::tool_set::ToolSet;
use super::types::{Message, ThinkingLevel};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The main agent's default turn limit per run.
pub const DEFAULT_MAX_TURNS: u32 = 50;

/// How the tool calls of one assistant message run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolExecution {
    /// One after another, in call order.
    Sequential,
    /// All start together; results still enter the context in call order.
    #[default]
    Parallel,
}

/// What `before_tool_call` sees.
#[derive(Clone, Debug, PartialEq)]
pub struct BeforeToolCallContext {
    /// Call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// Validated arguments.
    pub args: Value,
}

/// What `before_tool_call` decides.
#[derive(Clone, Debug, PartialEq)]
pub enum BeforeToolCall {
    /// Run the call as it is.
    Continue,
    /// Do not run it; the model gets an error result with this reason.
    Block {
        /// Why, for the model.
        reason: String,
    },
    /// Run it with these arguments instead (validated again).
    ReplaceArgs(Value),
}

/// What `after_tool_call` sees.
#[derive(Clone, Debug, PartialEq)]
pub struct AfterToolCallContext {
    /// Call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// Arguments the tool ran with.
    pub args: Value,
    /// What the tool returned.
    pub result: ToolResult,
}

/// Replacements `after_tool_call` makes; `None` keeps the tool's value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AfterToolCall {
    /// New content for the model.
    pub content: Option<String>,
    /// New details.
    pub details: Option<Value>,
    /// New error flag.
    pub is_error: Option<bool>,
}

/// Hook run after validation and before a tool executes; `Err` becomes an error result.
pub type BeforeToolCallHook = Arc<
    dyn Fn(BeforeToolCallContext) -> BoxFuture<'static, Result<BeforeToolCall, String>>
        + Send
        + Sync,
>;

/// Hook run after a tool executes; `Err` becomes an error result.
pub type AfterToolCallHook = Arc<
    dyn Fn(AfterToolCallContext) -> BoxFuture<'static, Result<AfterToolCall, String>> + Send + Sync,
>;

/// Rewrites the history before each LLM call (pruning, injecting context...).
pub type TransformContext =
    Arc<dyn Fn(Vec<Message>, CancellationToken) -> BoxFuture<'static, Vec<Message>> + Send + Sync>;

/// The system prompt and tools that replace a run's own before its next LLM request, or
/// `None` when they did not change (tools that arrive while a run is under way, such as
/// an MCP server's, are offered from the next turn on).
pub type RefreshTools = Arc<dyn Fn() -> Option<(String, ToolSet)> + Send + Sync>;

/// Maps the history to what the model accepts, mapping or dropping custom roles.
pub type ConvertToLlm = Arc<dyn Fn(&History) -> Vec<LlmMessage<'_>> + Send + Sync>;

/// Everything one run of the loop needs besides the context and the provider.
#[derive(Clone)]
pub struct LoopConfig {
    /// Model id passed to the provider.
    pub model: String,
    /// Thinking effort passed to the provider.
    pub thinking: ThinkingLevel,
    /// Turns allowed per run before it stops with a notice.
    pub max_turns: u32,
    /// Sequential or parallel tool calls.
    pub tool_execution: ToolExecution,
    /// History → model messages.
    pub convert_to_llm: ConvertToLlm,
    /// Optional history rewrite before conversion.
    pub transform_context: Option<TransformContext>,
    /// Optional gate before each tool call.
    pub before_tool_call: Option<BeforeToolCallHook>,
    /// Optional rewrite of each tool result.
    pub after_tool_call: Option<AfterToolCallHook>,
    /// Optional source of newer tools before each LLM request (the `Agent` facade
    /// installs one that follows `set_tools` and `set_system_prompt`).
    pub refresh_tools: Option<RefreshTools>,
    /// When and how the history is compacted.
    pub compaction: CompactionSettings,
    /// The configured context window (the provider's `context_window`); `None`: the
    /// built-in table's for the model.
    pub context_window: Option<u64>,
}

impl LoopConfig {
    /// Defaults for `model`: 50 turns, parallel tools, the standard conversion, no hooks.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            thinking: ThinkingLevel::Off,
            max_turns: DEFAULT_MAX_TURNS,
            tool_execution: ToolExecution::Parallel,
            convert_to_llm: Arc::new(default_convert_to_llm),
            transform_context: None,
            before_tool_call: None,
            after_tool_call: None,
            refresh_tools: None,
            compaction: CompactionSettings::default(),
            context_window: None,
        }
    }

    /// The window of `model` and the compaction settings applied to it.
    pub fn budget_for(&self, model: &str) -> ContextBudget {
        ContextBudget::new(resolve_window(self.context_window, model), &self.compaction)
    }
}

impl std::fmt::Debug for LoopConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopConfig")
            .field("model", &self.model)
            .field("thinking", &self.thinking)
            .field("max_turns", &self.max_turns)
            .field("tool_execution", &self.tool_execution)
            .field("compaction", &self.compaction)
            .field("context_window", &self.context_window)
            .finish_non_exhaustive()
    }
}
