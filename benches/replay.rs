//! Replay stepping: a 20,000-token answer streamed as 1,000 deltas 2 ms apart (as
//! `scripts/measure_tui.py` streams it) played at ×64, where the whole answer falls due
//! within one 33 ms frame: applying its events and drawing that frame must take less
//! than the frame, or the replay falls behind. Also the ×1 case (about 16 deltas a
//! frame) and going back to the middle (the app rebuilt from the start).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::agent::{
    AgentEvent, AssistantMessage, Block, ContextUsage, Message, MessageDelta, StopReason,
};
use claw_tui::replay::{PlayOptions, Replay, Step, Timeline, play_due};
use claw_tui::tui::AppConfig;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};
use tokio::time::Instant;

const DELTAS: usize = 1_000;
const GAP: Duration = Duration::from_millis(2);
const FRAME: Duration = Duration::from_micros(33_333);

/// About 20 tokens (80 bytes) of markdown; every 25th delta closes or opens code.
fn delta_text(i: usize) -> String {
    match i % 25 {
        0 => format!("\n\n## Part {i}\n\nThe step below is *pure* and `wrapping`.\n\n"),
        5 => "```rust\nfn step(x: u64) -> u64 {\n    x.wrapping_mul(31)\n}\n".into(),
        9 => "```\n\n".into(),
        _ => "Each piece of the answer carries a few words of plain prose, some **bold**. ".into(),
    }
}

fn timeline() -> Timeline {
    let mut steps = vec![
        Step::Agent(AgentEvent::AgentStart),
        Step::Agent(AgentEvent::TurnStart { turn: 1 }),
    ];
    let user = Message::user("write the long answer");
    steps.push(Step::Agent(AgentEvent::MessageStart {
        message: user.clone(),
    }));
    steps.push(Step::Agent(AgentEvent::MessageEnd { message: user }));
    steps.push(Step::Agent(AgentEvent::MessageStart {
        message: Message::Assistant(AssistantMessage::empty("bench")),
    }));
    let mut text = String::new();
    for i in 0..DELTAS {
        let piece = delta_text(i);
        text.push_str(&piece);
        steps.push(Step::Agent(AgentEvent::MessageUpdate {
            delta: MessageDelta::Text {
                index: 0,
                text: piece,
            },
        }));
    }
    let answer = Message::Assistant(AssistantMessage {
        content: vec![Block::Text { text }],
        stop_reason: StopReason::Stop,
        model: "bench".into(),
        ..AssistantMessage::default()
    });
    steps.push(Step::Agent(AgentEvent::MessageEnd {
        message: answer.clone(),
    }));
    steps.push(Step::Agent(AgentEvent::TurnEnd {
        message: answer.clone(),
        tool_results: Vec::new(),
        context_usage: ContextUsage::default(),
    }));
    steps.push(Step::Agent(AgentEvent::AgentEnd {
        messages: vec![answer],
    }));
    let at = (0..steps.len()).map(|i| GAP * i as u32).collect();
    Timeline {
        id: "bench".into(),
        path: "/nonexistent/bench.jsonl".into(),
        steps,
        at,
        turns: vec![1],
        before: 0,
        messages: Vec::new(),
        initial: 0,
        compactions: Vec::new(),
        wall_start: UNIX_EPOCH,
        provider: "demo".into(),
        model: "bench".into(),
        from_messages: false,
        notes: Vec::new(),
        requests: Arc::default(),
    }
}

fn replay(timeline: &Arc<Timeline>, speed: f64, now: Instant) -> Replay {
    let config = AppConfig::new("demo", "bench");
    let options = PlayOptions {
        speed,
        real_time: false,
    };
    Replay::new(timeline.clone(), config, options, (120, 40), now)
}

/// Plays `frames` frames: what fell due in each, then the frame drawn.
fn play_frames(
    replay: &mut Replay,
    terminal: &mut Terminal<TestBackend>,
    start: Instant,
    frames: u32,
) {
    for f in 1..=frames {
        play_due(replay, start + FRAME * f);
        replay.frame();
        replay.take_effects();
        terminal.draw(|frame| replay.draw(frame)).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let timeline = Arc::new(timeline());
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    c.bench_function("replay x64: a 20k-token answer in one frame", |b| {
        b.iter_batched(
            || {
                let start = Instant::now();
                (replay(&timeline, 64.0, start), start)
            },
            |(mut replay, start)| {
                play_frames(&mut replay, &mut terminal, start, 1);
                assert!(replay.player().at_end());
            },
            BatchSize::LargeInput,
        );
    });
    c.bench_function("replay x1: one frame of streaming (16 deltas)", |b| {
        let start = Instant::now();
        let mut at_middle = replay(&timeline, 1.0, start);
        play_frames(&mut at_middle, &mut terminal, start, 30);
        b.iter_batched(
            || at_middle.clone(),
            |mut r| play_frames(&mut r, &mut terminal, start + FRAME * 30, 1),
            BatchSize::LargeInput,
        );
    });
    c.bench_function("replay: going back to the middle (rebuilt)", |b| {
        let start = Instant::now();
        let mut at_end = replay(&timeline, 1.0, start);
        at_end.seek(timeline.steps.len(), start);
        b.iter_batched(
            || at_end.clone(),
            |mut r| {
                r.seek(DELTAS / 2, start);
                r.frame();
                terminal.draw(|frame| r.draw(frame)).unwrap();
            },
            BatchSize::LargeInput,
        );
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
