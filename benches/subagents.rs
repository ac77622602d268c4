//! 100 subagents running at once against an in-process provider: all must complete,
//! each with its own result and only its own tool calls (nothing mixed between them).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use async_trait::async_trait;
use claw_tui::agent::{
    AgentEvent, AssistantMessage, Block, CheckedArgs, MessageDelta, StopReason, Tool, ToolResult,
    ToolSpec, ToolUpdates, Usage,
};
use claw_tui::llm::{LlmEvent, LlmMessage, LlmRequest, LlmStream, Provider};
use claw_tui::runtime::{
    MessageBus, RuntimeEvent, SYSTEM_CHANNEL, SubagentConfig, SubagentManager, runtime_channel,
};
use claw_tui::tools::ToolRegistry;
use claw_tui::tools::exec::Approver;
use claw_tui::tools::policy::{PolicyConfig, ToolPolicy};
use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

const SUBAGENTS: usize = 100;
const DELTAS: usize = 20;

/// Answers by the task in the first user message: first a call of `echo` with the
/// task's payload, then a text quoting the tool's result. Yields between events so
/// the subagents' streams interleave.
struct TaskProvider;

fn final_message(content: Vec<Block>, stop_reason: StopReason) -> AssistantMessage {
    AssistantMessage {
        content,
        stop_reason,
        usage: Usage {
            input: 10,
            output: 5,
            ..Usage::default()
        },
        model: "bench".into(),
        ..AssistantMessage::default()
    }
}

impl Provider for TaskProvider {
    fn stream(&self, request: LlmRequest, _cancel: CancellationToken) -> LlmStream {
        let mut task = String::new();
        let mut tool_output = None;
        for m in &request.messages {
            match m {
                LlmMessage::User(u) if task.is_empty() => task = u.content.clone(),
                LlmMessage::ToolResult(r) => tool_output = Some(r.content.clone()),
                _ => {}
            }
        }
        let n = task.trim_start_matches("task-").to_owned();
        let mut events = vec![LlmEvent::Start];
        let message = match tool_output {
            None => {
                let id = format!("call-{n}");
                let args = json!({"text": format!("payload-{n}")});
                events.push(LlmEvent::Delta(MessageDelta::ToolCallStart {
                    index: 0,
                    id: id.clone(),
                    name: "echo".into(),
                }));
                events.push(LlmEvent::Delta(MessageDelta::ToolCallArgs {
                    index: 0,
                    json: args.to_string(),
                }));
                final_message(
                    vec![Block::ToolCall {
                        id,
                        name: "echo".into(),
                        args,
                    }],
                    StopReason::ToolUse,
                )
            }
            Some(output) => {
                let text = format!("result for {task}: {output}");
                for chunk in text.as_bytes().chunks(text.len().div_ceil(DELTAS)) {
                    events.push(LlmEvent::Delta(MessageDelta::Text {
                        index: 0,
                        text: String::from_utf8_lossy(chunk).into_owned(),
                    }));
                }
                final_message(vec![Block::Text { text }], StopReason::Stop)
            }
        };
        events.push(LlmEvent::Done(message));
        futures::stream::iter(events)
            .then(|e| async move {
                tokio::task::yield_now().await;
                e
            })
            .boxed()
    }
}

struct Echo;

#[async_trait]
impl Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        static SPEC: std::sync::LazyLock<ToolSpec> = std::sync::LazyLock::new(|| {
            ToolSpec::new(
                "echo",
                "Echo",
                "Returns its text.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            )
        });
        &SPEC
    }
    async fn execute(
        &self,
        _call_id: &str,
        args: CheckedArgs,
        _cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        tokio::task::yield_now().await;
        ToolResult::text(args.value()["text"].as_str().unwrap_or_default())
    }
}

/// Spawns the subagents, waits for all, and checks every result and event stream.
async fn run_all() {
    let bus = MessageBus::new();
    let (tx, mut events) = runtime_channel();
    let registry: ToolRegistry = [Arc::new(Echo) as Arc<dyn Tool>].into_iter().collect();
    let mut config = SubagentConfig::new("bench");
    config.max_concurrent = SUBAGENTS;
    let policy = ToolPolicy::new(registry, PolicyConfig::default(), Approver::Nobody);
    let manager = SubagentManager::new(Arc::new(TaskProvider), policy, bus.clone(), tx, config);
    for n in 1..=SUBAGENTS {
        let receipt = manager
            .spawn_task(&format!("main-{n}"), format!("task-{n}"), None)
            .unwrap();
        assert_eq!(receipt.queued_position, None);
    }
    manager.wait_all().await;

    let mut results: Vec<String> = bus
        .drain(SYSTEM_CHANNEL)
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(results.len(), SUBAGENTS);
    results.sort();
    let mut expected: Vec<String> = (1..=SUBAGENTS)
        .map(|n| {
            format!(
                "[Subagent \"Task {n}\" (subagent-{n}) completed]\nresult for task-{n}: payload-{n}"
            )
        })
        .collect();
    expected.sort();
    assert_eq!(results, expected);

    let mut ends = 0;
    while let Ok(event) = events.try_recv() {
        if let RuntimeEvent::SubagentEvent {
            subagent_id,
            parent_tool_call_id,
            event,
        } = event
        {
            let n = subagent_id.trim_start_matches("subagent-");
            assert_eq!(parent_tool_call_id, format!("main-{n}"));
            match event {
                AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                    assert_eq!(tool_call_id, format!("call-{n}"));
                }
                AgentEvent::AgentEnd { .. } => ends += 1,
                _ => {}
            }
        }
    }
    assert_eq!(ends, SUBAGENTS);
}

fn subagents(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("subagents");
    group.sample_size(10);
    group.bench_function("100_concurrent_subagents_complete_unmixed", |b| {
        b.to_async(&runtime).iter(run_all);
    });
    group.finish();
}

criterion_group!(benches, subagents);
criterion_main!(benches);
