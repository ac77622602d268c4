//! One tool call of the tree: where it is, its arguments, its live output and result,
//! and the calls a subagent it started made.

use crate::recorded::CallResult;
use crate::theme::Token;
use claw_agent::{Interruption, SKIPPED_FOR_ABORT, SKIPPED_FOR_STEERING, ToolResult};
use claw_text::summarize_args;
use claw_tools::pipeline::CANCELLED_WHILE_ASKING;
use serde_json::Value;
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
        }
    }

    /// The tree's one line under a finished call: the result's last non-empty line
    /// and, when there are more, how many lines it has.
    pub fn preview(&self) -> Option<String> {
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

    /// The call's output as lines: what arrived so far while it runs, else its result
    /// (for a command, without the bracketed notes that end it: the card shows the exit
    /// code itself).
    pub fn output_lines(&self) -> Vec<&str> {
        let Some(result) = &self.result else {
            return self.live.iter().map(String::as_str).collect();
        };
        let mut lines: Vec<&str> = result.content().lines().collect();
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
        self.status = status_of(&result);
        self.duration = self.started.map(|s| now.saturating_duration_since(s));
        self.result = Some(result);
    }
}

/// Where a call is once it has `result`.
pub(super) fn status_of(result: &CallResult) -> CallStatus {
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
