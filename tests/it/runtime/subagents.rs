#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Background subagents: restricted tools, results on the bus, turn limit, failure,
//! cancel, the concurrency limit, and event forwarding tagged with the spawn call.

use crate::support::runtime::{RoutingProvider, is_status, statuses, text_and_call, until_runtime};
use crate::support::{DEADLINE, FnTool, Reply, echo_tool, text_schema};
use claw_tui::agent::ToolResult;
use claw_tui::runtime::subagents::SUBAGENT_SYSTEM_PROMPT;
use claw_tui::runtime::{
    MessageBus, RuntimeEvent, SYSTEM_CHANNEL, SubagentConfig, SubagentError, SubagentManager,
    SubagentStatus, runtime_channel,
};
use claw_tui::tools::ToolRegistry;
use claw_tui::tools::exec::Approver;
use claw_tui::tools::policy::{PolicyConfig, ToolPolicy};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::{Notify, mpsc};
use tokio::time::timeout;

mod forwarding;

fn named_tool(name: &str) -> Arc<dyn claw_tui::agent::Tool> {
    FnTool::new(name, text_schema(), |_, _, _, _| async {
        ToolResult::text("ok")
    })
}

/// A registry with the tools a subagent must not get, plus two it keeps.
fn full_registry() -> ToolRegistry {
    ["read_file", "spawn", "message", "edit_file", "cron"]
        .into_iter()
        .map(named_tool)
        .chain([echo_tool()])
        .collect()
}

struct Fixture {
    provider: Arc<RoutingProvider>,
    bus: MessageBus,
    manager: SubagentManager,
    events: mpsc::UnboundedReceiver<RuntimeEvent>,
}

fn fixture(registry: &ToolRegistry, change: impl FnOnce(&mut SubagentConfig)) -> Fixture {
    let provider = RoutingProvider::new();
    let bus = MessageBus::new();
    let (tx, events) = runtime_channel();
    let mut config = SubagentConfig::new("scripted");
    change(&mut config);
    let policy = ToolPolicy::new(registry.clone(), PolicyConfig::default(), Approver::Nobody);
    let manager = SubagentManager::new(provider.clone(), policy, bus.clone(), tx, config);
    Fixture {
        provider,
        bus,
        manager,
        events,
    }
}

fn system_messages(bus: &MessageBus) -> Vec<String> {
    bus.drain(SYSTEM_CHANNEL)
        .into_iter()
        .map(|m| m.content)
        .collect()
}

#[tokio::test]
async fn a_subagent_works_alone_with_restricted_tools_and_reports_its_result() {
    let f = fixture(&full_registry(), |_| {});
    f.provider.route(
        "count the files",
        vec![
            Reply::tool_calls(&[("c1", "echo", json!({"text": "42 files"}))]),
            Reply::text(&["There are ", "42 files."]),
        ],
    );
    let receipt = f
        .manager
        .spawn_task("call-main-1", "count the files".into(), None)
        .unwrap();
    assert_eq!(receipt.id, "subagent-1");
    assert_eq!(receipt.label, "Task 1");
    assert_eq!(receipt.queued_position, None);
    assert!(
        receipt
            .describe()
            .starts_with("Started subagent subagent-1 (\"Task 1\"); 1 running now."),
        "{}",
        receipt.describe()
    );
    timeout(DEADLINE, f.manager.wait_all()).await.unwrap();

    let requests = f.provider.requests("count the files");
    assert_eq!(requests.len(), 2);
    let tools: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["read_file", "echo"]);
    assert_eq!(f.manager.tool_names(), ["read_file", "echo"]);
    // No history: the task is the only message of the first request.
    assert_eq!(requests[0].messages.len(), 1);
    assert_eq!(requests[0].system_prompt, SUBAGENT_SYSTEM_PROMPT);

    assert_eq!(
        system_messages(&f.bus),
        ["[Subagent \"Task 1\" (subagent-1) completed]\nThere are 42 files."]
    );
    let info = f.manager.get("subagent-1").unwrap();
    assert_eq!(info.status, SubagentStatus::Done);
    assert_eq!(info.turns, 2);
    assert_eq!(info.tokens, 30, "two scripted calls of 15 tokens");
    assert_eq!(info.current_tool, None);
    assert_eq!(info.parent_tool_call_id, "call-main-1");
    assert_eq!(info.chat_id, "direct");
    assert_eq!(f.manager.list(), [info]);
    assert_eq!(f.manager.running(), 0);
}

