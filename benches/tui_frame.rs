//! Cost of a frame of the chat pane at 200×50 with 10 and with 10,000 messages (about
//! 2 MB of markdown with code), and of typing one character in that state. Both must
//! stay flat: the frame cost may not grow with the transcript.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::agent::{AgentEvent, AssistantMessage, Block, Message, StopReason};
use claw_tui::tui::highlight::Sets;
use claw_tui::tui::{App, AppConfig, Effect, Msg, view};
use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::{Duration, Instant};

const WIDTH: u16 = 200;
const HEIGHT: u16 = 50;

fn answer(i: usize) -> String {
    format!(
        "## Step {i}\n\nThe function below returns **{i}**; it is *pure* and uses `u64` \
         arithmetic (wrapping, so it never panics), see \
         [the docs](https://doc.rust-lang.org/std/primitive.u64.html).\n\n\
         ```rust\nfn step_{i}(x: u64) -> u64 {{\n    x.wrapping_mul({i}).rotate_left(7)\n}}\n```\n\n\
         - checked: yes\n- cost: {i} ns\n- reviewed: by the benchmark harness\n"
    )
}

fn message_events(i: usize) -> Vec<AgentEvent> {
    let message = if i.is_multiple_of(2) {
        Message::user(format!(
            "Please explain step {i} and show the code for it, with the reasoning."
        ))
    } else {
        Message::Assistant(AssistantMessage {
            content: vec![Block::Text { text: answer(i) }],
            stop_reason: StopReason::Stop,
            model: "bench".into(),
            ..AssistantMessage::default()
        })
    };
    vec![
        AgentEvent::MessageStart {
            message: message.clone(),
        },
        AgentEvent::MessageEnd { message },
    ]
}

/// An app with `count` messages, laid out and with the visible code highlighted.
fn app_with(count: usize, sets: &Sets) -> (App, usize) {
    let mut app = App::new(AppConfig {
        context_window: Some(200_000),
        workspace: "~/project".into(),
        ..AppConfig::new("demo", "demo (offline)")
    });
    app.update(Msg::Term(Event::Resize(WIDTH, HEIGHT)));
    let mut bytes = 0;
    for i in 0..count {
        for event in message_events(i) {
            if let AgentEvent::MessageEnd { message } = &event {
                bytes += message.preview_text().len();
            }
            app.update(Msg::Agent(event));
        }
    }
    settle(&mut app, sets);
    (app, bytes)
}

/// Runs frames until no highlight is missing (what the worker thread would do).
fn settle(app: &mut App, sets: &Sets) {
    loop {
        let requests: Vec<_> = app
            .update(Msg::Frame)
            .into_iter()
            .filter_map(|e| match e {
                Effect::Highlight(r) => Some(r),
                _ => None,
            })
            .collect();
        if requests.is_empty() {
            return;
        }
        for r in requests {
            let lines = sets.highlight(&r.lang, &r.code, &r.theme);
            app.update(Msg::Highlighted { key: r.key, lines });
        }
    }
}

fn frame(app: &mut App, terminal: &mut Terminal<TestBackend>) {
    app.update(Msg::Frame);
    terminal.draw(|f| view(app, f)).unwrap();
}

fn key(code: KeyCode) -> Msg {
    Msg::Term(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn bench(c: &mut Criterion) {
    let sets = Sets::load();
    for count in [10, 10_000] {
        let (mut app, bytes) = app_with(count, &sets);
        eprintln!(
            "{count} messages: {:.2} MB of text, {} rows at {WIDTH} columns",
            bytes as f64 / 1e6,
            app.chat().transcript().total_rows()
        );
        let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
        // A frame: caches brought up to date, every cell drawn by the view, buffers diffed.
        c.bench_function(&format!("chat frame 200x50, {count} messages"), |b| {
            b.iter(|| frame(&mut app, &mut terminal))
        });
        // The same after the screen was cleared, so every cell also goes to the backend.
        c.bench_function(&format!("full repaint 200x50, {count} messages"), |b| {
            b.iter(|| {
                terminal.clear().unwrap();
                frame(&mut app, &mut terminal);
            })
        });
        c.bench_function(&format!("type one character, {count} messages"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    app.update(key(KeyCode::Char('a')));
                    frame(&mut app, &mut terminal);
                    total += start.elapsed();
                    // Undone outside the measurement, so every iteration types into the same state.
                    app.update(key(KeyCode::Backspace));
                    frame(&mut app, &mut terminal);
                }
                total
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
