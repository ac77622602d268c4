//! Overlays: help, tool-call details, delete confirmation, and the approval prompt.

use crate::tui::app::{App, Overlay};
use crate::tui::calls::CallStatus;
use crate::tui::entry::{format_duration, status_symbol};
use crate::tui::highlight::highlight_key;
use crate::tui::keymap::ACTIONS;
use crate::tui::slash::COMMANDS;
use crate::tui::theme::Token;
use crate::tui::wrap::{StyledLine, WrapKind, clean, str_width, wrap};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};
use serde_json::Value;

/// Arguments as indented JSON.
pub fn pretty_json(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Draws the open overlay and, above it, a pending approval.
pub fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    match &app.overlay {
        Some(Overlay::Help { scroll }) => help(app, area, *scroll, buf),
        Some(Overlay::Detail { call_id, scroll }) => detail(app, area, call_id, *scroll, buf),
        Some(Overlay::ConfirmDelete { id, name }) => confirm(app, area, id, name, buf),
        Some(Overlay::Sessions { rows, selected }) => {
            super::sessions::picker(app, area, rows, *selected, buf);
        }
        Some(Overlay::ConfirmFork { id, .. }) => super::sessions::confirm_fork(app, area, id, buf),
        None => {}
    }
    if !app.approvals.is_empty() {
        approval(app, area, buf);
    }
}

