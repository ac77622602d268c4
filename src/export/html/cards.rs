//! A tool call's card: a `<details>` whose summary line says what the call was and
//! what came of it in the client's own words (`✓ read_file src/lib.rs · 17 lines`,
//! `exec cargo test · exit 1 · 3 failed`, `+2 −0` for an edit), and whose body holds
//! the arguments, the result, the diff, and for a `spawn` the subagent's calls and
//! report.
//!
//! The words come from the client's tool tree: the call is made a [`CallNode`], whose
//! `summary` ([`summarize_args`]), `label` and `preview` the tree and the chat show, so
//! the page and the terminal cannot word a call differently.

use super::super::markdown::{Highlighter, escape, render};
use crate::agent::{NotificationMessage, ToolResult};
use crate::session::SubagentCall;
use crate::text::{one_line, summarize_args};
use claw_client::recorded::CallResult;
use claw_client::tool_tree::{CallNode, CallStatus, status_of};
use serde_json::Value;
use std::collections::VecDeque;
use std::fmt::Write;

/// Characters of the outcome a summary line shows (the body has all of it).
const OUTCOME_CHARS: usize = 100;

/// What the subagents a `spawn` call started did: their calls, oldest first, and their
/// reports (empty for any other call).
pub(super) struct SubagentRun<'a> {
    /// The subagents' own calls.
    pub(super) calls: &'a [&'a SubagentCall],
    /// Their reports, as the notifications that delivered them.
    pub(super) reports: &'a [&'a NotificationMessage],
}

/// The run of a call that started no subagent.
pub(super) const NO_RUN: SubagentRun<'static> = SubagentRun {
    calls: &[],
    reports: &[],
};

/// The call as the client's tool tree holds a finished one.
fn call_node(name: &str, args: &Value, result: Option<ToolResult>) -> CallNode {
    let result = result.map(CallResult::Live);
    CallNode {
        id: String::new(),
        name: name.to_owned(),
        args: args.to_string(),
        summary: summarize_args(args),
        // A call the session has no result for never finished: the client's resumed
        // tree shows it skipped.
        status: result.as_ref().map_or(CallStatus::Skipped, status_of),
        started: None,
        duration: None,
        live: VecDeque::new(),
        live_total: 0,
        result,
        children: Vec::new(),
        progress: None,
    }
}

/// What came of the call, for its summary line: the status word when the symbol is
/// not enough (skipped, interrupted, failed) and the tree's preview.
fn outcome(node: &CallNode) -> String {
    let preview = node.preview().map(|p| one_line(&p, OUTCOME_CHARS));
    let word = match &node.result {
        None => Some("no result"),
        Some(_) => node.status.word(),
    };
    // "skipped" before "Skipped due to queued user message." says it twice.
    let word = word.filter(|w| {
        !preview
            .as_deref()
            .is_some_and(|p| p.to_lowercase().starts_with(w))
    });
    [word.map(str::to_owned), preview]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" · ")
}

/// One call's card, its subagent's calls nested in it.
pub(super) fn tool_card(
    out: &mut String,
    name: &str,
    args: &Value,
    result: Option<ToolResult>,
    run: &SubagentRun<'_>,
    highlighter: &Highlighter,
) {
    let node = call_node(name, args, result);
    let class = match node.status {
        CallStatus::Done => "done",
        CallStatus::Failed => "error",
        CallStatus::Skipped => "skipped",
        CallStatus::Interrupted => "interrupted",
        CallStatus::Queued | CallStatus::Running => "no-result",
    };
    let (symbol, _) = node.status.symbol();
    let _ = write!(
        out,
        "<details class=\"tool {class}\"><summary><span class=\"mark\">{symbol}</span> \
         <span class=\"tool-name\">{}</span> <span class=\"tool-args\">{}</span>",
        escape(&node.label()),
        escape(&node.summary),
    );
    let outcome = outcome(&node);
    if !outcome.is_empty() {
        let _ = write!(
            out,
            " <span class=\"tool-outcome\">{}</span>",
            escape(&outcome)
        );
    }
    let pretty = serde_json::to_string_pretty(args).unwrap_or_default();
    let _ = write!(
        out,
        "</summary><h3>Arguments</h3><pre class=\"args\">{}</pre>",
        escape(&pretty)
    );
    if let Some(r) = &node.result {
        let _ = write!(
            out,
            "<h3>Result</h3><pre class=\"result\">{}</pre>",
            escape(r.content())
        );
        diff(out, r.details());
    }
    if !run.calls.is_empty() {
        out.push_str(
            "<div class=\"subagent-calls\" data-role=\"subagent-calls\"><h3>Subagent calls</h3>\n",
        );
        for call in run.calls {
            let _ = write!(
                out,
                "<div class=\"subagent-call\" data-subagent=\"{}\">",
                escape(&call.subagent_id)
            );
            let result = Some(call.result.clone());
            tool_card(
                out,
                &call.tool_name,
                &call.args,
                result,
                &NO_RUN,
                highlighter,
            );
            out.push_str("</div>");
        }
        out.push_str("</div>");
    }
    for report in run.reports {
        let _ = write!(
            out,
            "<details class=\"subagent\" data-role=\"subagent\"><summary>Subagent run</summary>\
             <div class=\"content\">{}</div></details>",
            render(&report.content, highlighter)
        );
    }
    out.push_str("</details>\n");
}

/// The change a file tool made: the structured hunks when there are, else the
/// unified diff text.
fn diff(out: &mut String, details: &Value) {
    let mut lines: Vec<(&str, String)> = Vec::new();
    if let Some(hunks) = details["change"]["hunks"].as_array() {
        for hunk in hunks {
            for line in hunk["lines"].as_array().into_iter().flatten() {
                let text = line["text"].as_str().unwrap_or_default();
                let (class, mark) = match line["kind"].as_str() {
                    Some("added") => ("add", '+'),
                    Some("removed") => ("del", '-'),
                    _ => ("ctx", ' '),
                };
                lines.push((class, format!("{mark}{text}")));
            }
        }
    } else if let Some(text) = details["diff"].as_str() {
        for line in text.lines() {
            let class = match line.chars().next() {
                Some('+') if !line.starts_with("+++") => "add",
                Some('-') if !line.starts_with("---") => "del",
                Some('@') => "hunk",
                _ => "ctx",
            };
            lines.push((class, line.to_owned()));
        }
    }
    if lines.is_empty() {
        return;
    }
    out.push_str("<h3>Diff</h3><pre class=\"diff\">");
    for (class, text) in lines {
        let _ = writeln!(out, "<span class=\"{class}\">{}</span>", escape(&text));
    }
    out.push_str("</pre>");
}
