#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Stopping the tool calls that run now without aborting the run: the stopped call's
//! result says the user interrupted it, queued steering goes in at once, the turn goes
//! on; an abort still stops everything and marks its calls as aborted.

use crate::support::agent_tools::{tool_started, tripwire, waits_for_cancel};
use crate::support::reading::sent_result_triples;
use crate::support::*;
use claw_tui::agent::{
    Agent, AgentEvent, INTERRUPTED_BY_USER, Interruption, Message, SKIPPED_FOR_STEERING,
    StopReason, ToolExecution, ToolResult,
};
use claw_tui::llm::LlmMessage;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::mpsc;

/// What a stopped command has printed so far: its exit code is not known yet.
fn printed_so_far(output: &str) -> ToolResult {
    ToolResult::text(output).with_details(json!({"exit_code": null}))
}

fn ended(events: &[AgentEvent], id: &str) -> ToolResult {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                ..
            } if tool_call_id == id => Some(result.clone()),
            _ => None,
        })
        .expect("the call ended")
}

#[tokio::test]
async fn a_stopped_call_lets_queued_steering_in_at_once_and_the_turn_goes_on() {
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[
            ("c1", "slow", json!({"text": "sleep 12"})),
            ("c2", "next", json!({"text": "never"})),
        ]),
        Reply::text(&["Understood, stopping there."]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let (tx, mut rx_started) = mpsc::unbounded_channel();
    let ran = Arc::new(AtomicBool::new(false));
    agent.set_tools(vec![
        waits_for_cancel("slow", tx, printed_so_far("1\n2\n")),
        tripwire("next", &ran),
    ]);
    agent.set_tool_execution(ToolExecution::Sequential);
    let mut rx = agent.subscribe(None);

    agent.prompt("count slowly").unwrap();
    assert_eq!(tool_started(&mut rx_started).await, "c1");
    assert_eq!(agent.running_tools(), ["c1"]);
    agent.steer("stop, that is enough");
    assert_eq!(agent.interrupt_tools(), ["c1"]);
    let events = until_agent_end(&mut rx).await;

    let stopped = ended(&events, "c1");
    assert!(
        stopped.is_error,
        "an interrupted call reads as failed to the model"
    );
    assert_eq!(stopped.content, format!("1\n2\n{INTERRUPTED_BY_USER}"));
    assert_eq!(Interruption::of(&stopped.details), Some(Interruption::User));
    assert_eq!(
        stopped.details["exit_code"],
        json!(null),
        "the tool's details stay"
    );
    assert_eq!(ended(&events, "c2").content, SKIPPED_FOR_STEERING);
    assert!(
        !ran.load(Ordering::SeqCst),
        "the call after the steer never ran"
    );

    // The run went on: a second model call got the interrupted result and the steer.
    let requests = provider.requests();
    assert_eq!(requests.len(), 2, "the run was not aborted");
    let second = &requests[1];
    let results = sent_result_triples(second);
    assert_eq!(results[0].0, "c1");
    assert!(
        results[0].1.contains("Interrupted by the user"),
        "{results:?}"
    );
    let Some(LlmMessage::User(last)) = second.messages.last() else {
        panic!(
            "the steering message comes last: {:?}",
            second.messages.last()
        );
    };
    assert_eq!(last.content, "stop, that is enough");
    let AgentEvent::AgentEnd { messages } = events.last().unwrap() else {
        panic!("agent_end last");
    };
    let answer = messages
        .iter()
        .rev()
        .find_map(Message::as_assistant)
        .unwrap();
    assert_eq!(answer.stop_reason, StopReason::Stop);
    assert!(agent.running_tools().is_empty());
}

#[tokio::test]
async fn stopping_parallel_calls_without_steering_continues_with_their_results() {
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[
            ("p1", "slow", json!({"text": "a"})),
            ("p2", "slow", json!({"text": "b"})),
        ]),
        Reply::text(&["Both were stopped."]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let (tx, mut rx_started) = mpsc::unbounded_channel();
    agent.set_tools(vec![waits_for_cancel(
        "slow",
        tx,
        printed_so_far("partial"),
    )]);
    agent.set_tool_execution(ToolExecution::Parallel);
    let mut rx = agent.subscribe(None);

    agent.prompt("go").unwrap();
    let mut ids = vec![
        tool_started(&mut rx_started).await,
        tool_started(&mut rx_started).await,
    ];
    ids.sort();
    let mut stopped = agent.interrupt_tools();
    stopped.sort();
    assert_eq!(stopped, ids);
    let events = until_agent_end(&mut rx).await;

    for id in ["p1", "p2"] {
        assert_eq!(
            Interruption::of(&ended(&events, id).details),
            Some(Interruption::User)
        );
    }
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(sent_result_triples(&requests[1]).len(), 2);
    assert_eq!(final_text(&events), "Both were stopped.");
}

#[tokio::test]
async fn with_nothing_running_stopping_tools_changes_nothing() {
    let (agent, provider) = agent_with(vec![Reply::text(&["hi"])], Vec::new());
    assert!(agent.interrupt_tools().is_empty());
    let events = run(&agent, "hello").await;
    assert_eq!(final_text(&events), "hi");
    assert_eq!(provider.requests().len(), 1);
}

#[tokio::test]
async fn an_abort_marks_the_running_call_as_aborted_and_keeps_its_result() {
    let provider = ScriptedProvider::new(vec![Reply::tool_calls(&[(
        "c1",
        "slow",
        json!({"text": "a"}),
    )])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let (tx, mut rx_started) = mpsc::unbounded_channel();
    agent.set_tools(vec![waits_for_cancel("slow", tx, printed_so_far("kept"))]);
    let mut rx = agent.subscribe(None);

    agent.prompt("go").unwrap();
    tool_started(&mut rx_started).await;
    agent.abort();
    let events = until_agent_end(&mut rx).await;

    let result = ended(&events, "c1");
    assert_eq!((result.content.as_str(), result.is_error), ("kept", false));
    assert_eq!(Interruption::of(&result.details), Some(Interruption::Abort));
    assert_eq!(provider.requests().len(), 1, "an abort ends the run");
}
