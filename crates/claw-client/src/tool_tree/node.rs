//! One tool call of the tree: where it is, its arguments, its live output and result,
//! and the calls a subagent it started made.

use crate::recorded::CallResult;
use crate::theme::Token;
use claw_agent::{Interruption, SKIPPED_FOR_ABORT, SKIPPED_FOR_STEERING, ToolResult};
use claw_text::summarize_args;
use claw_tools::pipeline::CANCELLED_WHILE_ASKING;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::VecDeque;
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
    /// Stopped by the user before it finished (an interrupt, or the run's abort).
    Interrupted,
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
            CallStatus::Interrupted => ("■", Token::Warning),
        }
    }

    /// The word a finished call's card and the tree show for it, if any.
    pub fn word(self) -> Option<&'static str> {
        match self {
            CallStatus::Skipped => Some("skipped"),
            CallStatus::Interrupted => Some("interrupted"),
            CallStatus::Failed => Some("failed"),
            CallStatus::Queued => Some("queued"),
            CallStatus::Running | CallStatus::Done => None,
        }
    }
}

/// How a tool is named to people: an MCP tool's registry name `mcp__server__tool` as
/// `server · tool`; any other name as it is.
pub fn tool_label(name: &str) -> Cow<'_, str> {
    match name
        .strip_prefix(claw_runtime::mcp::names::PREFIX)
        .and_then(|rest| rest.split_once("__"))
    {
        Some((server, tool)) if !server.is_empty() && !tool.is_empty() => {
            Cow::Owned(format!("{server} · {tool}"))
        }
        _ => Cow::Borrowed(name),
    }
}

/// The progress a long call reports (an MCP server's progress notifications).
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Work done so far.
    pub done: f64,
    /// The whole work, when the server knows it.
    pub total: Option<f64>,
    /// What the server says it is doing.
    pub message: Option<String>,
}

impl Progress {
    /// The progress a `tool_execution_update` partial reports, if it is one.
    fn of(partial: &Value) -> Option<Progress> {
        let map = partial.as_object()?;
        Some(Progress {
            done: map.get("progress")?.as_f64()?,
            total: map.get("total").and_then(Value::as_f64),
            // A server's words: no escape sequence of its reaches the screen, and one line.
            message: map
                .get("message")
                .and_then(Value::as_str)
                .map(|m| claw_text::one_line(&crate::wrap::clean(m), 80)),
        })
    }

    /// `▰▰▰▱▱▱ 3/6 · indexing`, or `3 · indexing` when the total is unknown.
    pub fn label(&self) -> String {
        const CELLS: usize = 6;
        let number = |n: f64| {
            if n.fract() == 0.0 && n.abs() < 1e15 {
                format!("{}", n as i64)
            } else {
                format!("{n:.1}")
            }
        };
        let mut label = match self.total.filter(|t| *t > 0.0) {
            Some(total) => {
                let filled = ((self.done / total).clamp(0.0, 1.0) * CELLS as f64).round() as usize;
                format!(
                    "{}{} {}/{}",
                    "▰".repeat(filled),
                    "▱".repeat(CELLS - filled),
                    number(self.done),
                    number(total)
                )
            }
            None => number(self.done),
        };
        if let Some(message) = self.message.as_deref().filter(|m| !m.trim().is_empty()) {
            label.push_str(" · ");
            label.push_str(message.trim());
        }
        label
    }
}

