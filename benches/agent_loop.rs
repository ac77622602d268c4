//! Throughput of the agent loop: a scripted provider streams 100,000 text deltas through
//! the loop and the `Agent` facade to one subscriber.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

// The tests' scripted provider; the bench uses only its streaming part.
#[allow(dead_code)]
#[path = "../tests/it/support/scripted.rs"]
mod scripted;

use claw_tui::agent::{Agent, AgentEvent, Block, MessageDelta, StopReason};
use claw_tui::llm::LlmEvent;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use scripted::{Reply, ScriptedProvider, message};

const DELTAS: usize = 100_000;

fn script() -> Reply {
    let mut events = Vec::with_capacity(DELTAS + 2);
    events.push(LlmEvent::Start);
    for i in 0..DELTAS {
        events.push(LlmEvent::Delta(MessageDelta::Text {
            index: 0,
            text: format!("tok{i} "),
        }));
    }
    let text = "x".repeat(DELTAS);
    events.push(LlmEvent::Done(message(
        vec![Block::Text { text }],
        StopReason::Stop,
    )));
    Reply::Events(events)
}

/// Runs one prompt and counts the events the subscriber receives.
async fn run(reply: Reply) -> usize {
    let agent = Agent::new(ScriptedProvider::new(vec![reply]), "scripted");
    let mut rx = agent.subscribe(None);
    agent.prompt("go").unwrap();
    let mut received = 0;
    while let Some(event) = rx.recv().await {
        received += 1;
        if matches!(event, AgentEvent::AgentEnd { .. }) {
            break;
        }
    }
    assert!(received > DELTAS);
    received
}

fn agent_loop(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("agent_loop");
    group.sample_size(10);
    group.throughput(Throughput::Elements(DELTAS as u64));
    group.bench_function("stream_100k_deltas_to_subscriber", |b| {
        b.to_async(&runtime)
            .iter_batched(script, run, BatchSize::PerIteration);
    });
    group.finish();
}

criterion_group!(benches, agent_loop);
criterion_main!(benches);
