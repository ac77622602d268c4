//! The subagent data the dashboard, the `spawn` tool and the embedding app see.

use crate::agent::{CompactionSettings, ThinkingLevel, ToolExecution};
use serde::{Deserialize, Serialize};
/// A subagent's default turn limit per task.
pub const DEFAULT_SUBAGENT_MAX_TURNS: u32 = 15;
/// How many subagents run at once by default.
pub const DEFAULT_MAX_CONCURRENT: usize = 4;
/// What a subagent is told about its role when the runtime is given no other prompt.
pub const SUBAGENT_SYSTEM_PROMPT: &str = "You are a subagent of claw-tui: you work alone, in \
the background, on one task given to you by the main agent. Use your tools to do the task, then \
answer with a complete, self-contained report of what you did and found; that answer is handed \
to the main agent as it is. You cannot talk to the user, start subagents or schedule jobs.";

/// Where a subagent is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubagentStatus {
    /// Waiting for a free slot.
    Queued,
    /// Its loop is running.
    Running,
    /// Finished with an answer.
    Done,
    /// Ended with an error.
    Failed,
    /// Stopped by `cancel` or by shutdown.
    Cancelled,
    /// Stopped at its turn limit before finishing.
    TurnLimit,
}

impl SubagentStatus {
    /// Whether the subagent has ended, one way or another.
    pub fn is_finished(self) -> bool {
        !matches!(self, SubagentStatus::Queued | SubagentStatus::Running)
    }

    /// The status as the dashboard and error messages spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            SubagentStatus::Queued => "queued",
            SubagentStatus::Running => "running",
            SubagentStatus::Done => "done",
            SubagentStatus::Failed => "failed",
            SubagentStatus::Cancelled => "cancelled",
            SubagentStatus::TurnLimit => "turn_limit",
        }
    }
}

/// What the dashboard shows about one subagent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentInfo {
    /// `subagent-N`.
    pub id: String,
    /// Short name (given to `spawn`, or `Task N`).
    pub label: String,
    /// The task it was given.
    pub task: String,
    /// Where it is in its life.
    pub status: SubagentStatus,
    /// Turns started so far.
    pub turns: u32,
    /// Tokens used so far (all LLM calls).
    pub tokens: u64,
    /// Time since it started running (frozen once it ends; 0 while queued).
    pub elapsed_ms: u64,
    /// The tool it is running right now, if any.
    pub current_tool: Option<String>,
    /// The main agent's `spawn` call that started it.
    pub parent_tool_call_id: String,
    /// The conversation its result goes back to.
    pub chat_id: String,
}

/// How subagents are built and how many run at once.
#[derive(Clone)]
pub struct SubagentConfig {
    /// Model id for every subagent.
    pub model: String,
    /// Their system prompt.
    pub system_prompt: String,
    /// Turns allowed per task.
    pub max_turns: u32,
    /// Subagents running at once (at least 1); later spawns wait in order.
    pub max_concurrent: usize,
    /// Thinking level.
    pub thinking: ThinkingLevel,
    /// Sequential or parallel tool calls.
    pub tool_execution: ToolExecution,
    /// When their histories are compacted (as the main agent's).
    pub compaction: CompactionSettings,
    /// The configured context window; `None`: the built-in table's for the model.
    pub context_window: Option<u64>,
    /// Where their HTTP calls are reported, each under the subagent's id.
    pub requests: crate::llm::RequestTap,
}

impl SubagentConfig {
    /// Defaults for `model`: 15 turns, 4 at once, the built-in subagent prompt.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            system_prompt: SUBAGENT_SYSTEM_PROMPT.to_owned(),
            max_turns: DEFAULT_SUBAGENT_MAX_TURNS,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            thinking: ThinkingLevel::Off,
            tool_execution: ToolExecution::Parallel,
            compaction: CompactionSettings::default(),
            context_window: None,
            requests: crate::llm::RequestTap::default(),
        }
    }
}

impl std::fmt::Debug for SubagentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubagentConfig")
            .field("model", &self.model)
            .field("max_turns", &self.max_turns)
            .field("max_concurrent", &self.max_concurrent)
            .field("thinking", &self.thinking)
            .field("tool_execution", &self.tool_execution)
            .finish_non_exhaustive()
    }
}

/// What `spawn` answers: the subagent exists and is running or waiting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnReceipt {
    /// Its id.
    pub id: String,
    /// Its label.
    pub label: String,
    /// Subagents running now (including this one if it started).
    pub running: usize,
    /// Its place in the waiting line (1 = next), when the limit was reached.
    pub queued_position: Option<usize>,
    /// The concurrency limit.
    pub limit: usize,
}

impl SpawnReceipt {
    /// The text the model gets back from the `spawn` tool.
    pub fn describe(&self) -> String {
        let Self { id, label, .. } = self;
        match self.queued_position {
            None => format!(
                "Started subagent {id} (\"{label}\"); {} running now. Its result will arrive \
                 as a system notification when it finishes; you do not need to wait for it.",
                self.running
            ),
            Some(position) => format!(
                "Queued subagent {id} (\"{label}\") at position {position}: {} subagents are \
                 already running (the limit is {}). It starts when one finishes; its result \
                 will arrive as a system notification.",
                self.running, self.limit
            ),
        }
    }
}
