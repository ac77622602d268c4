#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Abort, provider errors and busy refusals, driven through the `Agent` facade.

use crate::support::agent_tools::{tool_started, tripwire, waits_for_cancel};
use crate::support::reading::{count, final_assistant, tool_ends, user_messages_in_history};
use crate::support::*;
use claw_tui::agent::{
    ABORTED_MESSAGE, Agent, AgentError, AgentEvent, Message, MessageDelta, SKIPPED_FOR_ABORT,
    StopReason, ToolExecution, ToolResult,
};
use claw_tui::llm::LlmEvent;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::mpsc;

// ---------------------------------------------------------------------------------------
// Abort
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn abort_mid_stream_keeps_the_partial_message_and_runs_no_tools() {
    let provider = ScriptedProvider::new(vec![Reply::Hang(vec![
        LlmEvent::Start,
        LlmEvent::Delta(MessageDelta::Text {
            index: 0,
            text: "Deleting the ".into(),
        }),
        LlmEvent::Delta(MessageDelta::ToolCallStart {
            index: 1,
            id: "c1".into(),
            name: "danger".into(),
        }),
        LlmEvent::Delta(MessageDelta::ToolCallArgs {
            index: 1,
            json: r#"{"text":"rm -rf"}"#.into(),
        }),
    ])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let ran = Arc::new(AtomicBool::new(false));
    agent.set_tools(vec![tripwire("danger", &ran)]);
    let mut rx = agent.subscribe(None);

    agent.prompt("clean up").unwrap();
    until(&mut rx, |e| {
        matches!(
            e,
            AgentEvent::MessageUpdate {
                delta: MessageDelta::ToolCallArgs { .. }
            }
        )
    })
    .await;
    agent.abort();
    let events = until_agent_end(&mut rx).await;

    assert_eq!(
        labels(&events),
        ["message_end:assistant", "turn_end", "agent_end"]
    );
    let partial = final_assistant(&events);
    assert_eq!(partial.stop_reason, StopReason::Aborted);
    assert_eq!(partial.text(), "Deleting the ", "the partial text is kept");
    assert_eq!(
        partial.tool_calls().len(),
        1,
        "the partial tool call is kept for display"
    );
    assert_eq!(partial.error_message.as_deref(), Some(ABORTED_MESSAGE));
    assert!(
        !ran.load(Ordering::SeqCst),
        "a tool call of an aborted message must never run"
    );

    let state = agent.state();
    assert!(!state.is_streaming);
    assert!(state.streaming_message.is_none());
    assert_eq!(
        state
            .messages
            .last()
            .and_then(Message::as_assistant)
            .map(|a| a.stop_reason),
        Some(StopReason::Aborted)
    );
    assert_eq!(provider.requests().len(), 1);
}

#[tokio::test]
async fn abort_mid_tool_cancels_the_running_call_and_skips_the_rest() {
    let provider = ScriptedProvider::new(vec![Reply::tool_calls(&[
        ("c1", "slow", json!({"text": "a"})),
        ("c2", "never", json!({"text": "b"})),
    ])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let ran = Arc::new(AtomicBool::new(false));
    agent.set_tools(vec![
        waits_for_cancel(
            "slow",
            started_tx,
            ToolResult::text("stopped early, partial output kept"),
        ),
        tripwire("never", &ran),
    ]);
    agent.set_tool_execution(ToolExecution::Sequential);
    let mut rx = agent.subscribe(None);

    agent.prompt("work").unwrap();
    assert_eq!(tool_started(&mut started).await, "c1");
    until(&mut rx, |e| {
        matches!(e, AgentEvent::ToolExecutionStart { .. })
    })
    .await;
    agent.abort();
    let events = until_agent_end(&mut rx).await;

    assert_eq!(
        labels(&events),
        [
            "tool_end:c1",
            "tool_start:c2",
            "tool_end:c2",
            "message_start:tool_result",
            "message_end:tool_result",
            "message_start:tool_result",
            "message_end:tool_result",
            "turn_end",
            "agent_end",
        ]
    );
    assert_eq!(
        tool_ends(&events),
        [
            (
                "c1".to_owned(),
                "stopped early, partial output kept".to_owned(),
                false
            ),
            ("c2".to_owned(), SKIPPED_FOR_ABORT.to_owned(), true),
        ]
    );
    assert!(
        !ran.load(Ordering::SeqCst),
        "a call not yet started must not run after an abort"
    );
    let AgentEvent::TurnEnd { tool_results, .. } = &events[events.len() - 2] else {
        panic!("turn_end before agent_end");
    };
    assert_eq!(tool_results.len(), 2, "every call has exactly one result");
    assert_eq!(provider.requests().len(), 1, "no LLM call after an abort");
    let state = agent.state();
    assert!(!state.is_streaming);
    assert!(state.pending_tool_calls.is_empty());
}

#[tokio::test]
async fn abort_mid_tool_cancels_every_parallel_call() {
    let provider = ScriptedProvider::new(vec![Reply::tool_calls(&[
        ("c1", "slow", json!({"text": "a"})),
        ("c2", "slow", json!({"text": "b"})),
    ])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let (started_tx, mut started) = mpsc::unbounded_channel();
    agent.set_tools(vec![waits_for_cancel(
        "slow",
        started_tx,
        ToolResult::text("cancelled cleanly"),
    )]);
    agent.set_tool_execution(ToolExecution::Parallel);
    let mut rx = agent.subscribe(None);

    agent.prompt("work").unwrap();
    let mut ids = vec![
        tool_started(&mut started).await,
        tool_started(&mut started).await,
    ];
    ids.sort();
    assert_eq!(ids, ["c1", "c2"]);
    agent.abort();
    let events = until_agent_end(&mut rx).await;

    let mut ends = tool_ends(&events);
    ends.sort();
    assert_eq!(
        ends,
        [
            ("c1".to_owned(), "cancelled cleanly".to_owned(), false),
            ("c2".to_owned(), "cancelled cleanly".to_owned(), false),
        ]
    );
    let labels = labels(&events);
    assert_eq!(&labels[labels.len() - 2..], ["turn_end", "agent_end"]);
    assert_eq!(provider.requests().len(), 1);
}

#[tokio::test]
async fn abort_while_idle_does_nothing() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["fine"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.abort();
    agent.prompt("hello").unwrap();
    let events = until_agent_end(&mut rx).await;

    let last = final_assistant(&events);
    assert_eq!(
        last.stop_reason,
        StopReason::Stop,
        "an earlier idle abort must not hit the next run"
    );
    assert_eq!(last.text(), "fine");
}

// ---------------------------------------------------------------------------------------
// Provider errors
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn provider_error_ends_the_run_and_sets_the_error() {
    let provider = ScriptedProvider::new(vec![Reply::error("429 rate limited, retry later")]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("hi").unwrap();
    let events = until_agent_end(&mut rx).await;

    let failed = final_assistant(&events);
    assert_eq!(failed.stop_reason, StopReason::Error);
    assert_eq!(count(&labels(&events), "agent_end"), 1);
    assert_eq!(count(&labels(&events), "turn_start:2"), 0);

    let state = agent.state();
    assert!(!state.is_streaming);
    assert_eq!(
        state.error.as_deref(),
        Some("429 rate limited, retry later")
    );
    let roles: Vec<&str> = state.messages.iter().map(role).collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(
        state.messages[1].as_assistant().map(|a| a.stop_reason),
        Some(StopReason::Error),
        "the failed message stays in the history"
    );
    assert_eq!(provider.requests().len(), 1);
}

#[tokio::test]
async fn provider_error_is_cleared_by_the_next_run() {
    let provider = ScriptedProvider::new(vec![Reply::error("overloaded"), Reply::text(&["ok"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("hi").unwrap();
    until_agent_end(&mut rx).await;
    assert_eq!(agent.state().error.as_deref(), Some("overloaded"));

    agent.prompt("again").unwrap();
    until_agent_end(&mut rx).await;
    assert_eq!(agent.state().error, None);
}

// ---------------------------------------------------------------------------------------
// Busy
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn prompt_while_running_is_refused_with_busy() {
    let provider = ScriptedProvider::new(vec![Reply::Hang(vec![LlmEvent::Start])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("first").unwrap();
    let err = agent.prompt("second").unwrap_err();
    assert_eq!(err, AgentError::Busy);
    let text = err.to_string();
    assert!(text.contains("steer"), "Busy must point to steer: {text}");
    assert!(
        text.contains("follow_up"),
        "Busy must point to follow_up: {text}"
    );
    assert_eq!(agent.continue_run(), Err(AgentError::Busy));
    assert_eq!(agent.replace_messages(Vec::new()), Err(AgentError::Busy));

    agent.abort();
    until_agent_end(&mut rx).await;
    let users = user_messages_in_history(&agent);
    assert_eq!(
        users,
        ["first"],
        "the refused prompt must not enter the history"
    );

    provider.push(Reply::text(&["now I can"]));
    agent.prompt("second").unwrap();
    until_agent_end(&mut rx).await;
    assert_eq!(provider.requests().len(), 2);
}
