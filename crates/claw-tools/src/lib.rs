//! Built-in tools, the registry that collects them, the [`policy`] every agent gets its
//! tools from and the [`pipeline`] their calls run through; the exec sandbox and its
//! launcher; and what they share with the rest of claw-tui: [`images`] (reading and
//! scaling attached images), [`private_fs`] (files only this user may read) and
//! [`visible`] (text made safe to print).

pub use claw_agent::tool_args as args;
pub mod cron;
pub mod exec;
pub mod fs;
pub mod images;
pub mod large_results;
pub mod message;
pub mod pipeline;
pub mod policy;
pub mod private_fs;
pub mod protected;
pub mod roles;
pub mod spawn;
pub mod visible;
pub mod web;
pub mod workspace;

pub use workspace::Workspace;

use claw_agent::{Tool, ToolDefinition};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// Built-in tools a subagent is not offered (see `policy::ToolPolicy::default_rules`):
/// it cannot spawn, talk to the user, edit files or schedule jobs on its own.
pub const SUBAGENT_EXCLUDED: [&str; 4] = ["spawn", "message", "edit_file", "cron"];

/// Built-in tools that change nothing, the only ones offered in plan mode (see
/// `policy::AgentRole::Planner`): the specs decide (`ToolSpec::read_only`); this
/// list is what the tests hold the specs to.
pub const READ_ONLY_TOOLS: [&str; 4] = ["read_file", "list_dir", "web_search", "web_fetch"];

/// The `[tools]` section of the config file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolsConfig {
    /// Tools the model never sees, by name.
    pub disabled: Vec<String>,
    /// Lets file tools reach paths outside the workspace.
    pub allow_outside_workspace: bool,
}

impl ToolsConfig {
    /// The workspace at `root` with this config's confinement setting.
    pub fn workspace(&self, root: impl Into<PathBuf>) -> Workspace {
        Workspace::new(root, self.allow_outside_workspace)
    }
}

/// A named set of tools, in registration order.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool`; one with the same name is replaced in place and returned.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Option<Arc<dyn Tool>> {
        match self.tools.iter_mut().find(|t| t.name() == tool.name()) {
            Some(slot) => Some(std::mem::replace(slot, tool)),
            None => {
                self.tools.push(tool);
                None
            }
        }
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name).cloned()
    }

    /// Whether a tool called `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name() == name)
    }

    /// The tool names, in registration order.
    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name().to_owned()).collect()
    }

    /// What providers send the model, in registration order.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|t| ToolDefinition {
                name: t.name().to_owned(),
                description: t.description().to_owned(),
                parameters: t.parameters(),
            })
            .collect()
    }

    /// The tools, for `Agent::set_tools`.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// A new registry without the tools named in `names`; this one is left as it is.
    pub fn exclude<S: AsRef<str>>(&self, names: &[S]) -> ToolRegistry {
        let tools = self
            .tools
            .iter()
            .filter(|t| !names.iter().any(|n| n.as_ref() == t.name()))
            .cloned()
            .collect();
        ToolRegistry { tools }
    }

    /// Removes the tools named in `names`; returns the names that matched no tool, so a
    /// misspelt `[tools] disabled` entry can be reported.
    pub fn disable<S: AsRef<str>>(&mut self, names: &[S]) -> Vec<String> {
        let unknown = names
            .iter()
            .map(AsRef::as_ref)
            .filter(|n| !self.contains(n))
            .map(str::to_owned)
            .collect();
        self.tools
            .retain(|t| !names.iter().any(|n| n.as_ref() == t.name()));
        unknown
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ToolRegistry").field(&self.names()).finish()
    }
}

impl FromIterator<Arc<dyn Tool>> for ToolRegistry {
    fn from_iter<I: IntoIterator<Item = Arc<dyn Tool>>>(iter: I) -> Self {
        let mut registry = ToolRegistry::new();
        for tool in iter {
            registry.register(tool);
        }
        registry
    }
}
