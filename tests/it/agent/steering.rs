#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Steering messages, driven through the `Agent` facade: delivery, skipped tool calls.

use crate::support::agent_tools::stepping_tool;
use crate::support::gating::{gated, gated_text, is_update, last_user};
use crate::support::reading::{
    count, queued_texts, sent_result_triples, tool_ends, user_messages_in_history,
};
use crate::support::runs::user_texts;
use crate::support::*;
use claw_tui::agent::{Agent, QueueKind, SKIPPED_FOR_STEERING, ToolExecution, ToolResult};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;

// ---------------------------------------------------------------------------------------
// Steering
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn steering_queued_while_idle_goes_into_the_first_request() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["on it"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.steer("also run the tests");
    assert_eq!(
        queued_texts(&agent, QueueKind::Steering),
        ["also run the tests"]
    );

    agent.prompt("fix the bug").unwrap();
    let events = until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(
        requests.len(),
        1,
        "the steering message must not cost an extra turn"
    );
    let users = user_texts(&requests[0]);
    assert_eq!(users.len(), 2, "first request: {users:?}");
    assert!(users.contains(&"fix the bug".to_owned()), "{users:?}");
    assert!(
        users.contains(&"also run the tests".to_owned()),
        "{users:?}"
    );
    assert!(agent.queued(QueueKind::Steering).is_empty());
    assert_eq!(count(&labels(&events), "turn_start:1"), 1);
    assert_eq!(count(&labels(&events), "turn_start:2"), 0);
    let history = user_messages_in_history(&agent);
    assert_eq!(
        history.len(),
        2,
        "both messages are in the history: {history:?}"
    );
}

#[tokio::test]
async fn sequential_steering_skips_the_calls_not_yet_started() {
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[
            ("c1", "step", json!({"text": "steer"})),
            ("c2", "step", json!({"text": "second"})),
            ("c3", "step", json!({"text": "third"})),
        ]),
        Reply::text(&["changing course"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let runs = Arc::new(AtomicUsize::new(0));
    agent.set_tools(vec![stepping_tool(
        &agent,
        &runs,
        "stop, look at the README first",
    )]);
    agent.set_tool_execution(ToolExecution::Sequential);
    let mut rx = agent.subscribe(None);

    agent.prompt("do three steps").unwrap();
    let events = until_agent_end(&mut rx).await;
    let labels = labels(&events);

    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "only the call already running may execute"
    );
    for id in ["c1", "c2", "c3"] {
        assert_eq!(
            count(&labels, &format!("tool_start:{id}")),
            1,
            "{labels:#?}"
        );
        assert_eq!(count(&labels, &format!("tool_end:{id}")), 1, "{labels:#?}");
    }
    assert_eq!(
        tool_ends(&events),
        [
            ("c1".to_owned(), "steer done".to_owned(), false),
            ("c2".to_owned(), SKIPPED_FOR_STEERING.to_owned(), true),
            ("c3".to_owned(), SKIPPED_FOR_STEERING.to_owned(), true),
        ]
    );

    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        sent_result_triples(&requests[1]),
        [
            ("c1".to_owned(), "steer done".to_owned(), false),
            ("c2".to_owned(), SKIPPED_FOR_STEERING.to_owned(), true),
            ("c3".to_owned(), SKIPPED_FOR_STEERING.to_owned(), true),
        ]
    );
    assert_eq!(
        last_user(&requests[1]).as_deref(),
        Some("stop, look at the README first")
    );
    assert!(agent.queued(QueueKind::Steering).is_empty());
    assert_eq!(count(&labels, "agent_end"), 1);
}

