//! The model behind the tool-call tree: turns, their calls, a subagent's calls under
//! the `spawn` call that started it, live output tails and results.

use super::node::{CallNode, CallStatus, status_of};
use crate::recorded::{CallResult, Recorded};
use claw_agent::{AgentEvent, ToolResult};
use claw_runtime::hooks::hook_marks;
use serde_json::Value;
use std::collections::HashMap;
use std::time::Instant;

/// The calls of one turn, or shell commands the user ran.
#[derive(Clone, Debug)]
pub(crate) struct TurnNode {
    /// Turn number within the session.
    pub number: u32,
    /// The user's `!command`s rather than a model turn.
    pub shell: bool,
    /// Its calls in the order the model made them.
    pub calls: Vec<CallNode>,
}

/// A row of the flattened tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreeRow {
    /// A turn header.
    Turn(u32),
    /// The header of shell commands the user ran.
    Shell,
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
    /// The group of the model turn under way, once it made a call.
    open_turn: Option<usize>,
    rows: Vec<TreeRow>,
    rows_dirty: bool,
}

impl CallTree {
    /// A turn of the main agent began.
    pub(crate) fn turn_started(&mut self) {
        self.turn_counter += 1;
        self.open_turn = None;
    }

    /// Whether no call was made yet.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// The session's turn count.
    pub fn turn_count(&self) -> u32 {
        self.turn_counter
    }

    fn turn_for_new_call(&mut self) -> usize {
        match self.open_turn {
            Some(turn) if turn < self.turns.len() => turn,
            _ => {
                self.turns.push(TurnNode {
                    number: self.turn_counter.max(1),
                    shell: false,
                    // Most turns make one call: a resumed session of thousands of turns
                    // would otherwise hold room for four in each.
                    calls: Vec::with_capacity(1),
                });
                let turn = self.turns.len() - 1;
                self.open_turn = Some(turn);
                turn
            }
        }
    }

    /// Adds a shell command the user ran (its events then arrive like a call's).
    pub(crate) fn announce_shell(&mut self, id: &str, command: &str) {
        if self.paths.contains_key(id) {
            return;
        }
        let reuse = self
            .turns
            .last()
            .is_some_and(|t| t.shell && self.open_turn.is_none_or(|o| o < self.turns.len() - 1));
        if !reuse {
            self.turns.push(TurnNode {
                number: 0,
                shell: true,
                calls: Vec::new(),
            });
        }
        let turn = self.turns.len() - 1;
        let args = serde_json::json!({ "command": command });
        let calls = &mut self.turns[turn].calls;
        calls.push(CallNode::new(id, claw_tools::exec::EXEC_TOOL_NAME, &args));
        self.paths
            .insert(id.to_owned(), (turn, vec![calls.len() - 1]));
        self.rows_dirty = true;
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

    /// A call of a resumed history got `result` (a tool result message of it, read in
    /// place); returns whether the call was known.
    pub(crate) fn finish_recorded(&mut self, result: Recorded, now: Instant) -> bool {
        let Some(id) = result.tool_result().map(|r| r.tool_call_id.as_str()) else {
            return false;
        };
        let Some(node) = self.node_mut(id) else {
            return false;
        };
        node.finish_with(CallResult::Recorded(result), now);
        self.rows_dirty = true;
        true
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

    /// Puts back a finished call of a subagent, under its `spawn` call `parent` (a
    /// session opened again); it shows no timing, like the main agent's restored calls.
    pub(crate) fn restore_nested(
        &mut self,
        parent: &str,
        id: &str,
        name: &str,
        args: &Value,
        result: &ToolResult,
    ) -> bool {
        if self.paths.contains_key(id) {
            return false;
        }
        let Some((turn, path)) = self.paths.get(parent).cloned() else {
            return false;
        };
        let Some(parent_node) = self.node_mut(parent) else {
            return false;
        };
        let mut child = CallNode::new(id, name, args);
        let result = CallResult::Live(result.clone());
        child.status = status_of(&result);
        child.result = Some(result);
        parent_node.children.push(child);
        let mut child_path = path;
        child_path.push(parent_node.children.len() - 1);
        self.paths.insert(id.to_owned(), (turn, child_path));
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

    /// The names of the main agent's calls executing now (not a subagent's).
    pub(crate) fn running_names(&self) -> Vec<String> {
        self.turns
            .iter()
            .filter(|t| !t.shell)
            .flat_map(|t| &t.calls)
            .filter(|n| n.status == CallStatus::Running)
            .map(|n| n.label().into_owned())
            .collect()
    }

    /// Whether a shell command the user ran is executing.
    pub(crate) fn shell_running(&self) -> bool {
        self.turns
            .iter()
            .filter(|t| t.shell)
            .flat_map(|t| &t.calls)
            .any(|n| n.status == CallStatus::Running)
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
        // A shell command of the user's is not part of the run.
        for t in self.turns.iter_mut().filter(|t| !t.shell) {
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
                    if let Some(progress) = &node.progress {
                        rows.push(TreeRow::Live {
                            depth,
                            text: progress.label(),
                        });
                    }
                } else {
                    let marks = node
                        .result
                        .as_ref()
                        .map(|r| hook_marks(r.details()))
                        .unwrap_or_default();
                    // A blocked call's result only repeats the reason its mark gives.
                    let blocked = marks.iter().any(|m| m.starts_with('⛔'));
                    if let Some(preview) = node.preview().filter(|_| !blocked) {
                        rows.push(TreeRow::Preview {
                            depth,
                            text: preview,
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
            rows.push(if turn.shell {
                TreeRow::Shell
            } else {
                TreeRow::Turn(turn.number)
            });
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
