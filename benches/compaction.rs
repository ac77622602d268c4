//! Compaction without the LLM call, on a 5,000-message history (1,000 turns of a prompt,
//! two tool calls with 4 KiB results each and an answer, about 2.5M tokens): estimating
//! the next request, choosing the cut and building the compacted context the model gets
//! (summary + kept messages); and, separately, writing out the summarised part as the
//! summary requests' chunks.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::agent::compaction::{
    ContextBudget, choose_cut, compacted_view, context_tokens, plan_summary,
};
use claw_tui::agent::{
    AssistantMessage, Block, Compaction, CompactionReason, CompactionSettings, History, Message,
    ToolResultMessage, Usage,
};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;

const TURNS: usize = 1_000;

fn call(turn: usize) -> Message {
    let mut a = AssistantMessage::empty("bench");
    for k in 0..2 {
        a.content.push(Block::ToolCall {
            id: format!("call-{turn}-{k}"),
            name: "read_file".into(),
            args: json!({"path": format!("src/module_{turn}_{k}.rs"), "limit": 400}),
        });
    }
    a.usage = Usage {
        input: 1_000 + turn as u64,
        output: 40,
        ..Usage::default()
    };
    Message::Assistant(a)
}

fn result(turn: usize, k: usize) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: format!("call-{turn}-{k}"),
        tool_name: "read_file".into(),
        content: format!("{turn}:{k} fn main() {{ println!(\"hello\"); }}\n").repeat(100),
        images: Vec::new(),
        details: serde_json::Value::Null,
        is_error: false,
        timestamp: 0,
    })
}

fn history() -> Vec<Message> {
    let mut out = Vec::with_capacity(TURNS * 5);
    for turn in 0..TURNS {
        out.push(Message::user(format!(
            "step {turn}: read the two modules and tell me what changed"
        )));
        out.push(call(turn));
        out.push(result(turn, 0));
        out.push(result(turn, 1));
        let mut answer = AssistantMessage::empty("bench");
        answer.content.push(Block::Text {
            text: format!("Step {turn}: the modules now share the parser. ").repeat(20),
        });
        out.push(Message::Assistant(answer));
    }
    out
}

fn compaction(c: &mut Criterion) {
    let history = History::from(history());
    assert_eq!(history.len(), 5_000);
    let budget = ContextBudget::new(200_000, &CompactionSettings::default());
    let mut group = c.benchmark_group("compaction");
    group.bench_function("cut_and_compacted_context_5k_messages", |b| {
        b.iter(|| {
            let tokens = context_tokens(&history, None, 3_000);
            let cut = choose_cut(
                &history,
                0,
                history.len(),
                budget.keep_recent,
                budget.threshold() / 2,
            );
            let record = Compaction {
                summary: "## Goal\nShare the parser between the modules.".into(),
                first_kept_message: cut,
                history_len: history.len(),
                tokens_before: tokens,
                tokens_after: 0,
                reason: CompactionReason::Threshold,
                usage: Usage::default(),
                timestamp: 0,
            };
            let view = compacted_view(&history, Some(&record));
            black_box((tokens, view.len()))
        });
    });
    // A server that reports no usage: every message is estimated.
    let unreported: Vec<Message> = history
        .iter()
        .cloned()
        .map(|mut m| {
            if let Message::Assistant(a) = &mut m {
                a.usage = Usage::default();
            }
            m
        })
        .collect();
    let unreported = History::from(unreported);
    group.bench_function("cut_and_compacted_context_5k_messages_no_usage", |b| {
        b.iter(|| {
            let tokens = context_tokens(&unreported, None, 3_000);
            let cut = choose_cut(
                &unreported,
                0,
                unreported.len(),
                budget.keep_recent,
                budget.threshold() / 2,
            );
            black_box((tokens, cut))
        });
    });
    let cut = choose_cut(
        &history,
        0,
        history.len(),
        budget.keep_recent,
        budget.threshold() / 2,
    );
    group.sample_size(20);
    group.bench_function("summary_chunks_of_the_summarised_part_5k_messages", |b| {
        b.iter(|| {
            black_box(plan_summary(history.iter().take(cut), budget.threshold() - 10_000).len())
        });
    });
    group.finish();
}

criterion_group!(benches, compaction);
criterion_main!(benches);
