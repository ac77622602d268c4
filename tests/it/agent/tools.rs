#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Tool execution through the `Agent` facade: parallel and sequential modes, partial updates.

// tests/support is shared and not ours to edit; its `FnTool::new` returns `Arc<dyn Tool>`.

use crate::support::*;
use claw_tui::agent::{AgentEvent, Message, ToolExecution, ToolResult, ToolUpdates};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Barrier, oneshot};

/// Labels of the tool execution events only.
fn tool_labels(events: &[AgentEvent]) -> Vec<String> {
    labels(events)
        .into_iter()
        .filter(|l| l.starts_with("tool_"))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Parallel and sequential execution
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn parallel_calls_run_concurrently() {
    let barrier = Arc::new(Barrier::new(2));
    let meet = FnTool::new("meet", json!({"type": "object"}), move |id, _, _, _| {
        let barrier = barrier.clone();
        async move {
            // Both calls must be inside the tool at once for the barrier to open.
            match tokio::time::timeout(DEADLINE, barrier.wait()).await {
                Ok(_) => ToolResult::text(format!("{id} met")),
                Err(_) => ToolResult::error(format!("{id}: the other call never ran concurrently")),
            }
        }
    });
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("a", "meet", json!({})), ("b", "meet", json!({}))]),
            Reply::text(&["both met"]),
        ],
        vec![meet],
    );

    let events = run(&agent, "meet").await;

    let results = tool_results(&events);
    assert_eq!(results.len(), 2);
    assert_eq!(
        (results[0].content.as_str(), results[0].is_error),
        ("a met", false)
    );
    assert_eq!(
        (results[1].content.as_str(), results[1].is_error),
        ("b met", false)
    );
    assert_eq!(sent_results(&provider.requests()[1]), results);
    assert_eq!(final_text(&events), "both met");
}

#[tokio::test]
async fn parallel_results_keep_call_order_while_end_events_follow_finish_order() {
    let (tx, rx) = oneshot::channel::<()>();
    let rx = Arc::new(Mutex::new(Some(rx)));
    let tx = Arc::new(Mutex::new(Some(tx)));
    let slow = FnTool::new("slow", json!({"type": "object"}), move |_, _, _, _| {
        let rx = rx.lock().unwrap().take();
        async move {
            let Some(rx) = rx else {
                return ToolResult::error("slow ran twice");
            };
            match tokio::time::timeout(DEADLINE, rx).await {
                Ok(Ok(())) => ToolResult::text("slow done"),
                _ => ToolResult::error("slow never heard from fast"),
            }
        }
    });
    let fast = FnTool::new("fast", json!({"type": "object"}), move |_, _, _, _| {
        let tx = tx.lock().unwrap().take();
        async move {
            if let Some(tx) = tx {
                let _ = tx.send(());
            }
            ToolResult::text("fast done")
        }
    });
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "slow", json!({})), ("c2", "fast", json!({}))]),
            Reply::text(&["ok"]),
        ],
        vec![slow, fast],
    );

    let events = run(&agent, "go").await;

    // Both start in call order; c2 finishes first and its end event comes first.
    assert_eq!(
        tool_labels(&events),
        [
            "tool_start:c1",
            "tool_start:c2",
            "tool_end:c2",
            "tool_end:c1"
        ]
    );
    // The results still enter the context in call order.
    let results = tool_results(&events);
    let ids: Vec<&str> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2"]);
    assert_eq!(results[0].content, "slow done");
    assert_eq!(results[1].content, "fast done");
    assert!(results.iter().all(|r| !r.is_error));

    let turn_end_results: Vec<Message> = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnEnd { tool_results, .. } if !tool_results.is_empty() => {
                Some(tool_results.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(
        turn_end_results,
        results
            .iter()
            .cloned()
            .map(Message::ToolResult)
            .collect::<Vec<_>>()
    );
    assert_eq!(sent_results(&provider.requests()[1]), results);
}

#[tokio::test]
async fn sequential_mode_runs_each_call_after_the_previous_finished() {
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let running = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicUsize::new(0));
    let step = {
        let log = log.clone();
        FnTool::new("step", json!({"type": "object"}), move |id, _, _, _| {
            let (log, running, finished) = (log.clone(), running.clone(), finished.clone());
            async move {
                let overlapped = running.swap(true, Ordering::SeqCst);
                let before = finished.load(Ordering::SeqCst);
                log.lock().unwrap().push(format!("start {id}"));
                // Give any concurrently scheduled call every chance to start now.
                for _ in 0..10 {
                    tokio::task::yield_now().await;
                }
                log.lock().unwrap().push(format!("end {id}"));
                finished.fetch_add(1, Ordering::SeqCst);
                running.store(false, Ordering::SeqCst);
                ToolResult::text(format!(
                    "{id}: overlapped={overlapped} finished_before={before}"
                ))
            }
        })
    };
    let (agent, _provider) = agent_with(
        vec![
            Reply::tool_calls(&[
                ("s1", "step", json!({})),
                ("s2", "step", json!({})),
                ("s3", "step", json!({})),
            ]),
            Reply::text(&["done"]),
        ],
        vec![step],
    );
    agent.set_tool_execution(ToolExecution::Sequential);

    let events = run(&agent, "go").await;

    assert_eq!(
        *log.lock().unwrap(),
        [
            "start s1", "end s1", "start s2", "end s2", "start s3", "end s3"
        ]
    );
    let contents: Vec<String> = tool_results(&events)
        .into_iter()
        .map(|r| r.content)
        .collect();
    assert_eq!(
        contents,
        [
            "s1: overlapped=false finished_before=0",
            "s2: overlapped=false finished_before=1",
            "s3: overlapped=false finished_before=2",
        ]
    );
    assert_eq!(
        tool_labels(&events),
        [
            "tool_start:s1",
            "tool_end:s1",
            "tool_start:s2",
            "tool_end:s2",
            "tool_start:s3",
            "tool_end:s3"
        ]
    );
    assert_eq!(final_text(&events), "done");
}