/// Arguments (or any JSON) as indented JSON, as the detail overlay and the approval
/// prompt show it.
pub(crate) fn pretty_json(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

impl CallNode {
    /// The arguments as JSON again (`Null` if they were not JSON).
    pub fn args_value(&self) -> Value {
        serde_json::from_str(&self.args).unwrap_or(Value::Null)
    }

    /// The arguments, indented for reading.
    pub fn pretty_args(&self) -> String {
        match serde_json::from_str::<Value>(&self.args) {
            Ok(value) => pretty_json(&value),
            Err(_) => self.args.clone(),
        }
    }
}

/// One tool call.
#[derive(Clone, Debug)]
pub struct CallNode {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as compact JSON: kept as a `Value`, a map of a few keys costs a tree
    /// node of about 600 bytes, and a long resumed session announces thousands of calls.
    pub args: String,
    /// One-line summary of the arguments.
    pub summary: String,
    /// Where it is.
    pub status: CallStatus,
    /// When it started executing.
    pub started: Option<Instant>,
    /// How long it ran, once finished.
    pub duration: Option<Duration>,
    /// Partial output lines, newest last (the last `LIVE_LINES_KEPT`).
    pub live: VecDeque<String>,
    /// Partial output lines seen in all (more than `live` holds once it dropped some).
    pub live_total: usize,
    /// The result, once finished (for a resumed session, the history's own).
    pub result: Option<CallResult>,
    /// Calls made by the subagent this call spawned.
    pub children: Vec<CallNode>,
    /// The progress it last reported, while it runs.
    pub progress: Option<Progress>,
}

impl CallNode {
    pub(super) fn new(id: &str, name: &str, args: &Value) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            args: args.to_string(),
            summary: summarize_args(args),
            status: CallStatus::Queued,
            started: None,
            duration: None,
            live: VecDeque::new(),
            live_total: 0,
            result: None,
            children: Vec::new(),
            progress: None,
        }
    }

    /// How the call's tool is named to people ([`tool_label`]).
    pub fn label(&self) -> Cow<'_, str> {
        tool_label(&self.name)
    }

    /// Whether the call is an MCP server's tool.
    pub fn is_mcp(&self) -> bool {
        self.name.starts_with(claw_runtime::mcp::names::PREFIX)
    }

    /// The tree's one line under a finished call: what the tool did, where the tool
    /// says it ([`CallNode::outcome`]); else the result's last non-empty line and, when
    /// there are more, how many lines it has.
    pub fn preview(&self) -> Option<String> {
        self.outcome().or_else(|| self.last_line())
    }

    /// The output's last non-empty line and, when there are more, how many it has.
    fn last_line(&self) -> Option<String> {
        let lines = self.output_lines();
        let last = lines
            .iter()
            .rev()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())?;
        Some(match lines.len() {
            0 | 1 => last.to_owned(),
            n => format!("{last}  ({n} lines)"),
        })
    }

    /// What a finished call did, in the words of its tool's details: `exit 1 · FAILED
    /// (3 lines)` for a command (failed or not), `+2 −0` for an edit or a write,
    /// `17 lines` or `lines 1–17 of 40` for a read, `12 entries` for a listing. `None`
    /// for another failed call (its error is the line to show) and for tools that say
    /// nothing of the kind.
    pub fn outcome(&self) -> Option<String> {
        let result = self.result.as_ref()?;
        let details = result.details();
        let count = |key: &str| details.get(key).and_then(Value::as_u64);
        let plural = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        if self.is_command() {
            // The exit code, and the output's last line: a command's verdict is often
            // there ("5 passed", "200 total").
            let code = details.get("exit_code").and_then(Value::as_i64)?;
            return Some(match self.last_line() {
                Some(last) => format!("exit {code} · {last}"),
                None => format!("exit {code} · no output"),
            });
        }
        if result.is_error() {
            return None;
        }
        if let Some(change) = details.get("change") {
            let added = change.get("added").and_then(Value::as_u64)?;
            let removed = change.get("removed").and_then(Value::as_u64)?;
            return Some(format!("+{added} −{removed}"));
        }
        if let (Some(start), Some(end), Some(total)) =
            (count("start_line"), count("end_line"), count("total_lines"))
        {
            return Some(if start <= 1 && end >= total {
                plural(total, "line")
            } else {
                format!("lines {start}–{end} of {total}")
            });
        }
        count("entries").map(|n| match n {
            1 => "1 entry".to_owned(),
            n => format!("{n} entries"),
        })
    }

    /// The call's output as lines: what arrived so far while it runs, else its result
    /// (for a command, without the bracketed notes that end it: the card shows the exit
    /// code itself).
    pub fn output_lines(&self) -> Vec<&str> {
        let Some(result) = &self.result else {
            return self.live.iter().map(String::as_str).collect();
        };
        let mut lines: Vec<&str> = result.content().lines().collect();
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        if self.is_command() {
            while lines
                .last()
                .is_some_and(|l| l.starts_with('[') && l.ends_with(']'))
            {
                lines.pop();
            }
            if lines == ["(no output)"] {
                lines.clear();
            }
        }
        lines
    }

    /// How many output lines the call produced (so far).
    pub fn output_line_count(&self) -> usize {
        match &self.result {
            Some(_) => self.output_lines().len(),
            None => self.live_total,
        }
    }

    /// Whether the call runs a command (its card shows output and an exit code).
    pub fn is_command(&self) -> bool {
        self.name == claw_tools::exec::EXEC_TOOL_NAME
            || self
                .result
                .as_ref()
                .is_some_and(|r| r.details().get("exit_code").is_some())
    }

    /// A command's exit code, once it exited.
    pub fn exit_code(&self) -> Option<i64> {
        self.result
            .as_ref()?
            .details()
            .get("exit_code")
            .and_then(serde_json::Value::as_i64)
    }

    /// Elapsed time: the final duration, or the time running so far.
    pub fn elapsed(&self, now: Instant) -> Option<Duration> {
        self.duration
            .or_else(|| self.started.map(|s| now.saturating_duration_since(s)))
    }

    pub(super) fn start(&mut self, args: &Value, now: Instant) {
        if !args.is_null() {
            self.args = args.to_string();
            self.summary = summarize_args(args);
        }
        self.status = CallStatus::Running;
        self.started = Some(now);
    }

    pub(super) fn update(&mut self, partial: &Value) {
        let mut add = |text: &str, prefix: &str| {
            for line in text.lines() {
                self.live.push_back(format!("{prefix}{line}"));
                self.live_total += 1;
            }
        };
        if let Some(progress) = Progress::of(partial) {
            self.progress = Some(progress);
            return;
        }
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

    pub(super) fn finish(&mut self, result: &ToolResult, now: Instant) {
        self.finish_with(CallResult::Live(result.clone()), now);
    }

    pub(super) fn finish_with(&mut self, result: CallResult, now: Instant) {
        self.progress = None;
        self.status = status_of(&result);
        self.duration = self.started.map(|s| now.saturating_duration_since(s));
        self.result = Some(result);
    }
}