#[tokio::test]
async fn the_turn_limit_is_reported_as_a_failure_with_the_partial_answer() {
    let f = fixture(&full_registry(), |c| c.max_turns = 2);
    f.provider.route(
        "dig deep",
        vec![
            text_and_call(
                "Found the config; checking logs next.",
                "c1",
                "echo",
                json!({"text": "a"}),
            ),
            Reply::tool_calls(&[("c2", "echo", json!({"text": "b"}))]),
        ],
    );
    f.manager
        .spawn_task("call-1", "dig deep".into(), Some("  Research ".into()))
        .unwrap();
    timeout(DEADLINE, f.manager.wait_all()).await.unwrap();

    assert_eq!(f.provider.requests("dig deep").len(), 2, "no third call");
    let info = f.manager.get("subagent-1").unwrap();
    assert_eq!(info.status, SubagentStatus::TurnLimit);
    assert_eq!(info.label, "Research");
    assert_eq!(
        system_messages(&f.bus),
        [
            "[Subagent \"Research\" (subagent-1) failed]\nIt reached its turn limit (2 turns) \
          before finishing the task, so the task is not done. Its last partial answer:\n\
          Found the config; checking logs next."
        ]
    );
}

#[tokio::test]
async fn a_failed_model_call_is_reported_with_its_reason() {
    let f = fixture(&full_registry(), |_| {});
    f.provider
        .route("fail", vec![Reply::error("quota exhausted")]);
    f.manager.spawn_task("call-1", "fail".into(), None).unwrap();
    timeout(DEADLINE, f.manager.wait_all()).await.unwrap();
    assert_eq!(
        f.manager.get("subagent-1").unwrap().status,
        SubagentStatus::Failed
    );
    assert_eq!(
        system_messages(&f.bus),
        ["[Subagent \"Task 1\" (subagent-1) failed]\nIts model call failed: quota exhausted"]
    );
}

#[tokio::test]
async fn cancel_aborts_a_running_subagent_and_its_tools() {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (cancelled_tx, mut cancelled) = mpsc::unbounded_channel();
    let blocking = FnTool::new("wait", text_schema(), move |_, _, cancel, _| {
        let started_tx = started_tx.clone();
        let cancelled_tx = cancelled_tx.clone();
        async move {
            started_tx.send(()).unwrap();
            cancel.cancelled().await;
            cancelled_tx.send(()).unwrap();
            ToolResult::error("cancelled")
        }
    });
    let registry: ToolRegistry = [blocking].into_iter().collect();
    let mut f = fixture(&registry, |_| {});
    f.provider.route(
        "wait forever",
        vec![text_and_call(
            "Waiting for the build.",
            "c1",
            "wait",
            json!({"text": "x"}),
        )],
    );
    f.manager
        .spawn_task("call-1", "wait forever".into(), None)
        .unwrap();
    timeout(DEADLINE, started.recv()).await.unwrap().unwrap();
    until_runtime(&mut f.events, |e| {
        matches!(e, RuntimeEvent::SubagentUpdate { info } if info.current_tool.as_deref() == Some("wait"))
    })
    .await;
    assert_eq!(
        f.manager.get("subagent-1").unwrap().current_tool.as_deref(),
        Some("wait")
    );

    f.manager.cancel("subagent-1").unwrap();
    timeout(DEADLINE, cancelled.recv()).await.unwrap().unwrap();
    timeout(DEADLINE, f.manager.wait_all()).await.unwrap();
    let info = f.manager.get("subagent-1").unwrap();
    assert_eq!(info.status, SubagentStatus::Cancelled);
    assert_eq!(info.current_tool, None);
    assert_eq!(
        system_messages(&f.bus),
        [
            "[Subagent \"Task 1\" (subagent-1) cancelled]\nIt was cancelled by the user before \
          it finished. Its last partial answer:\nWaiting for the build."
        ]
    );
    let again = f.manager.cancel("subagent-1").unwrap_err();
    assert_eq!(
        again,
        SubagentError::AlreadyEnded {
            id: "subagent-1".into(),
            status: SubagentStatus::Cancelled
        }
    );
    assert_eq!(
        again.to_string(),
        "Subagent subagent-1 has already ended (cancelled); there is nothing to cancel."
    );
    assert!(
        f.manager
            .cancel("subagent-9")
            .unwrap_err()
            .to_string()
            .contains("No subagent has the id subagent-9")
    );
}

