//! A session as one HTML file: the conversation in order with Markdown rendered and
//! code highlighted, tool calls as collapsible cards (arguments, result, diff),
//! thinking collapsed, subagent runs nested in the card of the `spawn` call that started
//! them (the subagent's own calls, from the session's `.subagents` side file, then its
//! report), and the session's usage and cost.
//!
//! Self-contained and inert: the styles are inline, nothing is fetched, and the page
//! carries a Content-Security-Policy that allows no script at all, on top of escaping
//! every piece of text from the session.

use super::markdown::{Highlighter, escape, render};
use crate::agent::ToolResult;
use crate::agent::{Block, Message, NotificationMessage, ToolResultMessage, Usage};
use crate::session::{SessionData, SubagentCall};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write;

/// The page's styles.
const STYLE: &str = include_str!("style.css");
/// No script of any kind, no fetches; only the inline styles.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
                   form-action 'none'; base-uri 'none'";

/// How the page is made.
#[derive(Clone, Debug)]
pub struct HtmlOptions {
    /// The syntect theme for code blocks.
    pub code_theme: String,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        Self {
            code_theme: "base16-ocean.dark".to_owned(),
        }
    }
}

/// The session as one HTML document; `subagent_calls` are its subagents' calls
/// (`session::read_subagent_calls`), each shown under the `spawn` call that started it.
pub fn to_html(
    data: &SessionData,
    subagent_calls: &[SubagentCall],
    options: &HtmlOptions,
) -> String {
    let highlighter = Highlighter::new(&options.code_theme);
    let results: HashMap<&str, &ToolResultMessage> = data
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((r.tool_call_id.as_str(), r)),
            _ => None,
        })
        .collect();
    let nested = subagent_reports(&data.messages);
    let title = format!("claw-tui session {}", data.id());
    let mut body = String::new();
    header(&mut body, data);
    body.push_str("<main id=\"conversation\">\n");
    for message in &data.messages {
        match message {
            Message::User(u) => {
                let _ = writeln!(
                    body,
                    "<section class=\"message user\" data-role=\"user\"><h2>User</h2>\
                     <div class=\"content\">{}</div></section>",
                    render(&u.content, &highlighter)
                );
            }
            Message::Assistant(a) => {
                body.push_str(
                    "<section class=\"message assistant\" data-role=\"assistant\">\
                     <h2>Assistant</h2>\n",
                );
                for block in &a.content {
                    match block {
                        Block::Text { text } => {
                            let _ = writeln!(
                                body,
                                "<div class=\"content\">{}</div>",
                                render(text, &highlighter)
                            );
                        }
                        Block::Thinking { thinking, .. } => {
                            let _ = writeln!(
                                body,
                                "<details class=\"thinking\"><summary>Thinking</summary>\
                                 <div class=\"content\">{}</div></details>",
                                render(thinking, &highlighter)
                            );
                        }
                        Block::ToolCall { id, name, args, .. } => {
                            let reports: Vec<&NotificationMessage> = nested
                                .iter()
                                .filter(|(call, _)| call == id)
                                .map(|(_, report)| *report)
                                .collect();
                            let calls: Vec<&SubagentCall> = subagent_calls
                                .iter()
                                .filter(|c| &c.parent_call_id == id)
                                .collect();
                            let result = results.get(id.as_str()).copied().map(|r| Outcome {
                                content: &r.content,
                                details: &r.details,
                                is_error: r.is_error,
                            });
                            let run = SubagentRun {
                                calls: &calls,
                                reports: &reports,
                            };
                            tool_card(&mut body, name, args, result, &run, &highlighter);
                        }
                    }
                }
                if let Some(error) = &a.error_message {
                    let _ = writeln!(
                        body,
                        "<p class=\"error\">{:?}: {}</p>",
                        a.stop_reason,
                        escape(error)
                    );
                }
                body.push_str("</section>\n");
            }
            // Shown inside the card of the call they answer.
            Message::ToolResult(_) => {}
            // Shown inside the card of the spawn call that started the subagent.
            Message::Notification(n) if nested.iter().any(|(_, r)| std::ptr::eq(*r, n)) => {}
            Message::Notification(n) => {
                let subagent = n.source.starts_with("subagent");
                let class = if subagent { "subagent" } else { "notification" };
                let _ = writeln!(
                    body,
                    "<section class=\"message {class}\" data-role=\"notification\">\
                     <details{}><summary>{} ({})</summary><div class=\"content\">{}</div>\
                     </details></section>",
                    if subagent { "" } else { " open" },
                    if subagent {
                        "Subagent run"
                    } else {
                        "Notification"
                    },
                    escape(&n.source),
                    render(&n.content, &highlighter)
                );
            }
            Message::Notice(n) => {
                let _ = writeln!(
                    body,
                    "<p class=\"notice\" data-role=\"notice\">{}</p>",
                    escape(&n.text)
                );
            }
        }
    }
    body.push_str("</main>\n");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(&title)
    )
}