/// Where a call is once it has `result`: skipped, interrupted, failed or done, by the
/// markers the agent and the tools put in a result (the export words its cards by it too).
pub fn status_of(result: &CallResult) -> CallStatus {
    let (content, details) = (result.content(), result.details());
    let cancelled = details.get("cancelled") == Some(&serde_json::Value::Bool(true));
    if content == SKIPPED_FOR_STEERING || content == SKIPPED_FOR_ABORT {
        CallStatus::Skipped
    } else if Interruption::of(details).is_some() || cancelled || content == CANCELLED_WHILE_ASKING
    {
        CallStatus::Interrupted
    } else if result.is_error() {
        CallStatus::Failed
    } else {
        CallStatus::Done
    }
}

#[cfg(test)]
mod outcome_tests {
    use super::*;
    use serde_json::json;

    fn finished(name: &str, content: &str, details: Value, error: bool) -> CallNode {
        let mut node = CallNode::new("c1", name, &json!({}));
        let result = if error {
            ToolResult::error(content)
        } else {
            ToolResult::text(content)
        };
        node.result = Some(CallResult::Live(result.with_details(details)));
        node
    }

    #[test]
    fn each_tool_says_what_it_did_and_others_show_their_last_line() {
        let edit = finished(
            "edit_file",
            "Edited a.py: replaced 1 occurrence.\n\n   def f():",
            json!({"change": {"added": 2, "removed": 0, "hunks": []}}),
            false,
        );
        assert_eq!(edit.preview().as_deref(), Some("+2 −0"));
        let read = |start, end, total| {
            finished(
                "read_file",
                "1\tx",
                json!({"start_line": start, "end_line": end, "total_lines": total}),
                false,
            )
            .preview()
        };
        assert_eq!(read(1, 17, 17).as_deref(), Some("17 lines"));
        assert_eq!(read(1, 1, 1).as_deref(), Some("1 line"));
        assert_eq!(read(5, 9, 40).as_deref(), Some("lines 5–9 of 40"));
        let list = finished("list_dir", "a\nb", json!({"entries": 12}), false);
        assert_eq!(list.preview().as_deref(), Some("12 entries"));
        let one = finished("list_dir", "a", json!({"entries": 1}), false);
        assert_eq!(one.preview().as_deref(), Some("1 entry"));
        let failed = finished(
            "exec",
            "3 failed\n[exit code: 1]",
            json!({"exit_code": 1}),
            false,
        );
        assert_eq!(failed.preview().as_deref(), Some("exit 1 · 3 failed"));
        let quiet = finished(
            "exec",
            "(no output)\n[exit code: 0]",
            json!({"exit_code": 0}),
            false,
        );
        assert_eq!(quiet.preview().as_deref(), Some("exit 0 · no output"));
        // A failed call shows its error; a tool that says nothing of the kind, its last line.
        let refused = finished("edit_file", "Access denied: ../x", json!({}), true);
        assert_eq!(refused.preview().as_deref(), Some("Access denied: ../x"));
        let fetched = finished("web_fetch", "title\nlast words", json!({"url": "u"}), false);
        assert_eq!(fetched.preview().as_deref(), Some("last words  (2 lines)"));
    }
}
