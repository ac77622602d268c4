//! What the command line sets that the configuration is resolved against: a front-end
//! fills [`Flags`] from its own arguments, so the configuration never reads them itself.

use super::Api;
use crate::agent::{ThinkingLevel, ToolExecution};
use std::path::PathBuf;

/// The flags that win over the environment and the config file; `None` or `false`
/// leaves a setting to them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flags {
    /// The config file (default: the platform config dir's claw-tui/config.toml).
    pub config: Option<PathBuf>,
    /// The workspace directory (default: the current directory).
    pub workspace: Option<PathBuf>,
    /// A provider name from the config file, or a built-in one.
    pub provider: Option<String>,
    /// The model id.
    pub model: Option<String>,
    /// The API base URL.
    pub base_url: Option<String>,
    /// The wire format for this run.
    pub api: Option<Api>,
    /// The thinking level.
    pub thinking: Option<ThinkingLevel>,
    /// How the tool calls of one message run.
    pub tool_execution: Option<ToolExecution>,
    /// The turns one run may take.
    pub max_turns: Option<u32>,
    /// The colour theme's name.
    pub theme: Option<String>,
    /// Approve tool calls that would ask for approval.
    pub yes: bool,
    /// Start the MCP servers of the workspace's `.mcp.json`.
    pub trust_project_mcp: bool,
    /// Start in plan mode.
    pub plan: bool,
}