#[tokio::test]
async fn the_concurrency_limit_queues_extra_spawns_in_order() {
    let mut f = fixture(&full_registry(), |_| {});
    let gates: Vec<Arc<Notify>> = (0..6).map(|_| Arc::new(Notify::new())).collect();
    for (i, gate) in gates.iter().enumerate() {
        let answer = format!("result {}", i + 1);
        f.provider.route(
            &format!("task {}", i + 1),
            vec![Reply::Gated(
                Vec::new(),
                gate.clone(),
                match Reply::text(&[&answer]) {
                    Reply::Events(events) => events,
                    _ => unreachable!(),
                },
            )],
        );
    }
    let receipts: Vec<_> = (1..=6)
        .map(|i| {
            f.manager
                .spawn_task(&format!("call-{i}"), format!("task {i}"), None)
                .unwrap()
        })
        .collect();
    for (i, r) in receipts.iter().take(4).enumerate() {
        assert_eq!((r.queued_position, r.running), (None, i + 1));
    }
    assert_eq!(
        (receipts[4].queued_position, receipts[4].running),
        (Some(1), 4)
    );
    assert_eq!(receipts[5].queued_position, Some(2));
    assert_eq!(
        receipts[4].describe(),
        "Queued subagent subagent-5 (\"Task 5\") at position 1: 4 subagents are already \
         running (the limit is 4). It starts when one finishes; its result will arrive as a \
         system notification."
    );
    let status: Vec<SubagentStatus> = f.manager.list().iter().map(|i| i.status).collect();
    use SubagentStatus::{Done, Queued, Running};
    assert_eq!(status, [Running, Running, Running, Running, Queued, Queued]);
    assert_eq!(f.manager.running(), 4);

    // Subagent 3 finishing frees a slot for subagent 5, the first in line.
    gates[2].notify_one();
    let seen = until_runtime(&mut f.events, |e| is_status(e, "subagent-5", Running)).await;
    let order = statuses(&seen);
    let done_3 = order
        .iter()
        .position(|s| *s == ("subagent-3".into(), Done))
        .unwrap();
    let run_5 = order
        .iter()
        .position(|s| *s == ("subagent-5".into(), Running))
        .unwrap();
    assert!(done_3 < run_5, "{order:?}");
    assert_eq!(f.manager.get("subagent-6").unwrap().status, Queued);
    assert_eq!(f.manager.running(), 4);
    assert!(f.provider.requests("task 6").is_empty());

    for gate in &gates {
        gate.notify_one();
    }
    timeout(DEADLINE, f.manager.wait_all()).await.unwrap();
    assert!(f.manager.list().iter().all(|i| i.status == Done));
    let mut results = system_messages(&f.bus);
    assert_eq!(
        results[0],
        "[Subagent \"Task 3\" (subagent-3) completed]\nresult 3"
    );
    results.sort();
    assert_eq!(results.len(), 6);
    for (i, r) in results.iter().enumerate() {
        assert!(
            r.ends_with(&format!(
                "(subagent-{}) completed]\nresult {}",
                i + 1,
                i + 1
            )),
            "{r}"
        );
    }
}

