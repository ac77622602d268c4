//! The model behind the tool-call tree: turns, their calls, a subagent's calls under
//! the `spawn` call that started it, live output tails and results.

use crate::agent::{AgentEvent, SKIPPED_FOR_ABORT, SKIPPED_FOR_STEERING, ToolResult};
use crate::headless::summarize_args;
use crate::hooks::hook_marks;
use crate::tui::theme::Token;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Output lines kept per running call (the tree shows the last few).
const LIVE_LINES_KEPT: usize = 500;

/// Where a call is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallStatus {
    /// Requested by the model, not started yet.
    Queued,
    /// Executing.
    Running,
    /// Finished successfully.
    Done,
    /// Finished with an error.
    Failed,
    /// Not run: a steering message or an abort came first.
    Skipped,
}

impl CallStatus {
    /// The status symbol and its colour token.
    pub fn symbol(self) -> (&'static str, Token) {
        match self {
            CallStatus::Queued => ("○", Token::Dim),
            CallStatus::Running => ("◌", Token::Tool),
            CallStatus::Done => ("✓", Token::Success),
            CallStatus::Failed => ("✗", Token::Error),
            CallStatus::Skipped => ("⤼", Token::Warning),
        }
    }
}

/// Arguments (or any JSON) as indented JSON, as the detail overlay and the approval
/// prompt show it.
pub(crate) fn pretty_json(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// One tool call.
#[derive(Clone, Debug)]
pub struct CallNode {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub args: Value,
    /// One-line summary of the arguments.
    pub summary: String,
    /// Where it is.
    pub status: CallStatus,
    /// When it started executing.
    pub started: Option<Instant>,
    /// How long it ran, once finished.
    pub duration: Option<Duration>,
    /// Partial output lines, newest last.
    pub live: VecDeque<String>,
    /// The result, once finished.
    pub result: Option<ToolResult>,
    /// Calls made by the subagent this call spawned.
    pub children: Vec<CallNode>,
}

impl CallNode {
    fn new(id: &str, name: &str, args: &Value) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            args: args.clone(),
            summary: summarize_args(args),
            status: CallStatus::Queued,
            started: None,
            duration: None,
            live: VecDeque::new(),
            result: None,
            children: Vec::new(),
        }
    }

    /// The first non-empty line of the result.
    pub fn preview(&self) -> Option<&str> {
        let result = self.result.as_ref()?;
        result
            .content
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
    }

    /// Elapsed time: the final duration, or the time running so far.
    pub fn elapsed(&self, now: Instant) -> Option<Duration> {
        self.duration
            .or_else(|| self.started.map(|s| now.saturating_duration_since(s)))
    }

    fn start(&mut self, args: &Value, now: Instant) {
        if !args.is_null() {
            self.args = args.clone();
            self.summary = summarize_args(args);
        }
        self.status = CallStatus::Running;
        self.started = Some(now);
    }

    fn update(&mut self, partial: &Value) {
        let mut add = |text: &str, prefix: &str| {
            for line in text.lines() {
                self.live.push_back(format!("{prefix}{line}"));
            }
        };
        match partial {
            Value::String(s) => add(s, ""),
            Value::Object(map) if map.contains_key("stdout") || map.contains_key("stderr") => {
                if let Some(out) = map.get("stdout").and_then(Value::as_str) {
                    add(out, "");
                }
                if let Some(err) = map.get("stderr").and_then(Value::as_str) {
                    add(err, "! ");
                }
            }
            other => add(&other.to_string(), ""),
        }
        while self.live.len() > LIVE_LINES_KEPT {
            self.live.pop_front();
        }
    }

    fn finish(&mut self, result: &ToolResult, now: Instant) {
        self.status =
            if result.content == SKIPPED_FOR_STEERING || result.content == SKIPPED_FOR_ABORT {
                CallStatus::Skipped
            } else if result.is_error {
                CallStatus::Failed
            } else {
                CallStatus::Done
            };
        self.duration = self.started.map(|s| now.saturating_duration_since(s));
        self.result = Some(result.clone());
    }
}