fn header(out: &mut String, data: &SessionData) {
    let mut usage = Usage::default();
    let mut turns = 0;
    for message in &data.messages {
        if let Message::Assistant(a) = message {
            turns += 1;
            usage.input += a.usage.input;
            usage.output += a.usage.output;
            usage.cache_read += a.usage.cache_read;
            usage.cache_write += a.usage.cache_write;
            usage.cost += a.usage.cost;
        }
    }
    out.push_str("<header>\n");
    let _ = writeln!(out, "<h1>Session {}</h1>", escape(data.id()));
    out.push_str("<dl class=\"meta\">\n");
    if let Some(h) = &data.header {
        for (term, value) in [
            ("Workspace", h.workspace.as_str()),
            ("Model", h.model.as_str()),
            ("Provider", h.provider.as_str()),
        ] {
            let _ = writeln!(out, "<dt>{term}</dt><dd>{}</dd>", escape(value));
        }
    }
    let _ = writeln!(
        out,
        "<dt>Usage</dt><dd id=\"usage\">{turns} answers · {} input · {} output · {} cache \
         read · {} cache write tokens · ${:.4}</dd>",
        usage.input, usage.output, usage.cache_read, usage.cache_write, usage.cost
    );
    out.push_str("</dl>\n</header>\n");
}

/// Each subagent's report and the spawn call that started it: the report names the
/// subagent's id (`[Subagent "label" (ID) completed]`), and the call's result does too.
fn subagent_reports(messages: &[Message]) -> Vec<(String, &NotificationMessage)> {
    let spawned: Vec<(&str, &str)> = messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) if r.tool_name == "spawn" && !r.is_error => {
                Some((r.tool_call_id.as_str(), r.content.as_str()))
            }
            _ => None,
        })
        .collect();
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Notification(n) => {
                let head = n.content.lines().find(|l| l.contains("[Subagent "))?;
                let id = head.rsplit_once(" (")?.1.split_once(')')?.0;
                let call = spawned
                    .iter()
                    .find(|(_, text)| text.contains(&format!("subagent {id} ")))?;
                Some((call.0.to_owned(), n))
            }
            _ => None,
        })
        .collect()
}

/// What a tool call returned, from the session or from a subagent's side file.
struct Outcome<'a> {
    content: &'a str,
    details: &'a Value,
    is_error: bool,
}

impl<'a> From<&'a ToolResult> for Outcome<'a> {
    fn from(r: &'a ToolResult) -> Self {
        Self {
            content: &r.content,
            details: &r.details,
            is_error: r.is_error,
        }
    }
}

/// What the subagents a `spawn` call started did: their calls, oldest first, and their
/// reports (empty for any other call).
struct SubagentRun<'a> {
    calls: &'a [&'a SubagentCall],
    reports: &'a [&'a NotificationMessage],
}

const NO_RUN: SubagentRun<'static> = SubagentRun {
    calls: &[],
    reports: &[],
};

fn tool_card(
    out: &mut String,
    name: &str,
    args: &Value,
    result: Option<Outcome<'_>>,
    run: &SubagentRun<'_>,
    highlighter: &Highlighter,
) {
    let status = match &result {
        Some(r) if r.is_error => "error",
        Some(_) => "done",
        None => "no result",
    };
    let args = serde_json::to_string_pretty(args).unwrap_or_default();
    let _ = write!(
        out,
        "<details class=\"tool {}\"><summary><span class=\"tool-name\">{}</span> \
         <span class=\"status\">{status}</span></summary>\
         <h3>Arguments</h3><pre class=\"args\">{}</pre>",
        status.replace(' ', "-"),
        escape(name),
        escape(&args)
    );
    if let Some(r) = &result {
        let _ = write!(
            out,
            "<h3>Result</h3><pre class=\"result\">{}</pre>",
            escape(r.content)
        );
        diff(out, r.details);
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
            let outcome = Some(Outcome::from(&call.result));
            tool_card(
                out,
                &call.tool_name,
                &call.args,
                outcome,
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
