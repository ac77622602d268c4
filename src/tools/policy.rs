//! The tool policy: the only way an agent gets tools.
//!
//! [`ToolPolicy`] owns every tool the process has (built-ins with their workspace and
//! sandbox, `spawn`, `cron`, MCP tools) together with the user's rules: the
//! `[tools] disabled` list, each tool's approval mode (`[exec] approval` for `exec`) and
//! whether subagents may have it. An agent receives its tools from
//! [`ToolPolicy::tools_for`] (or [`ToolPolicy::equip`]), and what it receives is already
//! filtered and wrapped: a disabled tool is never offered, and each call passes the
//! approval gate inside the tool itself before the real tool runs. No hook has to be
//! remembered, so the main agent, each subagent and the runs a cron job starts (they run
//! on the main agent) are all held to the same rules.
//!
//! The user's hooks (`crate::hooks`) run in the same wrapper: `before_tool` hooks first
//! (they may block the call or rewrite its arguments, which are then what the user is
//! asked to approve), then the approval gate, the tool, and the `after_tool` hooks.
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
//! - a `!command` typed in the client: [`ToolPolicy::tool_for`] `exec`, called directly.

use super::exec::{ApprovalGate, ApprovalMode, Approver, EXEC_TOOL_NAME, ExecConfig, GateCall};
use super::{READ_ONLY_TOOLS, SUBAGENT_EXCLUDED, ToolRegistry, ToolsConfig};
use crate::agent::{Agent, Tool, ToolResult, ToolUpdates};
use crate::hooks::{BeforeTool, HookedCall, Hooks};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use tokio_util::sync::CancellationToken;

/// What names a subagent to the user when it asks for approval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentRef {
    /// `subagent-N`.
    pub id: String,
    /// Its short name.
    pub label: String,
    /// The task it was given.
    pub task: String,
}

/// Which kind of agent tools are for: decides what it is offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentKind {
    /// The agent the user talks to (also what cron-started runs run on).
    Main,
    /// A background subagent started by `spawn`.
    Subagent,
}

/// The agent tools are for: what it is offered and how its approval requests name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentRole {
    /// The main agent.
    Main,
    /// The main agent in plan mode: only tools that change nothing.
    Planner,
    /// A subagent.
    Subagent(SubagentRef),
}

impl AgentRole {
    /// The kind of agent this is.
    pub fn kind(&self) -> AgentKind {
        match self {
            AgentRole::Main | AgentRole::Planner => AgentKind::Main,
            AgentRole::Subagent(_) => AgentKind::Subagent,
        }
    }

    fn subagent(&self) -> Option<&SubagentRef> {
        match self {
            AgentRole::Main | AgentRole::Planner => None,
            AgentRole::Subagent(info) => Some(info),
        }
    }

    /// Who calls, as hooks are told: `"main"`, or the subagent.
    fn hook_agent(&self) -> Value {
        match self {
            AgentRole::Main | AgentRole::Planner => Value::String("main".into()),
            AgentRole::Subagent(info) => json!({
                "id": info.id,
                "label": info.label,
                "task": info.task,
            }),
        }
    }
}

/// The rules one tool is registered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolRules {
    /// Whether subagents are offered the tool.
    pub subagents: bool,
    /// Whether each call needs the user's approval first.
    pub approval: ApprovalMode,
    /// Whether the tool changes nothing (files, processes, schedules, messages to the
    /// user): only such tools are offered in plan mode. An MCP tool is read-only only
    /// when its server marks it so.
    pub read_only: bool,
}

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

/// Told about the result details of each call whose `after_tool` hooks ran (a hook
/// may have changed the file the tool wrote: a formatter).
pub type HookedResultObserver = Arc<dyn Fn(&Value) + Send + Sync>;