pub(super) fn centered(area: Rect, width_percent: u16, height: u16) -> Rect {
    let width = (area.width * width_percent / 100).max(30).min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

pub(super) fn frame(app: &App, area: Rect, title: String, buf: &mut Buffer) -> Rect {
    let theme = app.theme();
    Clear.render(area, buf);
    buf.set_style(area, theme.text());
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(theme.border(true))
        .title(Span::styled(
            title,
            theme.fg(Token::Accent).add_modifier(Modifier::BOLD),
        ));
    let body = block.inner(area);
    block.render(area, buf);
    body
}

fn scrolled(lines: &[Line<'static>], body: Rect, scroll: u16, buf: &mut Buffer) {
    let max = lines.len().saturating_sub(usize::from(body.height));
    let top = usize::from(scroll).min(max);
    for (i, line) in lines
        .iter()
        .skip(top)
        .take(usize::from(body.height))
        .enumerate()
    {
        buf.set_line(body.x, body.y + i as u16, line, body.width);
    }
}

fn help(app: &App, area: Rect, scroll: u16, buf: &mut Buffer) {
    let theme = app.theme();
    let rect = centered(area, 70, area.height.saturating_sub(4));
    let body = frame(app, rect, " Help · Esc closes ".into(), buf);
    let head = theme.fg(Token::Accent).add_modifier(Modifier::BOLD);
    let key_style = theme.fg(Token::Tool);
    let mut lines = vec![StyledLine::plain("Keys", head)];
    const KEY_COLUMN: usize = 24;
    let row = |keys: String, what: &str| -> Vec<StyledLine> {
        let pad = " ".repeat(KEY_COLUMN);
        let description = StyledLine {
            spans: vec![Span::styled(what.to_owned(), theme.text())],
            first_prefix: vec![Span::raw(pad.clone())],
            rest_prefix: vec![Span::raw(pad)],
            ..StyledLine::default()
        };
        let keys = format!("  {keys}");
        if str_width(&keys) + 1 < KEY_COLUMN {
            let mut line = description;
            line.first_prefix = vec![Span::styled(format!("{keys:<KEY_COLUMN$}"), key_style)];
            vec![line]
        } else {
            // A long key list gets its own line; the description goes below it.
            vec![StyledLine::plain(keys, key_style), description]
        }
    };
    for (action, _, what) in ACTIONS {
        let keys: Vec<String> = app
            .config
            .keymap
            .chords(action)
            .iter()
            .map(|c| c.label())
            .collect();
        lines.extend(row(keys.join(", "), what));
    }
    lines.extend(row("?".into(), "this help (empty message)"));
    lines.push(StyledLine::blank());
    lines.push(StyledLine::plain("In the panes", head));
    lines.extend(row(
        "Up/Down, Home/End".into(),
        "chat: scroll · tools: select a call",
    ));
    lines.extend(row(
        "Enter".into(),
        "tools: open the call's arguments and result",
    ));
    lines.extend(row(
        "x / p / d".into(),
        "dashboard: cancel subagent · pause/resume job · delete job",
    ));
    lines.extend(row(
        "Up/Down".into(),
        "message: history (on the first/last line)",
    ));
    lines.extend(row(
        "@path".into(),
        "message: complete a workspace file with Tab",
    ));
    lines.push(StyledLine::blank());
    lines.push(StyledLine::plain("Commands", head));
    for (name, args, what) in COMMANDS {
        lines.extend(row(format!("{name} {args}"), what));
    }
    scrolled(&wrap(&lines, body.width), body, scroll, buf);
}

fn detail(app: &App, area: Rect, call_id: &str, scroll: u16, buf: &mut Buffer) {
    let theme = app.theme();
    let Some(node) = app.calls.node(call_id) else {
        return;
    };
    let rect = centered(area, 80, area.height.saturating_sub(4));
    let (symbol, _) = status_symbol(node.status);
    let timing = node
        .elapsed(app.now)
        .map(format_duration)
        .unwrap_or_default();
    let title = format!(" {symbol} {} {timing} · ↑↓ scroll · Esc closes ", node.name);
    let body = frame(app, rect, title, buf);
    let head = theme.fg(Token::Accent).add_modifier(Modifier::BOLD);
    let mut lines = vec![StyledLine::plain("Arguments", head)];
    let args = pretty_json(&node.args);
    let key = highlight_key(&theme.syntax_theme, "json", &args);
    let highlighted = app.highlights.get(&key);
    for (i, text) in args.split('\n').enumerate() {
        let spans = match highlighted.and_then(|h| h.get(i)) {
            Some(pieces) => pieces
                .iter()
                .map(|(s, t)| Span::styled(t.clone(), *s))
                .collect(),
            None => vec![Span::styled(text.to_owned(), theme.fg(Token::Code))],
        };
        lines.push(StyledLine {
            spans,
            wrap: WrapKind::Char,
            ..StyledLine::default()
        });
    }
    lines.push(StyledLine::blank());
    let (label, body_text, style) = match (&node.result, node.status) {
        (Some(r), _) => (
            if r.is_error {
                "Result (error)"
            } else {
                "Result"
            },
            r.content.clone(),
            if r.is_error {
                theme.fg(Token::Error)
            } else {
                theme.text()
            },
        ),
        (None, CallStatus::Running) => (
            "Output so far",
            node.live.iter().cloned().collect::<Vec<_>>().join("\n"),
            theme.text(),
        ),
        (None, _) => ("Result", "(none yet)".to_owned(), theme.dim()),
    };
    lines.push(StyledLine::plain(label, head));
    for text in clean(&body_text).split('\n') {
        lines.push(StyledLine {
            spans: vec![Span::styled(text.to_owned(), style)],
            wrap: WrapKind::Char,
            ..StyledLine::default()
        });
    }
    if let Some(details) = node
        .result
        .as_ref()
        .map(|r| &r.details)
        .filter(|d| !d.is_null())
    {
        lines.push(StyledLine::blank());
        lines.push(StyledLine::plain("Details", head));
        for text in clean(&pretty_json(details)).split('\n') {
            lines.push(StyledLine {
                spans: vec![Span::styled(text.to_owned(), theme.dim())],
                wrap: WrapKind::Char,
                ..StyledLine::default()
            });
        }
    }
    scrolled(&wrap(&lines, body.width), body, scroll, buf);
}

fn confirm(app: &App, area: Rect, id: &str, name: &str, buf: &mut Buffer) {
    let theme = app.theme();
    let rect = centered(area, 50, 5);
    let body = frame(app, rect, " Delete cron job? ".into(), buf);
    let lines = vec![
        StyledLine::plain(
            format!("Delete \"{name}\" ({id})? It will not fire again."),
            theme.text(),
        ),
        StyledLine::plain("y/Enter: delete · any other key: keep", theme.dim()),
    ];
    scrolled(&wrap(&lines, body.width), body, 0, buf);
}

fn approval(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    let Some(request) = app.approvals.front() else {
        return;
    };
    let count = app.approvals.len();
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
    let body = frame(app, rect, title, buf);
    scrolled(&rows, body, 0, buf);
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
