//! `claw-tui export`: a session as readable Markdown or as JSON.

use super::load::SessionData;
use crate::agent::{Block, Compaction, CompactionReason, Message};
use serde_json::json;
use std::fmt::Write;

/// A compaction point: what the model got instead of the messages above it.
fn compaction_marker(out: &mut String, compaction: &Compaction) {
    let reason = match compaction.reason {
        CompactionReason::Threshold => "the context window was filling up",
        CompactionReason::Overflow => "the provider refused a request as too long",
        CompactionReason::Manual => "/compact",
    };
    let _ = writeln!(
        out,
        "---\n\n## Compacted: {} → {} tokens ({reason})\n\nFrom here on the model saw this \
         summary instead of the messages before message {}, then the messages from that \
         one on.\n\n{}\n\n---\n",
        compaction.tokens_before,
        compaction.tokens_after,
        compaction.first_kept_message + 1,
        compaction
            .summary
            .trim_end()
            .lines()
            .map(|line| format!("> {line}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The session as Markdown: each message under a heading, tool calls and results fenced,
/// and each compaction marked where it happened.
pub fn to_markdown(data: &SessionData) -> String {
    let mut out = String::new();
    if let Some(h) = &data.header {
        let _ = writeln!(out, "# Session {}\n", h.id);
        let _ = writeln!(
            out,
            "- workspace: `{}`\n- model: {} ({})\n",
            h.workspace, h.model, h.provider
        );
    }
    let marks = |out: &mut String, at: usize| {
        for compaction in data.compactions.iter().filter(|c| c.history_len == at) {
            compaction_marker(out, compaction);
        }
    };
    for (i, message) in data.messages.iter().enumerate() {
        marks(&mut out, i);
        match message {
            Message::User(u) => {
                let _ = writeln!(out, "## User\n\n{}\n", u.content.trim_end());
            }
            Message::Assistant(a) => {
                let _ = writeln!(out, "## Assistant\n");
                for block in &a.content {
                    match block {
                        Block::Text { text } => {
                            let _ = writeln!(out, "{}\n", text.trim_end());
                        }
                        Block::Thinking { thinking, .. } => {
                            for line in thinking.trim_end().lines() {
                                let _ = writeln!(out, "> {line}");
                            }
                            out.push('\n');
                        }
                        Block::ToolCall { name, args, .. } => {
                            let _ =
                                writeln!(out, "**Tool call `{name}`**\n\n```json\n{args:#}\n```\n");
                        }
                    }
                }
                if let Some(error) = &a.error_message {
                    let _ = writeln!(out, "*{:?}: {error}*\n", a.stop_reason);
                }
            }
            Message::ToolResult(r) => {
                let status = if r.is_error { "error" } else { "result" };
                let fence = fence_for(&r.content);
                let _ = writeln!(
                    out,
                    "**Tool {status} `{}`**\n\n{fence}text\n{}\n{fence}\n",
                    r.tool_name,
                    r.content.trim_end()
                );
            }
            Message::Notification(n) => {
                let _ = writeln!(
                    out,
                    "## Notification ({})\n\n{}\n",
                    n.source,
                    n.content.trim_end()
                );
            }
            Message::Notice(n) => {
                let _ = writeln!(out, "*{}*\n", n.text.trim_end());
            }
        }
    }
    marks(&mut out, data.messages.len());
    out
}

/// A code fence longer than any backtick run in `text`.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// The session as one JSON document: header, messages, compactions and pending queues.
pub fn to_json(data: &SessionData) -> String {
    let value = json!({
        "header": data.header,
        "messages": data.messages,
        "compactions": data.compactions,
        "steering": data.steering,
        "follow_up": data.follow_up,
        "pending_notifications": data.pending_notifications,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default()
}
