//! A session as one HTML file: the conversation in order with Markdown rendered and
//! code highlighted, each message with its time (UTC); an outline of the turns at the
//! top, each user message one line linking to its `#turn-N`; steers and follow-ups
//! badged as such; tool calls as collapsible cards whose summary line names the tool,
//! its argument (path, command) and what came of it (`17 lines`, `+2 −0`, `exit 1`, the
//! error) as the client's tool tree words them, the body keeping arguments, result and
//! diff; thinking collapsed; subagent runs nested in the card of the `spawn` call that
//! started them (the subagent's own calls, from the session's `.subagents` side file,
//! then its report); and the session's usage and cost, worded as the client words it
//! (`cost n/a` while the model's prices are unknown).
//!
//! Search is the browser's own find-in-page, without script: everything that tells a
//! turn or a call apart (prompts, tool names, paths, commands, outcomes) is on lines
//! that stay visible when the cards are closed, and Chromium also opens a closed card
//! whose body matches. A script (a filter box) was weighed and left out: the page
//! promises to run nothing at all, which a reader can check by the absence of any
//! `<script>`, and the outline and find already take one to any turn or call.
//!
//! Self-contained and inert: the styles are inline, nothing is fetched, and the page
//! carries a Content-Security-Policy that allows no script at all, on top of escaping
//! every piece of text from the session.

mod cards;
mod outline;
mod queued;

use super::markdown::{Highlighter, escape, render};
use crate::agent::{
    Block, Message, NotificationMessage, QueueKind, ToolResult, ToolResultMessage, Usage,
};
use crate::session::{SessionData, SubagentCall};
use cards::{SubagentRun, tool_card};
use outline::{Clock, badge, full_stamp, full_text};
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
/// Which user messages were steers and follow-ups is read from the session file at
/// `data.path` (its `queue` lines); without the file none is marked.
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
    let kinds = queued::queue_kinds(data);
    let title = format!("claw-tui session {}", data.id());
    let mut body = String::new();
    header(&mut body, data);
    outline::outline(&mut body, &data.messages, &kinds);
    body.push_str("<main id=\"conversation\">\n");
    let mut clock = Clock::default();
    let mut turn = 0;
    for (index, message) in data.messages.iter().enumerate() {
        match message {
            Message::User(u) => {
                turn += 1;
                let kind = kinds.get(&index).copied();
                let class = match kind {
                    Some(QueueKind::Steering) => " steer",
                    Some(QueueKind::FollowUp) => " follow-up",
                    None => "",
                };
                let _ = writeln!(
                    body,
                    "<section class=\"message user{class}\" data-role=\"user\" id=\"turn-{turn}\">\
                     <h2>User {} {}</h2><div class=\"content\">{}</div></section>",
                    badge(kind),
                    clock.stamp(u.timestamp),
                    render(&u.content, &highlighter)
                );
            }
            Message::Assistant(a) => {
                let _ = writeln!(
                    body,
                    "<section class=\"message assistant\" data-role=\"assistant\">\
                     <h2>Assistant {}</h2>",
                    clock.stamp(a.timestamp)
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
                            // The images stay out: the card shows text.
                            let result = results.get(id.as_str()).map(|r| ToolResult {
                                content: r.content.clone(),
                                images: Vec::new(),
                                details: r.details.clone(),
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
                     <details{}><summary>{} ({}) {}</summary><div class=\"content\">{}</div>\
                     </details></section>",
                    if subagent { "" } else { " open" },
                    if subagent {
                        "Subagent run"
                    } else {
                        "Notification"
                    },
                    escape(&n.source),
                    clock.stamp(n.timestamp),
                    render(&n.content, &highlighter)
                );
            }
            // A status line: its time is a tooltip, so that the line is only its words.
            Message::Notice(n) => {
                let time = full_text(n.timestamp);
                let title = if time.is_empty() {
                    String::new()
                } else {
                    format!(" title=\"{time}\"")
                };
                let _ = writeln!(
                    body,
                    "<p class=\"notice\" data-role=\"notice\"{title}>{}</p>",
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
    let mut models: Vec<&str> = Vec::new();
    for message in &data.messages {
        if let Message::Assistant(a) = message {
            turns += 1;
            usage.add(&a.usage);
            if !models.contains(&a.model.as_str()) {
                models.push(&a.model);
            }
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
        let started = full_stamp(h.created);
        if !started.is_empty() {
            let _ = writeln!(out, "<dt>Started</dt><dd>{started}</dd>");
        }
        if models.is_empty() {
            models.push(&h.model);
        }
    }
    let _ = writeln!(
        out,
        "<dt>Usage</dt><dd id=\"usage\">{turns} answers · {} input · {} output · {} cache \
         read · {} cache write tokens · {}</dd>",
        usage.input,
        usage.output,
        usage.cache_read,
        usage.cache_write,
        cost_text(usage.cost, &models)
    );
    out.push_str("</dl>\n</header>\n");
}

/// The cost as the client's status bar words it (`Status::cost_text`): dollars when
/// known, `cost n/a` while the prices are unknown. Known as the client knows it: a call
/// was priced, or every model that answered is the free offline demo or has built-in
/// prices. (Prices from the configuration are not the export's to read: they show as
/// a cost above zero.)
fn cost_text(cost: f64, models: &[&str]) -> String {
    let priced = |model: &&str| {
        *model == crate::config::DEMO_MODEL || crate::llm::pricing::known_prices(model).is_some()
    };
    if cost > 0.0 || (!models.is_empty() && models.iter().all(priced)) {
        format!("${cost:.4}")
    } else {
        "cost n/a".to_owned()
    }
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
