#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The turn limit (`max_turns`) and the queued messages it must not lose.

use crate::support::agent_tools::stepping_tool;
use crate::support::gating::{gated_text, is_update, last_user};
use crate::support::reading::{count, position, queued_texts, tool_ends, user_messages_in_history};
use crate::support::*;
use claw_tui::agent::{Agent, AgentEvent, Message, QueueKind, SKIPPED_FOR_STEERING, ToolExecution};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn notices(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Notice(n) => Some(n.text.clone()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Turn limit
// ---------------------------------------------------------------------------------------

fn echo_call(id: &str) -> Reply {
    Reply::tool_calls(&[(id, "echo", json!({"text": id}))])
}

#[tokio::test]
async fn max_turns_ends_the_run_with_a_notice() {
    let provider = ScriptedProvider::new(vec![echo_call("c1"), echo_call("c2"), echo_call("c3")]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_tools(vec![echo_tool()]);
    agent.set_max_turns(2);
    let mut rx = agent.subscribe(None);

    agent.prompt("loop forever").unwrap();
    let events = until_agent_end(&mut rx).await;
    let labels = labels(&events);

    assert_eq!(provider.requests().len(), 2, "no third LLM call");
    assert_eq!(count(&labels, "turn_start:3"), 0);
    assert_eq!(count(&labels, "agent_end"), 1);
    assert_eq!(count(&labels, "message_end:notice"), 1, "{labels:#?}");
    assert!(position(&labels, "message_end:notice") > position(&labels, "turn_end"));

    let state = agent.state();
    assert!(!state.is_streaming);
    let Some(Message::Notice(notice)) = state.messages.last() else {
        panic!(
            "the run must end with a notice, history: {:#?}",
            state.messages
        );
    };
    assert!(
        notice.text.contains('2'),
        "the notice names the limit: {}",
        notice.text
    );
    assert!(
        notice.text.to_lowercase().contains("turn"),
        "{}",
        notice.text
    );
    let AgentEvent::AgentEnd { messages } = events.last().unwrap() else {
        panic!("last event is agent_end");
    };
    assert!(matches!(messages.last(), Some(Message::Notice(_))));
}

#[tokio::test]
async fn max_turns_is_silent_when_the_run_ends_on_its_own() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["all done"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_max_turns(1);
    let mut rx = agent.subscribe(None);

    agent.prompt("hi").unwrap();
    until_agent_end(&mut rx).await;

    assert!(
        notices(&agent.state().messages.to_vec()).is_empty(),
        "{:#?}",
        agent.state().messages
    );
}

#[tokio::test]
async fn max_turns_puts_a_polled_steering_message_back() {
    let provider = ScriptedProvider::new(vec![Reply::tool_calls(&[(
        "c1",
        "step",
        json!({"text": "steer"}),
    )])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let runs = Arc::new(AtomicUsize::new(0));
    agent.set_tools(vec![stepping_tool(&agent, &runs, "keep going with plan B")]);
    agent.set_max_turns(1);
    let mut rx = agent.subscribe(None);

    agent.prompt("go").unwrap();
    until_agent_end(&mut rx).await;

    assert_eq!(provider.requests().len(), 1);
    assert_eq!(notices(&agent.state().messages.to_vec()).len(), 1);
    assert_eq!(
        queued_texts(&agent, QueueKind::Steering),
        ["keep going with plan B"],
        "the steering message must be kept for later"
    );
    assert!(!user_messages_in_history(&agent).contains(&"keep going with plan B".to_owned()));

    // Continuing delivers it.
    agent.set_max_turns(10);
    provider.push(Reply::text(&["plan B it is"]));
    agent.continue_run().unwrap();
    until_agent_end(&mut rx).await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        last_user(&requests[1]).as_deref(),
        Some("keep going with plan B")
    );
    assert!(agent.queued(QueueKind::Steering).is_empty());
}

#[tokio::test]
async fn max_turns_puts_steering_that_skipped_calls_back() {
    // The steering message comes back from the tool batch (it made c2 skip) rather than
    // from a poll after the turn; it must not be lost either.
    let provider = ScriptedProvider::new(vec![Reply::tool_calls(&[
        ("c1", "step", json!({"text": "steer"})),
        ("c2", "step", json!({"text": "second"})),
    ])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let runs = Arc::new(AtomicUsize::new(0));
    agent.set_tools(vec![stepping_tool(&agent, &runs, "redirect")]);
    agent.set_tool_execution(ToolExecution::Sequential);
    agent.set_max_turns(1);
    let mut rx = agent.subscribe(None);

    agent.prompt("go").unwrap();
    let events = until_agent_end(&mut rx).await;

    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        tool_ends(&events)[1],
        ("c2".to_owned(), SKIPPED_FOR_STEERING.to_owned(), true)
    );
    assert_eq!(notices(&agent.state().messages.to_vec()).len(), 1);
    assert_eq!(queued_texts(&agent, QueueKind::Steering), ["redirect"]);
    assert!(!user_messages_in_history(&agent).contains(&"redirect".to_owned()));
}

#[tokio::test]
async fn max_turns_puts_a_follow_up_back() {
    let gate = Arc::new(Notify::new());
    let provider = ScriptedProvider::new(vec![gated_text("answer", &gate)]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_max_turns(1);
    let mut rx = agent.subscribe(None);

    agent.prompt("question").unwrap();
    until(&mut rx, is_update).await;
    agent.follow_up("and another thing");
    gate.notify_one();
    let events = until_agent_end(&mut rx).await;

    assert_eq!(provider.requests().len(), 1);
    assert_eq!(
        count(&labels(&events), "message_end:notice"),
        1,
        "the limit is reported"
    );
    assert_eq!(
        queued_texts(&agent, QueueKind::FollowUp),
        ["and another thing"],
        "the follow-up must be kept for later"
    );
    let last_update = events.iter().rev().find_map(|e| match e {
        AgentEvent::QueueUpdate {
            steering,
            follow_up,
        } => Some((steering.clone(), follow_up.clone())),
        _ => None,
    });
    assert_eq!(
        last_update,
        Some((Vec::new(), vec!["and another thing".to_owned()])),
        "queue_update shows the follow-up pending again"
    );
    assert!(
        agent.queued(QueueKind::Steering).is_empty(),
        "it goes back to its own queue"
    );

    // Continuing delivers it.
    agent.set_max_turns(10);
    provider.push(Reply::text(&["sure"]));
    agent.continue_run().unwrap();
    until_agent_end(&mut rx).await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        last_user(&requests[1]).as_deref(),
        Some("and another thing")
    );
    assert!(agent.queued(QueueKind::FollowUp).is_empty());
}