// ---------------------------------------------------------------------------------------
// Partial updates
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn tool_updates_arrive_between_start_and_end_with_their_ids() {
    let stash: Arc<Mutex<Vec<ToolUpdates>>> = Arc::new(Mutex::new(Vec::new()));
    let keep = stash.clone();
    let progress = FnTool::new(
        "progress",
        json!({"type": "object"}),
        move |id, _, _, updates| {
            keep.lock().unwrap().push(updates.clone());
            async move {
                updates.send(json!({"id": id, "step": 1}));
                tokio::task::yield_now().await;
                updates.send(json!({"id": id, "step": 2}));
                ToolResult::text(format!("{id} complete"))
            }
        },
    );
    let (agent, _provider) = agent_with(
        vec![
            Reply::tool_calls(&[("p1", "progress", json!({})), ("p2", "progress", json!({}))]),
            Reply::text(&["ok"]),
        ],
        vec![progress],
    );
    let mut rx = agent.subscribe(None);
    agent.prompt("go").unwrap();
    let events = until_agent_end(&mut rx).await;

    for id in ["p1", "p2"] {
        let mine: Vec<&AgentEvent> = events
            .iter()
            .filter(|e| match e {
                AgentEvent::ToolExecutionStart { tool_call_id, .. }
                | AgentEvent::ToolExecutionUpdate { tool_call_id, .. }
                | AgentEvent::ToolExecutionEnd { tool_call_id, .. } => tool_call_id == id,
                _ => false,
            })
            .collect();
        assert_eq!(
            labels(&mine.iter().map(|e| (*e).clone()).collect::<Vec<_>>()),
            [
                format!("tool_start:{id}"),
                format!("tool_update:{id}"),
                format!("tool_update:{id}"),
                format!("tool_end:{id}"),
            ]
        );
        let partials: Vec<(String, Value)> = mine
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolExecutionUpdate {
                    tool_name, partial, ..
                } => Some((tool_name.clone(), partial.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            partials,
            [
                ("progress".to_owned(), json!({"id": id, "step": 1})),
                ("progress".to_owned(), json!({"id": id, "step": 2})),
            ]
        );
    }
    // No update escapes outside the tool phase of the turn.
    let first_start = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolExecutionStart { .. }))
        .unwrap();
    let last_end = events
        .iter()
        .rposition(|e| matches!(e, AgentEvent::ToolExecutionEnd { .. }))
        .unwrap();
    assert!(events.iter().enumerate().all(|(i, e)| {
        !matches!(e, AgentEvent::ToolExecutionUpdate { .. }) || (first_start < i && i < last_end)
    }));

    // Once a call has ended, its updates handle publishes nothing.
    let stashed = stash.lock().unwrap().clone();
    assert_eq!(stashed.len(), 2);
    for updates in &stashed {
        updates.send(json!({"late": true}));
    }
    assert!(
        rx.try_recv().is_err(),
        "an update was published after its call ended"
    );
}
