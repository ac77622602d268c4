//! Who calls a tool and under which rules: the agent roles the policy hands tools to,
//! and the rules each tool is registered with. Both the policy and the pipeline's
//! steps read them.

use crate::exec::ApprovalMode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

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

    /// The subagent, when this is one.
    pub fn subagent(&self) -> Option<&SubagentRef> {
        match self {
            AgentRole::Main | AgentRole::Planner => None,
            AgentRole::Subagent(info) => Some(info),
        }
    }

    /// Who calls, as hooks are told: `"main"`, or the subagent.
    pub fn hook_agent(&self) -> Value {
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