struct Shared {
    config: PolicyConfig,
    gate: ApprovalGate,
    catalog: Mutex<Vec<Entry>>,
    hooks: RwLock<Hooks>,
    after_hooks: RwLock<Option<HookedResultObserver>>,
    /// Plan mode is on: the main agent's calls of tools that change anything are refused
    /// even in a run that started before (its tool list was taken then).
    planning: AtomicBool,
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
                gate: ApprovalGate::new(approver),
                catalog: Mutex::new(Vec::new()),
                hooks: RwLock::new(Hooks::none()),
                planning: AtomicBool::new(false),
                after_hooks: RwLock::new(None),
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
        self.shared.planning.store(on, Ordering::SeqCst);
    }

    /// Runs `hooks` around every call of every agent from now on (calls already
    /// running keep what they had).
    pub fn set_hooks(&self, hooks: Hooks) {
        *self.shared.hooks.write().unwrap_or_else(|p| p.into_inner()) = hooks;
    }

    /// Calls `observer` (off the async runtime) with the result details of every call
    /// after its `after_tool` hooks ran: the checkpoints take again what a file holds
    /// once a formatter hook rewrote it.
    pub fn observe_hooked_results(&self, observer: HookedResultObserver) {
        *self
            .shared
            .after_hooks
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(observer);
    }

    /// The rules a built-in tool called `name` gets: subagents lack `spawn`, `message`,
    /// `edit_file` and `cron`; `exec` needs approval per `[exec] approval`; only
    /// `read_file`, `list_dir`, `web_search` and `web_fetch` are read-only.
    pub fn default_rules(&self, name: &str) -> ToolRules {
        ToolRules {
            subagents: !SUBAGENT_EXCLUDED.contains(&name),
            approval: if name == EXEC_TOOL_NAME {
                self.shared.config.exec_approval
            } else {
                ApprovalMode::Never
            },
            read_only: READ_ONLY_TOOLS.contains(&name),
        }
    }

    /// Adds `tool` with the default rules for its name (see [`Self::default_rules`]).
    pub fn register(&self, tool: Arc<dyn Tool>) {
        let rules = self.default_rules(tool.name());
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

    /// The tools `role` is offered, each guarded by the policy, in registration order.
    pub fn tools_for(&self, role: &AgentRole) -> Vec<Arc<dyn Tool>> {
        self.catalog()
            .iter()
            .filter(|e| self.offers(role, e.tool.name(), &e.rules))
            .map(|e| self.guard(e, role, true))
            .collect()
    }

    /// The tool called `name` as `role` would get it, if it is offered to `role`, for a
    /// call the user makes (a `!command`): plan mode does not refuse it.
    pub fn tool_for(&self, role: &AgentRole, name: &str) -> Option<Arc<dyn Tool>> {
        self.catalog()
            .iter()
            .find(|e| e.tool.name() == name && self.offers(role, name, &e.rules))
            .map(|e| self.guard(e, role, false))
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
        agent.set_tools(self.tools_for(role));
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

    /// The tool behind the checks; `for_agent` when the agent calls it (plan mode may
    /// refuse those calls), not for a call the user makes (`!command`).
    fn guard(&self, entry: &Entry, role: &AgentRole, for_agent: bool) -> Arc<dyn Tool> {
        Arc::new(Guarded {
            for_agent,
            tool: entry.tool.clone(),
            approval: entry.rules.approval,
            read_only: entry.rules.read_only,
            role: role.clone(),
            shared: self.shared.clone(),
        })
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

/// Result of a call aborted while its approval was being asked for.
pub const CANCELLED_WHILE_ASKING: &str =
    "Cancelled while waiting for the user's approval; the call did not run.";

/// A tool as an agent receives it from the policy: the checks run inside `execute`, so
/// they cannot be bypassed by how the agent was configured.
struct Guarded {
    /// Equipped to an agent (else a call the user makes, which plan mode allows).
    for_agent: bool,
    tool: Arc<dyn Tool>,
    approval: ApprovalMode,
    read_only: bool,
    role: AgentRole,
    shared: Arc<Shared>,
}

#[async_trait]
impl Tool for Guarded {
    fn name(&self) -> &str {
        self.tool.name()
    }

    fn label(&self) -> &str {
        self.tool.label()
    }

    fn description(&self) -> &str {
        self.tool.description()
    }

    fn parameters(&self) -> Value {
        self.tool.parameters()
    }

    fn strict_schema(&self) -> bool {
        self.tool.strict_schema()
    }

    async fn execute(
        &self,
        call_id: &str,
        args: Value,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> ToolResult {
        if self.for_agent
            && self.role == AgentRole::Main
            && !self.read_only
            && self.shared.planning.load(Ordering::SeqCst)
        {
            return ToolResult::error(format!(
                "{} was not run: the user switched on plan mode. Change nothing now; \
                 finish with a plan.",
                self.tool.name()
            ));
        }
        let hooks = self
            .shared
            .hooks
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let hooked = hooks.has_tool_hooks(self.tool.name()).then(|| HookedCall {
            tool_name: self.tool.name(),
            tool_call_id: call_id,
            agent: self.role.hook_agent(),
        });
        let (args, rewritten) = match &hooked {
            Some(call) => match hooks
                .before_tool(call, args, &self.tool.parameters(), &cancel)
                .await
            {
                BeforeTool::Run { args, rewritten } => (args, rewritten),
                BeforeTool::Refuse(result) => return result,
            },
            None => (args, false),
        };
        let call = GateCall {
            tool_name: self.tool.name(),
            tool_call_id: call_id,
            args: &args,
            subagent: self.role.subagent(),
        };
        let verdict = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(CANCELLED_WHILE_ASKING.to_owned()),
            verdict = self.shared.gate.check(self.approval, call) => {
                verdict.map_err(|refused| refused.to_string())
            }
        };
        if let Err(reason) = verdict {
            return ToolResult::error(reason);
        }
        let result = self
            .tool
            .execute(call_id, args.clone(), cancel, updates)
            .await;
        let Some(call) = &hooked else {
            return result;
        };
        let result = hooks.after_tool(call, &args, rewritten, result).await;
        let observer = self
            .shared
            .after_hooks
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(observer) = observer {
            let details = result.details.clone();
            let _ = tokio::task::spawn_blocking(move || observer(&details)).await;
        }
        result
    }
}
