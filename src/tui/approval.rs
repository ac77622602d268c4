//! The approval part: tool calls waiting for the user's yes or no, oldest first, shown
//! above everything else; while one waits, every key goes to it.

use super::keymap::Action;
use super::msg::Effect;
use super::part::{Handled, Intent};
use super::theme::{Theme, Token};
use super::tool_tree::pretty_json;
use super::widgets::{centered, dialog, scrolled};
use super::wrap::{StyledLine, WrapKind, clean, wrap};
use crate::tools::exec::{ApprovalDecision, ApprovalRequest};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Span;
use serde_json::Value;
use std::collections::VecDeque;

/// The requests waiting for an answer, oldest first.
#[derive(Clone, Debug, Default)]
pub struct ApprovalQueue {
    waiting: VecDeque<ApprovalRequest>,
}

impl ApprovalQueue {
    /// How many requests wait.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// A tool call asks for approval.
    pub(crate) fn push(&mut self, request: ApprovalRequest) -> Handled {
        self.waiting.push_back(request);
        Handled::changed()
    }

    /// y allows, a allows for the session, n or the interrupt key denies, the cancel key
    /// does what it does everywhere; every other key is swallowed while a request waits.
    pub(crate) fn handle_key(&mut self, key: &KeyEvent, action: Option<Action>) -> Handled {
        if self.waiting.is_empty() {
            return Handled::ignored();
        }
        let decision = match (key.code, action) {
            (KeyCode::Char('y' | 'Y'), _) => ApprovalDecision::Allow,
            (KeyCode::Char('a' | 'A'), _) => ApprovalDecision::AllowSession,
            (KeyCode::Char('n' | 'N'), _) | (_, Some(Action::Interrupt)) => ApprovalDecision::Deny,
            (_, Some(Action::Cancel)) => return Handled::changed().ask(Intent::Cancel),
            _ => return Handled::unchanged(),
        };
        let answered = Handled::changed();
        match self.waiting.pop_front() {
            Some(request) => answered.with(Effect::Approve {
                id: request.id,
                decision,
            }),
            None => answered,
        }
    }

    /// Draws the oldest request over `area`.
    pub(crate) fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(request) = self.waiting.front() else {
            return;
        };
        let count = self.waiting.len();
        let title = if count > 1 {
            format!(" Approve {}? (1 of {count}) ", request.tool_name)
        } else {
            format!(" Approve {}? ", request.tool_name)
        };
        let mut lines = Vec::new();
        // A subagent works unseen; say which one asks and for what task, so the user can
        // judge the command by the job it is meant for.
        let who = match &request.subagent {
            Some(sub) => {
                lines.push(StyledLine::plain(
                    format!("Subagent {} \"{}\"", sub.id, clean(&sub.label)),
                    theme.fg(Token::Warning).add_modifier(Modifier::BOLD),
                ));
                lines.push(StyledLine::plain(
                    format!("  task: {}", task_summary(&sub.task)),
                    theme.dim(),
                ));
                "The subagent"
            }
            None => "The agent",
        };
        let command = request.args.get("command").and_then(Value::as_str);
        match command {
            Some(command) => {
                lines.push(StyledLine::plain(
                    format!("{who} wants to run:"),
                    theme.text(),
                ));
                for text in clean(command).split('\n') {
                    lines.push(
                        StyledLine {
                            spans: vec![Span::styled(
                                text.to_owned(),
                                theme.fg(Token::Code).add_modifier(Modifier::BOLD),
                            )],
                            wrap: WrapKind::Char,
                            ..StyledLine::default()
                        }
                        .with_prefix(vec![Span::styled("  $ ", theme.dim())]),
                    );
                }
                for (key, label) in [("cwd", "in"), ("timeout", "timeout (s)")] {
                    if let Some(v) = request.args.get(key).filter(|v| !v.is_null()) {
                        let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                        lines.push(StyledLine::plain(format!("  {label}: {v}"), theme.dim()));
                    }
                }
            }
            None => {
                lines.push(StyledLine::plain("With the arguments:", theme.text()));
                for text in pretty_json(&request.args).split('\n') {
                    lines.push(StyledLine::plain(text.to_owned(), theme.fg(Token::Code)));
                }
            }
        }
        lines.push(StyledLine::blank());
        let key = |k: &str, what: &str, token: Token| {
            vec![
                Span::styled(
                    format!(" {k} "),
                    theme
                        .fg(token)
                        .add_modifier(Modifier::REVERSED | Modifier::BOLD),
                ),
                Span::styled(format!(" {what}   "), theme.text()),
            ]
        };
        let mut keys = key("y", "allow once", Token::Success);
        keys.extend(key("a", "allow for this session", Token::Warning));
        keys.extend(key("n/Esc", "deny", Token::Error));
        lines.push(StyledLine {
            spans: keys,
            ..StyledLine::default()
        });
        let width = (area.width * 70 / 100).max(30).min(area.width);
        let rows = wrap(&lines, width.saturating_sub(2));
        let rect = centered(area, 70, rows.len() as u16 + 2);
        let body = dialog(theme, rect, title, buf);
        scrolled(&rows, body, 0, buf);
    }
}

/// A subagent's task on one line, cut at 160 characters.
fn task_summary(task: &str) -> String {
    const MAX: usize = 160;
    let flat = clean(task).split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= MAX {
        return flat;
    }
    let cut: String = flat.chars().take(MAX - 1).collect();
    format!("{cut}…")
}
