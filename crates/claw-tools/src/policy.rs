//! The tool policy: the only way an agent gets tools.
//!
//! [`ToolPolicy`] owns every tool the process has (built-ins with their workspace and
//! sandbox, `spawn`, `cron`, MCP tools) together with the user's rules: the
//! `[tools] disabled` list, each tool's approval mode (`[exec] approval` for `exec`) and
//! whether subagents may have it. An agent receives its tools from
//! [`ToolPolicy::tools_for`] (or [`ToolPolicy::equip`]), and what it receives is already
//! filtered and comes with its pipeline ([`super::pipeline`]): a disabled tool is never
//! offered, and each call passes the plan gate, the runtime's stages (the user's hooks)
//! and the approval before the tool runs. Nothing has to be remembered by whoever
//! configures an agent, so the main agent, each subagent and the runs a cron job starts
//! (they run on the main agent) are all held to the same rules.
//!
//! Plan mode is a role: [`AgentRole::Planner`] (the main agent in plan mode) is offered
//! only the tools whose rules say `read_only`; every built-in that changes anything
//! (`write_file`, `edit_file`, `exec`, `cron`, `spawn`, `message`) is not, and neither
//! is a tool registered without `read_only: true` (an MCP tool not marked read-only).
//!
//! Where later parts go, so they do not need a second path:
//! - MCP tools: [`ToolPolicy::register_with`] with the server's approval mode, its
//!   `subagents` flag and `read_only` from the tool's annotations, then
//!   [`ToolPolicy::equip`] the main agent again;
//! - a `!command` typed in the client: `exec` from [`ToolPolicy::user_tools`], called
//!   through the same pipeline with [`ToolSet::call`].

use super::exec::{ApprovalGate, ApprovalMode, Approver, EXEC_TOOL_NAME, ExecConfig};
pub use super::pipeline::CANCELLED_WHILE_ASKING;
use super::pipeline::{self, Caller, Gates, Step};
pub use super::roles::{AgentKind, AgentRole, SubagentRef, ToolRules};
use super::{SUBAGENT_EXCLUDED, ToolRegistry, ToolsConfig};
use claw_agent::{Agent, Tool, ToolSet};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// The user's settings the policy enforces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyConfig {
    /// Tools no agent is offered (`[tools] disabled`).
    pub disabled: Vec<String>,
    /// The approval mode of `exec` (`[exec] approval`).
    pub exec_approval: ApprovalMode,
}

impl PolicyConfig {
    /// The policy settings of the `[tools]` and `[exec]` sections.
    pub fn new(tools: &ToolsConfig, exec: &ExecConfig) -> Self {
        Self {
            disabled: tools.disabled.clone(),
            exec_approval: exec.approval,
        }
    }
}

struct Entry {
    tool: Arc<dyn Tool>,
    rules: ToolRules,
}

struct Shared {
    config: PolicyConfig,
    gates: Arc<Gates>,
    catalog: Mutex<Vec<Entry>>,
    /// What stands between an agent and its tools, outermost first.
    steps: RwLock<Vec<Step>>,
}

/// Every tool of the process and the rules they are offered under; cheap to clone,
/// clones share everything (including "allow for this session" answers).
#[derive(Clone)]
pub struct ToolPolicy {
    shared: Arc<Shared>,
}

impl ToolPolicy {
    /// A policy enforcing `config` over the tools of `registry`, asking `approver` when
    /// a call needs approval.
    pub fn new(registry: ToolRegistry, config: PolicyConfig, approver: Approver) -> Self {
        let policy = Self {
            shared: Arc::new(Shared {
                config,
                gates: Arc::new(Gates {
                    planning: AtomicBool::new(false),
                    approvals: ApprovalGate::new(approver),
                }),
                catalog: Mutex::new(Vec::new()),
                steps: RwLock::new(vec![Step::PlanGate, Step::Approval]),
            }),
        };
        for tool in registry.tools() {
            policy.register(tool);
        }
        policy
    }

    fn catalog(&self) -> MutexGuard<'_, Vec<Entry>> {
        // Each change under this lock is a single push or replace; a panic elsewhere
        // cannot leave the list half-changed.
        self.shared
            .catalog
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Turns plan mode on or off for calls already under way: while on, the main
    /// agent's calls of tools that are not read-only are refused (a run that started
    /// before the switch still holds them in its tool list).
    pub fn set_planning(&self, on: bool) {
        self.shared.gates.planning.store(on, Ordering::SeqCst);
    }

    /// Sets what stands between an agent and its tools, outermost first, for the tools
    /// handed out from now on (agents equipped before keep theirs until equipped
    /// again). The policy's own steps are not optional: a list without the plan gate
    /// or the approval is refused and the current one kept.
    pub fn set_pipeline(&self, steps: Vec<Step>) -> Result<(), MissingStep> {
        for (needed, name) in [
            (Step::PlanGate, "the plan gate"),
            (Step::Approval, "the approval"),
        ] {
            let present = steps
                .iter()
                .any(|s| std::mem::discriminant(s) == std::mem::discriminant(&needed));
            if !present {
                return Err(MissingStep(name));
            }
        }
        *self.shared.steps.write().unwrap_or_else(|p| p.into_inner()) = steps;
        Ok(())
    }

