//! Helpers for the TUI tests: an app at a known size, keys, agent events, rows.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

pub mod scene;

use claw_tui::agent::AgentEvent;
use claw_tui::runtime::SubagentStatus;
use claw_tui::tools::exec::ApprovalRequest;
use claw_tui::tui::{App, AppConfig, CronRow, CronRunStatus, Msg, SubagentRow};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A fixed wall-clock time (2023-11-14 22:13:20 UTC) for dashboard times.
pub fn epoch() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_700_000_000)
}

/// The configuration of the TUI tests: the demo provider, a 200k context window, a
/// fixed workspace, UTC clock times and the side panes always shown (the tests of
/// `panes = "auto"` set it themselves).
pub fn config() -> AppConfig {
    AppConfig {
        context_window: Some(200_000),
        workspace: "~/project".into(),
        time_zone: chrono::FixedOffset::east_opt(0),
        panes: claw_tui::tui::layout::PaneMode::Shown,
        ..AppConfig::new("demo", "demo (offline)")
    }
}

/// An app at 120×40 with the test configuration.
pub fn app() -> App {
    sized(120, 40)
}

/// An app of the given size.
pub fn sized(width: u16, height: u16) -> App {
    let mut app = App::new(config());
    app.set_clock(std::time::Instant::now(), epoch());
    app.update(Msg::Term(Event::Resize(width, height)));
    app
}

/// A key without modifiers.
pub fn key(code: KeyCode) -> Msg {
    with(code, KeyModifiers::NONE)
}

/// A key with modifiers.
pub fn with(code: KeyCode, modifiers: KeyModifiers) -> Msg {
    Msg::Term(Event::Key(KeyEvent::new(code, modifiers)))
}

/// Ctrl + a letter.
pub fn ctrl(c: char) -> Msg {
    with(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Types text into the app key by key.
pub fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        app.update(key(KeyCode::Char(c)));
    }
}

/// An agent event.
pub fn agent(event: AgentEvent) -> Msg {
    Msg::Agent(event)
}

/// An exec approval request.
pub fn request(id: &str, command: &str) -> ApprovalRequest {
    ApprovalRequest {
        id: id.into(),
        tool_call_id: format!("call-{id}"),
        tool_name: "exec".into(),
        args: json!({"command": command, "timeout": 30}),
        subagent: None,
    }
}

/// A working subagent.
pub fn subagent(id: &str) -> SubagentRow {
    SubagentRow {
        id: id.into(),
        label: "count lines".into(),
        status: SubagentStatus::Running,
        turns: 3,
        tokens: 12_400,
        elapsed: Duration::from_secs(95),
        current_tool: Some("exec".into()),
    }
}

/// A cron job firing in five minutes (or paused).
pub fn cron(id: &str, paused: bool) -> CronRow {
    CronRow {
        id: id.into(),
        name: format!("{id} check build"),
        schedule: "every 300s".into(),
        next_fire: Some(epoch() + Duration::from_secs(300)),
        paused,
        done: false,
        last_status: if paused {
            CronRunStatus::Failed
        } else {
            CronRunStatus::Ok
        },
    }
}

/// The text of every row of the chat's transcript, top to bottom.
pub fn chat_rows(app: &App) -> Vec<String> {
    let total = app.chat().transcript().total_rows();
    app.chat()
        .transcript()
        .rows(0, total)
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}
