//! Session store: appending 10,000 messages (with an fsync every turn of 10 messages),
//! loading a 10,000-message session back, resuming it in the client (load, rebuild the
//! chat and the tool tree, draw the last screen at 120×40), and the month-long session
//! of issue 12: 20,000 messages, ~35 MB (questions, tool calls, tool results of a few
//! KB, markdown answers with code), loaded whole, its newest 200 messages read from the
//! end, found by `-c` among the workspace's sessions, and resumed in the client (its
//! last screen, then 100 pages up).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::agent::{AssistantMessage, Block, Message, StopReason, ToolResultMessage};
use claw_tui::session::{self, Entry, SessionWriter};
use claw_tui::tui::sessions::{self, LoadedSession};
use claw_tui::tui::{App, AppConfig, Msg, view};
use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

const MESSAGES: usize = 10_000;
const LONG_MESSAGES: usize = 20_000;

fn message(i: usize) -> Message {
    if i.is_multiple_of(2) {
        Message::user(format!("question {i}: how does the loop handle steering?"))
    } else {
        let mut a = AssistantMessage::empty("bench");
        a.content.push(Block::Text {
            text: format!("Answer {i}.\n\n```rust\nfn main() {{ println!(\"{i}\"); }}\n```\n")
                .repeat(3),
        });
        Message::Assistant(a)
    }
}

const PROSE: &str = "The loop reads the queue before each call, so a steering message sent \
    while a tool runs is picked up at the next boundary; the remaining calls are skipped and \
    each still gets its start and end events. ";
const CODE: &str = "```rust\nfn fold(state: &mut State, event: &Event) {\n    match event {\n        \
    Event::Delta(text) => state.text.push_str(text),\n        Event::End => state.done = true,\n    \
    }\n}\n```\n";

/// One message of the long session, in groups of four: question, tool call, its
/// result, answer (the shape `scripts/measure_resume.py` writes).
fn long_message(i: usize) -> Message {
    match i % 4 {
        0 => Message::user(format!("Question {i}: {PROSE}")),
        1 => {
            let mut a = AssistantMessage::empty("demo (offline)");
            a.stop_reason = StopReason::ToolUse;
            a.content = vec![
                Block::Text {
                    text: format!("Let me look ({i})."),
                },
                Block::ToolCall {
                    id: format!("call-{i}"),
                    name: "list_dir".into(),
                    args: json!({"path": format!("src/module_{:03}", i % 100)}),
                },
            ];
            Message::Assistant(a)
        }
        2 => Message::ToolResult(ToolResultMessage {
            tool_call_id: format!("call-{}", i - 1),
            tool_name: "list_dir".into(),
            content: (0..60)
                .map(|j| format!("src/module_{j:03}/file_{j:03}.rs\t{} bytes\n", 1200 + j * 7))
                .collect(),
            details: json!({"entries": 60, "truncated": false}),
            is_error: false,
            images: Vec::new(),
            timestamp: 0,
        }),
        _ => {
            let mut a = AssistantMessage::empty("demo (offline)");
            a.content.push(Block::Text {
                text: format!("## Answer {i}\n\n{}{}", PROSE.repeat(14), CODE.repeat(3)),
            });
            Message::Assistant(a)
        }
    }
}

async fn write_session(
    data: &std::path::Path,
    ws: &std::path::Path,
    count: usize,
    make: fn(usize) -> Message,
) -> std::path::PathBuf {
    let writer = SessionWriter::create(data, ws, "bench", "bench").unwrap();
    for i in 0..count {
        writer.append(&Entry::Message {
            timestamp: i as u64,
            message: make(i),
        });
        if (i + 1).is_multiple_of(10) {
            writer.sync();
        }
    }
    let path = writer.path().to_path_buf();
    writer.close().await;
    path
}

