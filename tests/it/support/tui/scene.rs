//! Building scenes for snapshots: a clock for deterministic durations, messages, tool
//! calls, and drawing with highlights answered as the worker would.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::{agent, epoch};
use claw_tui::agent::{AgentEvent, AssistantMessage, Block, Message, StopReason, ToolResult};
use claw_tui::tui::highlight::Sets;
use claw_tui::tui::{App, Effect, Msg, view};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub fn sets() -> &'static Sets {
    static SETS: OnceLock<Sets> = OnceLock::new();
    SETS.get_or_init(Sets::load)
}

/// What `terminal` shows, as plain text: a row a line.
pub fn screen_text(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    let width = usize::from(buffer.area.width);
    buffer
        .content
        .chunks(width)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Prepares frames until the app is settled (answering highlight requests as the
/// worker would, and letting a just-finished answer get its full rendering), and draws.
pub fn draw(app: &mut App) -> Terminal<TestBackend> {
    for _ in 0..4 {
        // The app's own clock, so durations in the snapshot do not depend on real time.
        let now = app.now();
        let effects = app.update_at(Msg::Frame, now);
        let requests: Vec<_> = effects
            .into_iter()
            .filter_map(|e| match e {
                Effect::Highlight(r) => Some(r),
                _ => None,
            })
            .collect();
        if requests.is_empty() && !app.needs_draw() {
            break;
        }
        for r in requests {
            let lines = sets().highlight(&r.lang, &r.code, &r.theme);
            app.update(Msg::Highlighted { key: r.key, lines });
        }
    }
    let mut terminal =
        Terminal::new(TestBackend::new(app.size().width, app.size().height)).unwrap();
    terminal.draw(|frame| view(app, frame)).unwrap();
    terminal
}

/// A clock for deterministic durations.
pub struct Clock {
    pub t0: Instant,
}

impl Clock {
    pub fn new(app: &mut App) -> Self {
        let t0 = Instant::now();
        app.set_clock(t0, epoch());
        Self { t0 }
    }

    pub fn at(&self, app: &mut App, ms: u64, msg: Msg) {
        app.update_at(msg, self.t0 + Duration::from_millis(ms));
    }
}

pub fn user(text: &str) -> Vec<AgentEvent> {
    let m = Message::user(text);
    vec![
        AgentEvent::MessageStart { message: m.clone() },
        AgentEvent::MessageEnd { message: m },
    ]
}

pub fn assistant(blocks: Vec<Block>, stop: StopReason) -> AssistantMessage {
    AssistantMessage {
        content: blocks,
        stop_reason: stop,
        model: "demo".into(),
        ..AssistantMessage::default()
    }
}

pub fn call(id: &str, name: &str, args: Value) -> Block {
    Block::ToolCall {
        id: id.into(),
        name: name.into(),
        args,
    }
}

pub fn text(t: &str) -> Block {
    Block::Text { text: t.into() }
}

/// A finished assistant message announcing tool calls.
pub fn answer(clock: &Clock, app: &mut App, ms: u64, blocks: Vec<Block>, stop: StopReason) {
    let m = Message::Assistant(assistant(blocks, stop));
    clock.at(
        app,
        ms,
        agent(AgentEvent::MessageStart {
            message: Message::Assistant(AssistantMessage::default()),
        }),
    );
    clock.at(app, ms, agent(AgentEvent::MessageEnd { message: m }));
}

pub fn start(clock: &Clock, app: &mut App, ms: u64, id: &str, name: &str, args: Value) {
    let event = AgentEvent::ToolExecutionStart {
        tool_call_id: id.into(),
        tool_name: name.into(),
        args,
    };
    clock.at(app, ms, agent(event));
}

pub fn end(
    clock: &Clock,
    app: &mut App,
    ms: u64,
    id: &str,
    name: &str,
    content: &str,
    is_error: bool,
) {
    let result = ToolResult {
        content: content.into(),
        details: Value::Null,
        is_error,
        ..ToolResult::default()
    };
    let event = AgentEvent::ToolExecutionEnd {
        tool_call_id: id.into(),
        tool_name: name.into(),
        result,
        is_error,
    };
    clock.at(app, ms, agent(event));
}

pub fn run_start(clock: &Clock, app: &mut App, prompt: &str) {
    clock.at(app, 0, agent(AgentEvent::AgentStart));
    clock.at(app, 0, agent(AgentEvent::TurnStart { turn: 1 }));
    for e in user(prompt) {
        clock.at(app, 0, agent(e));
    }
}

/// Partial output of a running call (`{"stdout": text}`, as `exec` sends it).
pub fn output(clock: &Clock, app: &mut App, ms: u64, id: &str, text: &str) {
    let event = AgentEvent::ToolExecutionUpdate {
        tool_call_id: id.into(),
        tool_name: "exec".into(),
        partial: serde_json::json!({ "stdout": text }),
    };
    clock.at(app, ms, agent(event));
}

/// A call ends with `result`.
pub fn end_with(clock: &Clock, app: &mut App, ms: u64, id: &str, name: &str, result: ToolResult) {
    let is_error = result.is_error;
    let event = AgentEvent::ToolExecutionEnd {
        tool_call_id: id.into(),
        tool_name: name.into(),
        result,
        is_error,
    };
    clock.at(app, ms, agent(event));
}

/// The result `exec` gives for `out` and exit code `code`.
pub fn exec_result(out: &str, code: i64) -> ToolResult {
    ToolResult {
        content: format!("{out}[exit code: {code}]"),
        details: serde_json::json!({"exit_code": code, "cancelled": false}),
        is_error: code != 0,
        images: Vec::new(),
    }
}

/// The run ends.
pub fn run_end(clock: &Clock, app: &mut App, ms: u64) {
    clock.at(app, ms, agent(AgentEvent::AgentEnd { messages: vec![] }));
}

/// The app resized (at its own clock's time).
pub fn resize(app: &mut App, width: u16, height: u16) {
    let now = app.now();
    app.update_at(
        Msg::Term(crossterm::event::Event::Resize(width, height)),
        now,
    );
}

/// The screen as lines of text.
pub fn screen(app: &mut App) -> Vec<String> {
    let terminal = draw(app);
    let buffer = terminal.backend().buffer().clone();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect()
        })
        .collect()
}