#[tokio::test]
async fn a_queued_subagent_can_be_cancelled_before_it_starts() {
    let f = fixture(&full_registry(), |c| c.max_concurrent = 1);
    let gate = Arc::new(Notify::new());
    f.provider.route(
        "first",
        vec![Reply::Gated(
            Vec::new(),
            gate.clone(),
            match Reply::text(&["one"]) {
                Reply::Events(e) => e,
                _ => unreachable!(),
            },
        )],
    );
    f.provider.route("second", vec![Reply::text(&["two"])]);
    f.manager.spawn_task("c1", "first".into(), None).unwrap();
    let queued = f
        .manager
        .spawn_task("c2", "second".into(), Some("Later".into()))
        .unwrap();
    assert_eq!(queued.queued_position, Some(1));
    f.manager.cancel("subagent-2").unwrap();
    assert_eq!(
        f.manager.get("subagent-2").unwrap().status,
        SubagentStatus::Cancelled
    );
    assert_eq!(
        system_messages(&f.bus),
        [
            "[Subagent \"Later\" (subagent-2) cancelled]\nIt was cancelled by the user before it \
          finished. It had not written any answer yet."
        ]
    );
    gate.notify_one();
    timeout(DEADLINE, f.manager.wait_all()).await.unwrap();
    assert!(
        f.provider.requests("second").is_empty(),
        "a cancelled spawn never runs"
    );
    assert_eq!(
        f.manager.get("subagent-1").unwrap().status,
        SubagentStatus::Done
    );
}

#[tokio::test]
async fn shutdown_cancels_everything_quietly_and_refuses_new_spawns() {
    let f = fixture(&full_registry(), |c| c.max_concurrent = 1);
    f.provider.route("hang", vec![Reply::Hang(vec![])]);
    f.provider.route("never", vec![Reply::text(&["no"])]);
    f.manager.spawn_task("c1", "hang".into(), None).unwrap();
    f.manager.spawn_task("c2", "never".into(), None).unwrap();
    timeout(DEADLINE, f.manager.shutdown()).await.unwrap();
    let status: Vec<SubagentStatus> = f.manager.list().iter().map(|i| i.status).collect();
    assert_eq!(
        status,
        [SubagentStatus::Cancelled, SubagentStatus::Cancelled]
    );
    assert!(
        system_messages(&f.bus).is_empty(),
        "nobody is left to read results"
    );
    assert!(f.provider.requests("never").is_empty());
    let refused = f.manager.spawn_task("c3", "more".into(), None).unwrap_err();
    assert_eq!(refused, SubagentError::ShuttingDown);
    assert_eq!(
        refused.to_string(),
        "claw-tui is shutting down; no new subagents can start."
    );
}

#[tokio::test(start_paused = true)]
async fn elapsed_time_counts_from_the_start_and_freezes_at_the_end() {
    // The tool's own work takes 5 s of the paused (auto-advancing) test clock.
    let slow = FnTool::new("slow", text_schema(), |_, _, _, _| async {
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        ToolResult::text("slept")
    });
    let registry: ToolRegistry = [slow].into_iter().collect();
    let f = fixture(&registry, |_| {});
    f.provider.route(
        "be slow",
        vec![
            Reply::tool_calls(&[("c1", "slow", json!({"text": "x"}))]),
            Reply::text(&["done"]),
        ],
    );
    f.manager.spawn_task("c", "be slow".into(), None).unwrap();
    f.manager.wait_all().await;
    let elapsed = f.manager.get("subagent-1").unwrap().elapsed_ms;
    assert!((5_000..5_100).contains(&elapsed), "{elapsed}");
    // Paused clock: move it a minute on; a finished subagent's elapsed time must not grow.
    tokio::time::advance(std::time::Duration::from_secs(60)).await;
    assert_eq!(f.manager.get("subagent-1").unwrap().elapsed_ms, elapsed);
}

#[tokio::test]
async fn an_empty_task_is_refused() {
    let f = fixture(&full_registry(), |_| {});
    let err = f.manager.spawn_task("c", "   ".into(), None).unwrap_err();
    assert_eq!(err, SubagentError::EmptyTask);
    assert_eq!(
        err.to_string(),
        "The task is empty; describe what the subagent should do."
    );
    assert!(f.manager.list().is_empty());
}
