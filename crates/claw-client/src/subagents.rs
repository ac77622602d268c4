//! The client's subagents as one slice: their events (each subagent's tool calls go
//! under the `spawn` call that started it in the tree, its conversation in its own
//! chat), their rows in the dashboard, and cancelling one. The root `Msg` and `Effect`
//! carry these as `Subagents(..)`; the model side is `app/subagents.rs` and the
//! dashboard, the runtime side the dashboard's background controls.

use claw_agent::AgentEvent;
use std::time::Duration;

/// What the runtime tells about the subagents.
#[derive(Clone, Debug)]
pub enum Msg {
    /// An event of a subagent, started by the `spawn` call `parent_call_id`; its tool
    /// calls appear under that call in the tree.
    Event {
        /// The subagent.
        subagent_id: String,
        /// The `spawn` tool call that started the subagent.
        parent_call_id: String,
        /// The subagent's event.
        event: AgentEvent,
    },
    /// The current subagents (replaces the previous list).
    List(Vec<SubagentRow>),
    /// One subagent changed (added, or replaced by id).
    Update(SubagentRow),
}

/// What the model asks the runtime to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Cancel the subagent with this id.
    Cancel(String),
}

/// One subagent in the dashboard.
#[derive(Clone, Debug, PartialEq)]
pub struct SubagentRow {
    /// Its id.
    pub id: String,
    /// Short name given by the agent.
    pub label: String,
    /// Its state.
    pub status: claw_runtime::runtime::SubagentStatus,
    /// Turns taken so far.
    pub turns: u32,
    /// Tokens used so far (input + output).
    pub tokens: u64,
    /// Time it has run, as of this row (the dashboard counts on while it works).
    pub elapsed: Duration,
    /// The tool it is running right now.
    pub current_tool: Option<String>,
}