    /// The rules a built-in tool gets: subagents lack `spawn`, `message`, `edit_file`
    /// and `cron`; `exec` needs approval per `[exec] approval`; read-only is what the
    /// tool's spec says (`read_file`, `list_dir`, `web_search` and `web_fetch`).
    pub fn default_rules(&self, tool: &dyn Tool) -> ToolRules {
        let name = tool.name();
        ToolRules {
            subagents: !SUBAGENT_EXCLUDED.contains(&name),
            approval: if name == EXEC_TOOL_NAME {
                self.shared.config.exec_approval
            } else {
                ApprovalMode::Never
            },
            read_only: tool.spec().read_only,
        }
    }

    /// Adds `tool` with the default rules for it (see [`Self::default_rules`]).
    pub fn register(&self, tool: Arc<dyn Tool>) {
        let rules = self.default_rules(tool.as_ref());
        self.register_with(tool, rules);
    }

    /// Adds `tool` with `rules`; one with the same name is replaced. Agents equipped
    /// before keep what they had until they are equipped again.
    pub fn register_with(&self, tool: Arc<dyn Tool>, rules: ToolRules) {
        let mut catalog = self.catalog();
        let entry = Entry { tool, rules };
        match catalog
            .iter_mut()
            .find(|e| e.tool.name() == entry.tool.name())
        {
            Some(slot) => *slot = entry,
            None => catalog.push(entry),
        }
    }

    /// Removes the tool called `name` (an MCP server dropped it); returns whether it was
    /// there. Agents equipped before keep it until they are equipped again.
    pub fn unregister(&self, name: &str) -> bool {
        let mut catalog = self.catalog();
        let before = catalog.len();
        catalog.retain(|e| e.tool.name() != name);
        catalog.len() != before
    }

    /// Whether `role` is offered the tool with `name` and `rules`.
    fn offers(&self, role: &AgentRole, name: &str, rules: &ToolRules) -> bool {
        let disabled = self.shared.config.disabled.iter().any(|d| d == name);
        let excluded = match role {
            AgentRole::Main => false,
            AgentRole::Planner => !rules.read_only,
            AgentRole::Subagent(_) => !rules.subagents,
        };
        !disabled && !excluded
    }

    /// The tools `role` is offered, in registration order, with the pipeline their
    /// calls run under.
    pub fn tools_for(&self, role: &AgentRole) -> ToolSet {
        self.tool_set(Caller {
            role: role.clone(),
            by_user: false,
        })
    }

    /// The tools `role` is offered, for calls the user makes (a `!command`): the same
    /// pipeline, except that plan mode does not refuse them.
    pub fn user_tools(&self, role: &AgentRole) -> ToolSet {
        self.tool_set(Caller {
            role: role.clone(),
            by_user: true,
        })
    }

    fn tool_set(&self, caller: Caller) -> ToolSet {
        let (tools, rules): (Vec<Arc<dyn Tool>>, HashMap<String, ToolRules>) = self
            .catalog()
            .iter()
            .filter(|e| self.offers(&caller.role, e.tool.name(), &e.rules))
            .map(|e| (e.tool.clone(), (e.tool.name().to_owned(), e.rules)))
            .unzip();
        let steps = self
            .shared
            .steps
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let interceptors =
            pipeline::interceptors(&steps, &self.shared.gates, &caller, &Arc::new(rules));
        ToolSet::intercepted(tools, interceptors)
    }

    /// The names of the tools an agent of `kind` is offered (for its system prompt).
    pub fn names_for(&self, kind: AgentKind) -> Vec<String> {
        let role = match kind {
            AgentKind::Main => AgentRole::Main,
            AgentKind::Subagent => AgentRole::Subagent(SubagentRef {
                id: String::new(),
                label: String::new(),
                task: String::new(),
            }),
        };
        self.names_for_role(&role)
    }

    /// The names of the tools `role` is offered.
    pub fn names_for_role(&self, role: &AgentRole) -> Vec<String> {
        self.catalog()
            .iter()
            .filter(|e| self.offers(role, e.tool.name(), &e.rules))
            .map(|e| e.tool.name().to_owned())
            .collect()
    }

    /// Gives `agent` the tools of `role`.
    pub fn equip(&self, agent: &Agent, role: &AgentRole) {
        agent.set_tool_set(self.tools_for(role));
    }

    /// The `[tools] disabled` names that match no registered tool (likely misspelt).
    pub fn unknown_disabled(&self) -> Vec<String> {
        let catalog = self.catalog();
        self.shared
            .config
            .disabled
            .iter()
            .filter(|d| !catalog.iter().any(|e| e.tool.name() == d.as_str()))
            .cloned()
            .collect()
    }
}

impl std::fmt::Debug for ToolPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .catalog()
            .iter()
            .map(|e| e.tool.name().to_owned())
            .collect();
        f.debug_struct("ToolPolicy")
            .field("tools", &names)
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

/// A pipeline without one of the policy's own steps.
#[derive(Debug, thiserror::Error)]
#[error("the tool-call pipeline must contain {0}")]
pub struct MissingStep(&'static str);
