#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Filtered subscriptions, the streaming snapshot and the idle guarantee of `agent_end`.

// tests/support is shared and not ours to edit; its `FnTool::new` returns `Arc<dyn Tool>`.

use crate::support::reading::assistant_text;
use crate::support::scripted::message;
use crate::support::*;
use claw_tui::agent::{
    Agent, AgentError, AgentEvent, Block, EventKind, Message, MessageDelta, StopReason,
};
use claw_tui::llm::LlmEvent;
use serde_json::json;
use std::sync::Arc;
use tokio::sync::{Notify, oneshot};

#[tokio::test]
async fn state_snapshot_shows_the_partial_message_while_streaming() {
    let gate = Arc::new(Notify::new());
    let text = |t: &str| {
        LlmEvent::Delta(MessageDelta::Text {
            index: 0,
            text: t.to_owned(),
        })
    };
    let provider = ScriptedProvider::new(vec![Reply::Gated(
        vec![LlmEvent::Start, text("Hel"), text("lo")],
        gate.clone(),
        vec![
            text(" world"),
            LlmEvent::Done(message(
                vec![Block::Text {
                    text: "Hello world".into(),
                }],
                StopReason::Stop,
            )),
        ],
    )]);
    let agent = Agent::new(provider, "scripted");
    let mut rx = agent.subscribe(None);
    agent.prompt("hi").unwrap();

    // Wait for the second delta: the provider now holds the stream until the gate opens.
    for _ in 0..2 {
        until(&mut rx, |e| matches!(e, AgentEvent::MessageUpdate { .. })).await;
    }

    let state = agent.state();
    assert!(state.is_streaming);
    let partial = state
        .streaming_message
        .as_ref()
        .expect("no streaming message while the stream is open");
    assert_eq!(partial.text(), "Hello");
    assert_eq!(partial.model, "scripted");
    // Only the prompt is in the history; the partial message is not.
    assert_eq!(state.messages.len(), 1);
    assert!(matches!(&state.messages[0], Message::User(u) if u.content == "hi"));
    // A second look gives the same snapshot, and a prompt is refused while busy.
    assert_eq!(agent.state().streaming_message.as_ref(), Some(partial));
    assert_eq!(agent.prompt("too early"), Err(AgentError::Busy));

    gate.notify_one();
    let events = until_agent_end(&mut rx).await;
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, AgentEvent::MessageUpdate { .. }))
            .count(),
        1
    );
    let state = agent.state();
    assert!(!state.is_streaming);
    assert!(state.streaming_message.is_none());
    assert_eq!(state.messages.len(), 2);
    assert_eq!(assistant_text(&state.messages[1]), "Hello world");
}

#[tokio::test]
async fn filtered_subscription_receives_only_the_requested_kinds() {
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[("call_1", "echo", json!({"text": "ping"}))]),
        Reply::text(&["done"]),
    ]);
    let agent = Agent::new(provider, "scripted");
    agent.set_tools(vec![echo_tool()]);
    let kinds = [
        EventKind::TurnStart,
        EventKind::ToolExecutionEnd,
        EventKind::AgentEnd,
    ];
    let mut filtered = agent.subscribe(Some(&kinds));
    let mut all = agent.subscribe(None);
    let mut nothing = agent.subscribe(Some(&[EventKind::QueueUpdate]));

    agent.prompt("go").unwrap();
    let every = until_agent_end(&mut all).await;
    let got = until_agent_end(&mut filtered).await;

    assert_eq!(
        labels(&got),
        [
            "turn_start:1",
            "tool_end:call_1",
            "turn_start:2",
            "agent_end"
        ]
    );
    let expected: Vec<&AgentEvent> = every.iter().filter(|e| kinds.contains(&e.kind())).collect();
    assert_eq!(got.iter().collect::<Vec<_>>(), expected);
    assert!(every.len() > got.len());

    // agent_end was the last event of the run: nothing else is pending on either receiver.
    assert!(filtered.try_recv().is_err());
    assert!(
        nothing.try_recv().is_err(),
        "a queue_update-only subscriber got an event"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_sent_upon_agent_end_is_accepted_and_runs() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["first"]), Reply::text(&["second"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut all = agent.subscribe(None);
    let mut ends = agent.subscribe(Some(&[EventKind::AgentEnd]));

    let (tx, rx) = oneshot::channel();
    let reactor = agent.clone();
    tokio::spawn(async move {
        let event = ends.recv().await;
        assert!(matches!(event, Some(AgentEvent::AgentEnd { .. })));
        let busy = reactor.state().is_streaming;
        let result = reactor.prompt("second prompt");
        let _ = tx.send((busy, result));
    });

    agent.prompt("first prompt").unwrap();
    let (busy, result) = tokio::time::timeout(DEADLINE, rx)
        .await
        .expect("the subscriber never saw agent_end")
        .unwrap();
    assert!(
        !busy,
        "the state was still streaming when agent_end arrived"
    );
    assert_eq!(result, Ok(()));

    let first = until_agent_end(&mut all).await;
    let second = until_agent_end(&mut all).await;
    assert_eq!(first.first(), Some(&AgentEvent::AgentStart));
    assert_eq!(second.first(), Some(&AgentEvent::AgentStart));
    let Some(AgentEvent::AgentEnd { messages }) = second.last() else {
        unreachable!()
    };
    assert!(matches!(&messages[0], Message::User(u) if u.content == "second prompt"));
    assert_eq!(assistant_text(&messages[1]), "second");

    tokio::time::timeout(DEADLINE, agent.wait_for_idle())
        .await
        .unwrap();
    assert_eq!(provider.requests().len(), 2);
    assert_eq!(provider.remaining(), 0);
    let state = agent.state();
    assert_eq!(state.messages.len(), 4);
    assert!(!state.is_streaming);
}
