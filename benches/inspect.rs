//! Opening the request inspector on a 200-turn session (266 requests, every third turn
//! with a tool call and its 2 kB result): reading and rebuilding the log, the list's
//! first frame, and opening the latest request (breakdown, diff, body) and drawing it.
//! Must stay under 50 ms.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::agent::Usage;
use claw_tui::inspect::{RequestLog, write_calls};
use claw_tui::llm::{FinishedCall, SentCall};
use claw_tui::tui::{App, AppConfig, Msg, inspector, view};
use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

const TURNS: usize = 200;

fn body(messages: &[Value]) -> String {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 64000,
        "stream": true,
        "system": [{"type": "text", "text": "You are claw-tui. ".repeat(200)}],
        "messages": messages,
        "tools": (0..12).map(|i| json!({
            "name": format!("tool_{i}"),
            "description": "Does one thing well. ".repeat(20),
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        })).collect::<Vec<_>>(),
    })
    .to_string()
}

fn write_session(path: &Path) {
    let mut messages = Vec::new();
    let mut calls = Vec::new();
    let mut id = 0;
    let mut send = |messages: &[Value], turn: usize, calls: &mut Vec<(SentCall, FinishedCall)>| {
        let sent = SentCall {
            id,
            agent: "main".into(),
            turn: u32::try_from(turn).unwrap(),
            format: claw_tui::llm::WireFormat::Anthropic,
            provider: "Anthropic".into(),
            model: "claude-sonnet-4-5".into(),
            url: "https://api.anthropic.com/v1/messages".into(),
            headers: vec![("x-api-key".into(), "[redacted]".into())],
            body: body(messages).into(),
            time_ms: 0,
        };
        let finished = FinishedCall {
            id,
            status: Some(200),
            usage: Some(Usage {
                input: 100,
                cache_read: 1_000 * id,
                output: 80,
                ..Usage::default()
            }),
            stop_reason: "stop".into(),
            ttft_ms: Some(400),
            duration_ms: 2_000,
            ..FinishedCall::default()
        };
        id += 1;
        calls.push((sent, finished));
    };
    for turn in 1..=TURNS {
        messages.push(json!({"role": "user", "content": format!("Turn {turn}: check the merge of ranges that touch.")}));
        if turn % 3 == 0 {
            send(&messages, turn, &mut calls);
            messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("c{turn}"), "name": "tool_1", "input": {"path": "src/ranges.rs"}}]}));
            messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("c{turn}"), "content": "fn merge() {}\n".repeat(150)}]}));
        }
        send(&messages, turn, &mut calls);
        messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("Turn {turn}: the loop now sorts the ranges first, so touching ones merge.")}]}));
    }
    write_calls(path, calls);
}

fn key(code: KeyCode) -> Msg {
    Msg::Term(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn open(path: &Path, enter: bool) -> Terminal<TestBackend> {
    let log = Arc::new(RequestLog::load(path).unwrap());
    let mut app = App::new(AppConfig::new("bench", "bench"));
    app.update(Msg::Term(Event::Resize(160, 48)));
    app.update(Msg::Inspector(inspector::Msg::Loaded {
        log: Ok(log),
        open: None,
    }));
    if enter {
        app.update(key(KeyCode::Enter));
    }
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    terminal.draw(|frame| view(&app, frame)).unwrap();
    terminal
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.requests.jsonl");
    write_session(&path);
    let log = RequestLog::load(&path).unwrap();
    assert_eq!(log.len(), TURNS + TURNS / 3);
    eprintln!(
        "log: {} requests, {} bytes on disk, {} bytes of bodies",
        log.len(),
        std::fs::metadata(&path).unwrap().len(),
        log.requests.iter().map(|r| r.sent.bytes).sum::<usize>()
    );
    let mut group = c.benchmark_group("inspect_200_turns");
    group.bench_function("load_log", |b| b.iter(|| RequestLog::load(&path).unwrap()));
    group.bench_function("open_list_and_draw", |b| b.iter(|| open(&path, false)));
    group.bench_function("open_latest_request_and_draw", |b| {
        b.iter(|| open(&path, true))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