fn sessions(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("session");
    group.sample_size(10);
    group.bench_function("append_10k_messages_fsync_per_turn", |b| {
        b.iter_batched(
            || (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()),
            |(data, ws)| runtime.block_on(write_session(data.path(), ws.path(), MESSAGES, message)),
            criterion::BatchSize::PerIteration,
        );
    });
    let (data, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let path = runtime.block_on(write_session(data.path(), ws.path(), MESSAGES, message));
    group.bench_function("load_10k_message_session", |b| {
        b.iter(|| assert_eq!(session::load(&path).unwrap().messages.len(), MESSAGES));
    });
    group.bench_function("resume_10k_message_session_to_last_screen", |b| {
        b.iter(|| {
            let data = session::load(&path).unwrap();
            let mut app = App::new(AppConfig {
                context_window: Some(200_000),
                workspace: "~/project".into(),
                ..AppConfig::new("demo", "demo (offline)")
            });
            app.update(Msg::Term(Event::Resize(120, 40)));
            app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
                LoadedSession {
                    id: Some(data.id().to_owned()),
                    messages: data.messages.into(),
                    resumed: true,
                    ..LoadedSession::default()
                },
            ))));
            app.update(Msg::Frame);
            let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
            terminal.draw(|frame| view(&app, frame)).unwrap();
            terminal
        });
    });

    // The month-long session, beside a few short ones as a workspace would have.
    let (data, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for _ in 0..5 {
        runtime.block_on(write_session(data.path(), ws.path(), 40, message));
    }
    let long = runtime.block_on(write_session(
        data.path(),
        ws.path(),
        LONG_MESSAGES,
        long_message,
    ));
    let size = std::fs::metadata(&long).unwrap().len();
    eprintln!(
        "long session: {LONG_MESSAGES} messages, {:.1} MB",
        size as f64 / 1e6
    );
    group.bench_function("load_20k_message_35mb_session", |b| {
        b.iter(|| assert_eq!(session::load(&long).unwrap().messages.len(), LONG_MESSAGES));
    });
    group.bench_function("load_newest_200_of_20k_messages", |b| {
        b.iter(|| {
            assert_eq!(
                session::load_recent(&long, 200).unwrap().messages.len(),
                200
            )
        });
    });
    // The client's resume path: the history shared by the agent and the chat, the chat
    // and the tool tree rebuilt over it (its newest screens laid out), the last screen
    // drawn at 120×40.
    group.bench_function("resume_20k_message_35mb_session_in_the_client", |b| {
        b.iter(|| resume_in_client(&long, 0));
    });
    // Then 100 pages up: the older entries laid out as the view reaches them.
    group.bench_function("resume_20k_messages_then_100_pages_up", |b| {
        b.iter(|| resume_in_client(&long, 100));
    });
    group.bench_function("find_latest_session_for_continue", |b| {
        b.iter(|| {
            let latest = session::latest_session(data.path(), ws.path()).unwrap();
            assert_eq!(latest.path, long);
        });
    });
    group.bench_function("list_sessions_with_a_35mb_one", |b| {
        b.iter(|| assert_eq!(session::list_sessions(data.path(), ws.path()).len(), 6));
    });
    group.finish();
}

/// Resumes the session in `path` as the client does, draws its last screen, then pages
/// up `pages` times (a frame and a draw each).
fn resume_in_client(path: &std::path::Path, pages: usize) -> Terminal<TestBackend> {
    let data = session::load(path).unwrap();
    let id = data.id().to_owned();
    // What the agent holds: the same messages the chat shows, not a copy.
    let shared: std::sync::Arc<[claw_tui::agent::Message]> = data.messages.into();
    let agent_history = claw_tui::agent::History::shared(shared.clone());
    let mut app = App::new(AppConfig {
        context_window: Some(200_000),
        workspace: "~/project".into(),
        ..AppConfig::new("demo", "demo (offline)")
    });
    app.update(Msg::Term(Event::Resize(120, 40)));
    app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some(id),
            messages: shared,
            resumed: true,
            ..LoadedSession::default()
        },
    ))));
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    app.update(Msg::Frame);
    terminal.draw(|frame| view(&app, frame)).unwrap();
    for _ in 0..pages {
        app.update(Msg::Term(Event::Key(KeyEvent::new(
            KeyCode::PageUp,
            KeyModifiers::NONE,
        ))));
        app.update(Msg::Frame);
        terminal.draw(|frame| view(&app, frame)).unwrap();
    }
    assert_eq!(agent_history.len(), LONG_MESSAGES);
    terminal
}

criterion_group!(benches, sessions);
criterion_main!(benches);