/// The calls of one turn.
#[derive(Clone, Debug)]
pub(crate) struct TurnNode {
    /// Turn number within the session.
    pub number: u32,
    /// Its calls in the order the model made them.
    pub calls: Vec<CallNode>,
}

/// A row of the flattened tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreeRow {
    /// A turn header.
    Turn(u32),
    /// A call at `depth` (0: the main agent's, 1: a subagent's).
    Call {
        /// The call id.
        id: String,
        /// Nesting depth.
        depth: usize,
    },
    /// A line of live output under a running call.
    Live {
        /// Nesting depth of the call.
        depth: usize,
        /// The line.
        text: String,
    },
    /// The one-line result preview under a finished call.
    Preview {
        /// Nesting depth of the call.
        depth: usize,
        /// The line.
        text: String,
    },
    /// What a hook did to the call (`⛔ blocked by hook: reason`, `✎ args rewritten by
    /// hook`).
    Mark {
        /// Nesting depth of the call.
        depth: usize,
        /// The mark.
        text: String,
    },
}

/// Live lines shown under a running call.
const LIVE_LINES_SHOWN: usize = 4;

/// All calls of the session.
#[derive(Clone, Debug, Default)]
pub struct CallTree {
    /// Turns that made calls, oldest first.
    turns: Vec<TurnNode>,
    paths: HashMap<String, (usize, Vec<usize>)>,
    turn_counter: u32,
    current_turn_open: bool,
    rows: Vec<TreeRow>,
    rows_dirty: bool,
}

impl CallTree {
    /// A turn of the main agent began.
    pub(crate) fn turn_started(&mut self) {
        self.turn_counter += 1;
        self.current_turn_open = false;
    }

    /// The session's turn count.
    pub fn turn_count(&self) -> u32 {
        self.turn_counter
    }

    fn turn_for_new_call(&mut self) -> usize {
        if !self.current_turn_open || self.turns.is_empty() {
            self.turns.push(TurnNode {
                number: self.turn_counter.max(1),
                calls: Vec::new(),
            });
            self.current_turn_open = true;
        }
        self.turns.len() - 1
    }

    /// The node of a call.
    pub fn node(&self, id: &str) -> Option<&CallNode> {
        let (turn, path) = self.paths.get(id)?;
        let mut node = self.turns.get(*turn)?.calls.get(*path.first()?)?;
        for i in &path[1..] {
            node = node.children.get(*i)?;
        }
        Some(node)
    }

    fn node_mut(&mut self, id: &str) -> Option<&mut CallNode> {
        let (turn, path) = self.paths.get(id)?;
        let mut node = self.turns.get_mut(*turn)?.calls.get_mut(*path.first()?)?;
        for i in &path[1..] {
            node = node.children.get_mut(*i)?;
        }
        Some(node)
    }

    /// Announces a call the model made (before it runs); known ids are left alone.
    pub(crate) fn announce(&mut self, id: &str, name: &str, args: &Value) {
        if self.paths.contains_key(id) {
            return;
        }
        let turn = self.turn_for_new_call();
        let calls = &mut self.turns[turn].calls;
        calls.push(CallNode::new(id, name, args));
        self.paths
            .insert(id.to_owned(), (turn, vec![calls.len() - 1]));
        self.rows_dirty = true;
    }

    /// Applies a main-agent tool event; returns the id of the call it changed.
    pub(crate) fn apply(&mut self, event: &AgentEvent, now: Instant) -> Option<String> {
        match event {
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                self.announce(tool_call_id, tool_name, args);
                self.node_mut(tool_call_id)?.start(args, now);
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial,
                ..
            } => {
                self.node_mut(tool_call_id)?.update(partial);
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                ..
            } => {
                self.node_mut(tool_call_id)?.finish(result, now);
            }
            _ => return None,
        }
        self.rows_dirty = true;
        match event {
            AgentEvent::ToolExecutionStart { tool_call_id, .. }
            | AgentEvent::ToolExecutionUpdate { tool_call_id, .. }
            | AgentEvent::ToolExecutionEnd { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        }
    }

