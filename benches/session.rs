//! Session store: appending 10,000 messages (with an fsync every turn of 10 messages),
//! loading a 10,000-message session back, and resuming it in the client: load, rebuild
//! the chat and the tool tree, and draw the last screen at 120×40.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::agent::{AssistantMessage, Block, Message};
use claw_tui::session::{self, Entry, SessionWriter};
use claw_tui::tui::msg::LoadedSession;
use claw_tui::tui::{App, AppConfig, Msg, view};
use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::Event;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const MESSAGES: usize = 10_000;

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

async fn write_session(data: &std::path::Path, ws: &std::path::Path) -> std::path::PathBuf {
    let writer = SessionWriter::create(data, ws, "bench", "bench").unwrap();
    for i in 0..MESSAGES {
        writer.append(&Entry::Message {
            timestamp: 0,
            message: message(i),
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
            |(data, ws)| runtime.block_on(write_session(data.path(), ws.path())),
            criterion::BatchSize::PerIteration,
        );
    });
    let (data, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let path = runtime.block_on(write_session(data.path(), ws.path()));
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
            app.update(Msg::SessionLoaded(Box::new(LoadedSession {
                id: Some(data.id().to_owned()),
                messages: data.messages,
                resumed: true,
                ..LoadedSession::default()
            })));
            app.update(Msg::Frame);
            let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
            terminal.draw(|frame| view(&app, frame)).unwrap();
            terminal
        });
    });
    group.finish();
}

criterion_group!(benches, sessions);
criterion_main!(benches);
