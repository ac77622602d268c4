//! The request inspector overlay: `/inspect` and F3 ask for the log; the list, a
//! request's breakdown, its body (folded per message, unfolded with Enter, searched
//! with `/`) and its diff (a changed system prompt in the warning colour); Esc goes
//! back to the list, then closes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::Usage;
use claw_tui::inspect::{RequestLog, write_calls};
use claw_tui::llm::{FinishedCall, SentCall};
use claw_tui::theme::{Theme, Token};
use claw_tui::tui::{App, Effect, InspectTab, Msg, inspector};
use crossterm::event::KeyCode;
use serde_json::{Value, json};
use std::sync::Arc;

fn body(system: &str, messages: &[Value]) -> String {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 64000,
        "stream": true,
        "system": [{"type": "text", "text": system}],
        "messages": messages,
        "tools": [
            {"name": "read_file", "description": "Read a file of the workspace.",
             "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
            {"name": "exec", "description": "Run a command.",
             "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}},
        ],
    })
    .to_string()
}

fn call(
    id: u64,
    agent: &str,
    turn: u32,
    body: String,
    input: u64,
    cached: u64,
) -> (SentCall, FinishedCall) {
    let sent = SentCall {
        id,
        agent: agent.into(),
        turn,
        format: claw_tui::llm::WireFormat::Anthropic,
        provider: "Anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        url: "https://api.anthropic.com/v1/messages".into(),
        headers: vec![("x-api-key".into(), "[redacted]".into())],
        body: body.into(),
        time_ms: 0,
    };
    let finished = FinishedCall {
        id,
        status: Some(200),
        usage: Some(Usage {
            input,
            output: 40,
            cache_read: cached,
            ..Usage::default()
        }),
        stop_reason: "stop".into(),
        ttft_ms: Some(420 + id * 10),
        duration_ms: 1_800 + id * 100,
        ..FinishedCall::default()
    };
    (sent, finished)
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
}

/// Three requests: the main agent's, a subagent's, and the main agent's next one, whose
/// system prompt changed (the date moved on).
fn log() -> Arc<RequestLog> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.requests.jsonl");
    let system = "You are claw-tui.\n\nToday's date: 2026-12-01";
    let first = vec![user("Why does the merge drop the last range?")];
    let mut second = first.clone();
    second.push(assistant(
        "The loop stops one short: `..len - 1` skips the last pair.",
    ));
    second.push(user("Fix it and add a test."));
    write_calls(
        &path,
        [
            call(0, "main", 1, body(system, &first), 900, 0),
            call(
                1,
                "subagent-1",
                1,
                body("You are a subagent.", &[user("count the files")]),
                300,
                0,
            ),
            call(
                2,
                "main",
                2,
                body(&system.replace("01", "02"), &second),
                200,
                800,
            ),
        ],
    );
    Arc::new(RequestLog::load(&path).unwrap())
}

fn open(app: &mut App, at: Option<usize>) {
    app.update(Msg::Inspector(inspector::Msg::Loaded {
        log: Ok(log()),
        open: at,
    }));
}

#[test]
fn inspect_and_its_key_ask_the_runtime_for_the_log() {
    let mut app = app();
    let effects = app.update(key(KeyCode::F(3)));
    assert!(
        effects.contains(&Effect::Inspector(inspector::Effect::Load { open: None })),
        "{effects:?}"
    );
    typed(&mut app, "/inspect");
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        effects.contains(&Effect::Inspector(inspector::Effect::Load { open: None })),
        "{effects:?}"
    );
    // A log that cannot be read is said in the chat.
    app.update(Msg::Inspector(inspector::Msg::Loaded {
        log: Err("requests are not recorded".into()),
        open: None,
    }));
    assert!(app.inspector().is_none());
}

#[test]
fn the_list_then_a_requests_breakdown() {
    let mut app = app();
    open(&mut app, None);
    insta::assert_snapshot!("inspect_list", draw(&mut app).backend());
    app.update(key(KeyCode::Enter));
    assert_eq!(app.inspector().unwrap().opened(), Some(2));
    insta::assert_snapshot!("inspect_breakdown", draw(&mut app).backend());
    app.update(key(KeyCode::Esc));
    assert_eq!(app.inspector().unwrap().opened(), None, "back to the list");
    app.update(key(KeyCode::Esc));
    assert!(app.inspector().is_none(), "closed");
}

#[test]
fn the_body_folds_per_message_and_is_searchable() {
    let mut app = app();
    open(&mut app, Some(2));
    app.update(key(KeyCode::Char('2')));
    assert_eq!(app.inspector().unwrap().tab(), Some(InspectTab::Body));
    insta::assert_snapshot!("inspect_body_folded", draw(&mut app).backend());
    typed(&mut app, "/");
    typed(&mut app, "one short");
    app.update(key(KeyCode::Enter));
    insta::assert_snapshot!("inspect_body_found", draw(&mut app).backend());
}

#[test]
fn the_diff_shows_a_changed_system_prompt_as_cache_busting() {
    let mut app = app();
    open(&mut app, Some(2));
    app.update(key(KeyCode::Char('3')));
    let terminal = draw(&mut app);
    insta::assert_snapshot!("inspect_diff", terminal.backend());
    let buffer = terminal.backend().buffer();
    let warning = Theme::fallback().fg(Token::Warning).fg;
    let row = (0..buffer.area.height)
        .find(|&y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
                .contains("⚠ system")
        })
        .expect("a warning line");
    let x = (0..buffer.area.width)
        .find(|&x| buffer[(x, row)].symbol() == "⚠")
        .unwrap();
    assert_eq!(buffer[(x, row)].fg, warning.unwrap());
}