    /// Applies a subagent's tool event under the `spawn` call `parent`.
    pub(crate) fn apply_nested(&mut self, parent: &str, event: &AgentEvent, now: Instant) -> bool {
        let Some((turn, path)) = self.paths.get(parent).cloned() else {
            return false;
        };
        match event {
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                let Some(parent_node) = self.node_mut(parent) else {
                    return false;
                };
                let mut child = CallNode::new(tool_call_id, tool_name, args);
                child.start(args, now);
                parent_node.children.push(child);
                let mut child_path = path;
                child_path.push(parent_node.children.len() - 1);
                self.paths.insert(tool_call_id.clone(), (turn, child_path));
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial,
                ..
            } => match self.node_mut(tool_call_id) {
                Some(node) => node.update(partial),
                None => return false,
            },
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                ..
            } => match self.node_mut(tool_call_id) {
                Some(node) => node.finish(result, now),
                None => return false,
            },
            _ => return false,
        }
        self.rows_dirty = true;
        true
    }

    /// Whether any call is executing.
    pub fn any_running(&self) -> bool {
        fn running(nodes: &[CallNode]) -> bool {
            nodes
                .iter()
                .any(|n| n.status == CallStatus::Running || running(&n.children))
        }
        self.turns.iter().any(|t| running(&t.calls))
    }

    /// Marks calls that never started as skipped (the run ended without them).
    pub(crate) fn settle(&mut self) {
        fn settle(nodes: &mut [CallNode]) {
            for n in nodes {
                if n.status == CallStatus::Queued {
                    n.status = CallStatus::Skipped;
                }
                settle(&mut n.children);
            }
        }
        for t in &mut self.turns {
            settle(&mut t.calls);
        }
        self.rows_dirty = true;
    }

    /// Rebuilds the flattened rows if the tree changed since the last call.
    pub(crate) fn refresh_rows(&mut self) {
        if !self.rows_dirty {
            return;
        }
        self.rows_dirty = false;
        let mut rows = Vec::new();
        fn push_calls(rows: &mut Vec<TreeRow>, nodes: &[CallNode], depth: usize) {
            for node in nodes {
                rows.push(TreeRow::Call {
                    id: node.id.clone(),
                    depth,
                });
                if node.status == CallStatus::Running {
                    let skip = node.live.len().saturating_sub(LIVE_LINES_SHOWN);
                    for line in node.live.iter().skip(skip) {
                        rows.push(TreeRow::Live {
                            depth,
                            text: line.clone(),
                        });
                    }
                } else {
                    let marks = node
                        .result
                        .as_ref()
                        .map(|r| hook_marks(&r.details))
                        .unwrap_or_default();
                    // A blocked call's result only repeats the reason its mark gives.
                    let blocked = marks.iter().any(|m| m.starts_with('⛔'));
                    if let Some(preview) = node.preview().filter(|_| !blocked) {
                        rows.push(TreeRow::Preview {
                            depth,
                            text: preview.to_owned(),
                        });
                    }
                    for text in marks {
                        rows.push(TreeRow::Mark { depth, text });
                    }
                }
                push_calls(rows, &node.children, depth + 1);
            }
        }
        for turn in &self.turns {
            rows.push(TreeRow::Turn(turn.number));
            push_calls(&mut rows, &turn.calls, 0);
        }
        self.rows = rows;
    }

    /// The flattened rows as of the last `refresh_rows`.
    pub fn rows(&self) -> &[TreeRow] {
        &self.rows
    }

    /// Ids of all calls in display order (what arrow keys move through).
    pub fn call_ids(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter_map(|r| match r {
                TreeRow::Call { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Forgets everything (a new session).
    pub(crate) fn clear(&mut self) {
        *self = CallTree::default();
    }
}