#[tokio::test]
async fn sequential_steering_checked_before_every_call() {
    // The steering message arrives during the second of three calls: the first two ran,
    // only the third is skipped.
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[
            ("c1", "step", json!({"text": "first"})),
            ("c2", "step", json!({"text": "steer"})),
            ("c3", "step", json!({"text": "third"})),
        ]),
        Reply::text(&["ok"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let runs = Arc::new(AtomicUsize::new(0));
    agent.set_tools(vec![stepping_tool(&agent, &runs, "wait")]);
    agent.set_tool_execution(ToolExecution::Sequential);
    let mut rx = agent.subscribe(None);

    agent.prompt("go").unwrap();
    let events = until_agent_end(&mut rx).await;

    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(
        tool_ends(&events),
        [
            ("c1".to_owned(), "first done".to_owned(), false),
            ("c2".to_owned(), "steer done".to_owned(), false),
            ("c3".to_owned(), SKIPPED_FOR_STEERING.to_owned(), true),
        ]
    );
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(last_user(&requests[1]).as_deref(), Some("wait"));
}

#[tokio::test]
async fn parallel_steering_queued_before_the_batch_skips_every_call() {
    let gate = Arc::new(Notify::new());
    let provider = ScriptedProvider::new(vec![
        gated(
            Reply::tool_calls(&[
                ("c1", "step", json!({"text": "one"})),
                ("c2", "step", json!({"text": "two"})),
            ]),
            2,
            &gate,
        ),
        Reply::text(&["understood"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let runs = Arc::new(AtomicUsize::new(0));
    agent.set_tools(vec![stepping_tool(&agent, &runs, "unused")]);
    agent.set_tool_execution(ToolExecution::Parallel);
    let mut rx = agent.subscribe(None);

    agent.prompt("do two things").unwrap();
    let mut events = until(&mut rx, is_update).await;
    agent.steer("never mind, do something else");
    gate.notify_one();
    events.extend(until_agent_end(&mut rx).await);
    let labels = labels(&events);

    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "no call of the batch may run"
    );
    for id in ["c1", "c2"] {
        assert_eq!(
            count(&labels, &format!("tool_start:{id}")),
            1,
            "{labels:#?}"
        );
        assert_eq!(count(&labels, &format!("tool_end:{id}")), 1, "{labels:#?}");
    }
    assert_eq!(
        tool_ends(&events),
        [
            ("c1".to_owned(), SKIPPED_FOR_STEERING.to_owned(), true),
            ("c2".to_owned(), SKIPPED_FOR_STEERING.to_owned(), true),
        ]
    );
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        sent_result_triples(&requests[1]),
        [
            ("c1".to_owned(), SKIPPED_FOR_STEERING.to_owned(), true),
            ("c2".to_owned(), SKIPPED_FOR_STEERING.to_owned(), true),
        ]
    );
    assert_eq!(
        last_user(&requests[1]).as_deref(),
        Some("never mind, do something else")
    );
}

#[tokio::test]
async fn parallel_calls_already_running_finish_when_steered() {
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[("a", "steerer", json!({})), ("b", "waiter", json!({}))]),
        Reply::text(&["noted"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let b_may_finish = Arc::new(Notify::new());
    let steerer = {
        let agent = agent.clone();
        let gate = b_may_finish.clone();
        FnTool::new("steerer", json!({"type": "object"}), move |_, _, _, _| {
            let agent = agent.clone();
            let gate = gate.clone();
            async move {
                agent.steer("focus on the parser");
                gate.notify_one();
                ToolResult::text("a finished")
            }
        })
    };
    let waiter = {
        let gate = b_may_finish.clone();
        FnTool::new("waiter", json!({"type": "object"}), move |_, _, _, _| {
            let gate = gate.clone();
            async move {
                // Still running when the steering message is queued.
                gate.notified().await;
                ToolResult::text("b finished")
            }
        })
    };
    agent.set_tools(vec![steerer, waiter]);
    let mut rx = agent.subscribe(None);

    agent.prompt("go").unwrap();
    let events = until_agent_end(&mut rx).await;

    let mut ends = tool_ends(&events);
    ends.sort();
    assert_eq!(
        ends,
        [
            ("a".to_owned(), "a finished".to_owned(), false),
            ("b".to_owned(), "b finished".to_owned(), false),
        ]
    );
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        sent_result_triples(&requests[1]),
        [
            ("a".to_owned(), "a finished".to_owned(), false),
            ("b".to_owned(), "b finished".to_owned(), false),
        ],
        "results in call order"
    );
    assert_eq!(
        last_user(&requests[1]).as_deref(),
        Some("focus on the parser")
    );
    assert_eq!(count(&labels(&events), "agent_end"), 1);
}

#[tokio::test]
async fn steering_during_a_final_answer_gets_another_turn() {
    let gate = Arc::new(Notify::new());
    let provider = ScriptedProvider::new(vec![gated_text("done", &gate), Reply::text(&["redone"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("write it").unwrap();
    let mut events = until(&mut rx, is_update).await;
    agent.steer("use British spelling");
    gate.notify_one();
    events.extend(until_agent_end(&mut rx).await);
    let labels = labels(&events);

    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        last_user(&requests[1]).as_deref(),
        Some("use British spelling")
    );
    assert_eq!(count(&labels, "turn_start:2"), 1);
    assert_eq!(count(&labels, "agent_end"), 1);
    assert!(agent.state().error.is_none());
}
