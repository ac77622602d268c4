#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Follow-up messages, the queue modes and `queue_update`, driven through the `Agent` facade.

use crate::support::gating::{gated_text, is_update, last_user};
use crate::support::reading::{count, position};
use crate::support::runs::user_texts;
use crate::support::*;
use claw_tui::agent::{Agent, AgentEvent, EventKind, Message, QueueKind, QueueMode, ToolResult};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::Notify;

// ---------------------------------------------------------------------------------------
// Follow-up
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn follow_up_waits_until_the_run_would_end() {
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[("c1", "queue", json!({}))]),
        Reply::text(&["work done"]),
        Reply::text(&["here is the summary"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let queue_tool = {
        let agent = agent.clone();
        FnTool::new("queue", json!({"type": "object"}), move |_, _, _, _| {
            let agent = agent.clone();
            async move {
                agent.follow_up("then summarise");
                ToolResult::text("queued")
            }
        })
    };
    agent.set_tools(vec![queue_tool]);
    let mut rx = agent.subscribe(None);

    agent.prompt("work").unwrap();
    let events = until_agent_end(&mut rx).await;
    let labels = labels(&events);

    let requests = provider.requests();
    assert_eq!(requests.len(), 3, "the follow-up gets its own turn");
    assert!(
        !user_texts(&requests[1]).contains(&"then summarise".to_owned()),
        "a follow-up must not be injected while the model still has tool calls: {:?}",
        user_texts(&requests[1])
    );
    assert_eq!(last_user(&requests[2]).as_deref(), Some("then summarise"));
    assert_eq!(count(&labels, "agent_start"), 1);
    assert_eq!(
        count(&labels, "agent_end"),
        1,
        "the follow-up runs in the same run"
    );
    assert_eq!(count(&labels, "turn_start:3"), 1);
    // The follow-up enters the context in the third turn.
    let follow_up_at = events
        .iter()
        .position(|e| {
            matches!(e, AgentEvent::MessageStart { message: Message::User(u) } if u.content == "then summarise")
        })
        .expect("the follow-up message is announced");
    assert!(follow_up_at > position(&labels, "turn_start:3"));
    assert!(agent.queued(QueueKind::FollowUp).is_empty());
    let AgentEvent::AgentEnd { messages } = events.last().unwrap() else {
        panic!("last event is agent_end");
    };
    assert!(
        messages
            .iter()
            .any(|m| matches!(m, Message::User(u) if u.content == "then summarise")),
        "agent_end lists the follow-up among the run's messages"
    );
}

#[tokio::test]
async fn steering_is_delivered_before_follow_up() {
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[("c1", "queue", json!({}))]),
        Reply::text(&["steered"]),
        Reply::text(&["followed up"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let queue_tool = {
        let agent = agent.clone();
        FnTool::new("queue", json!({"type": "object"}), move |_, _, _, _| {
            let agent = agent.clone();
            async move {
                agent.follow_up("FOLLOW");
                agent.steer("STEER");
                ToolResult::text("queued both")
            }
        })
    };
    agent.set_tools(vec![queue_tool]);
    let mut rx = agent.subscribe(None);

    agent.prompt("go").unwrap();
    until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(last_user(&requests[1]).as_deref(), Some("STEER"));
    assert!(!user_texts(&requests[1]).contains(&"FOLLOW".to_owned()));
    assert_eq!(last_user(&requests[2]).as_deref(), Some("FOLLOW"));
}

// ---------------------------------------------------------------------------------------
// Queue modes
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn steering_one_at_a_time_gives_each_message_its_own_turn() {
    let gate = Arc::new(Notify::new());
    let provider = ScriptedProvider::new(vec![
        gated_text("first", &gate),
        Reply::text(&["second"]),
        Reply::text(&["third"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("start").unwrap();
    until(&mut rx, is_update).await;
    agent.steer("s1");
    agent.steer("s2");
    gate.notify_one();
    let events = until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(
        requests.len(),
        3,
        "default mode: one steering message per turn"
    );
    assert_eq!(last_user(&requests[1]).as_deref(), Some("s1"));
    assert!(!user_texts(&requests[1]).contains(&"s2".to_owned()));
    assert_eq!(last_user(&requests[2]).as_deref(), Some("s2"));
    assert_eq!(count(&labels(&events), "agent_end"), 1);
    assert!(agent.state().error.is_none());
}

#[tokio::test]
async fn steering_all_mode_injects_the_whole_queue_at_once() {
    let gate = Arc::new(Notify::new());
    let provider =
        ScriptedProvider::new(vec![gated_text("first", &gate), Reply::text(&["second"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_queue_mode(QueueKind::Steering, QueueMode::All);
    let mut rx = agent.subscribe(None);

    agent.prompt("start").unwrap();
    until(&mut rx, is_update).await;
    agent.steer("s1");
    agent.steer("s2");
    gate.notify_one();
    until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(
        requests.len(),
        2,
        "all mode: both steering messages in one turn"
    );
    let users = user_texts(&requests[1]);
    assert_eq!(users[users.len() - 2..], ["s1".to_owned(), "s2".to_owned()]);
    assert!(agent.state().error.is_none(), "no extra request was made");
    assert!(agent.queued(QueueKind::Steering).is_empty());
}

#[tokio::test]
async fn follow_up_one_at_a_time_gives_each_message_its_own_turn() {
    let gate = Arc::new(Notify::new());
    let provider = ScriptedProvider::new(vec![
        gated_text("first", &gate),
        Reply::text(&["second"]),
        Reply::text(&["third"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("start").unwrap();
    until(&mut rx, is_update).await;
    agent.follow_up("f1");
    agent.follow_up("f2");
    gate.notify_one();
    let events = until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(last_user(&requests[1]).as_deref(), Some("f1"));
    assert!(!user_texts(&requests[1]).contains(&"f2".to_owned()));
    assert_eq!(last_user(&requests[2]).as_deref(), Some("f2"));
    let labels = labels(&events);
    assert_eq!(count(&labels, "agent_end"), 1);
    assert_eq!(count(&labels, "turn_start:3"), 1);
    assert!(agent.state().error.is_none());
}

#[tokio::test]
async fn follow_up_all_mode_delivers_the_whole_queue_in_one_turn() {
    let gate = Arc::new(Notify::new());
    let provider =
        ScriptedProvider::new(vec![gated_text("first", &gate), Reply::text(&["second"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_queue_mode(QueueKind::FollowUp, QueueMode::All);
    let mut rx = agent.subscribe(None);

    agent.prompt("start").unwrap();
    until(&mut rx, is_update).await;
    agent.follow_up("f1");
    agent.follow_up("f2");
    gate.notify_one();
    let events = until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    let users = user_texts(&requests[1]);
    assert_eq!(users[users.len() - 2..], ["f1".to_owned(), "f2".to_owned()]);
    assert_eq!(count(&labels(&events), "turn_start:3"), 0);
    assert!(agent.state().error.is_none(), "no extra request was made");
    assert!(agent.queued(QueueKind::FollowUp).is_empty());
}

#[tokio::test]
async fn queue_modes_are_independent_per_queue() {
    // Steering in `all` mode, follow-up still one at a time.
    let gate = Arc::new(Notify::new());
    let provider = ScriptedProvider::new(vec![
        gated_text("first", &gate),
        Reply::text(&["steered"]),
        Reply::text(&["f1 answered"]),
        Reply::text(&["f2 answered"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_queue_mode(QueueKind::Steering, QueueMode::All);
    let mut rx = agent.subscribe(None);

    agent.prompt("start").unwrap();
    until(&mut rx, is_update).await;
    agent.steer("s1");
    agent.steer("s2");
    agent.follow_up("f1");
    agent.follow_up("f2");
    gate.notify_one();
    until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    let users = user_texts(&requests[1]);
    assert_eq!(users[users.len() - 2..], ["s1".to_owned(), "s2".to_owned()]);
    assert_eq!(last_user(&requests[2]).as_deref(), Some("f1"));
    assert_eq!(last_user(&requests[3]).as_deref(), Some("f2"));
}

#[tokio::test]
async fn queue_update_events_show_pending_texts() {
    let provider = ScriptedProvider::new(vec![
        Reply::text(&["one"]),
        Reply::text(&["two"]),
        Reply::text(&["three"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(Some(&[EventKind::QueueUpdate, EventKind::AgentEnd]));

    agent.steer("s1");
    agent.follow_up("f1");
    agent.follow_up("f2");
    agent.prompt("go").unwrap();
    let events = until_agent_end(&mut rx).await;

    agent.follow_up("later");
    let removed = agent.clear_queue(None);
    assert_eq!(
        removed
            .iter()
            .map(Message::preview_text)
            .collect::<Vec<_>>(),
        ["later"]
    );
    let mut tail = Vec::new();
    for _ in 0..2 {
        tail.push(
            tokio::time::timeout(DEADLINE, rx.recv())
                .await
                .expect("queue_update after follow_up/clear")
                .expect("channel open"),
        );
    }

    let updates: Vec<(Vec<String>, Vec<String>)> = events
        .iter()
        .chain(&tail)
        .filter_map(|e| match e {
            AgentEvent::QueueUpdate {
                steering,
                follow_up,
            } => Some((steering.clone(), follow_up.clone())),
            _ => None,
        })
        .collect();
    let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<String>>();
    assert_eq!(
        updates,
        [
            (s(&["s1"]), s(&[])),
            (s(&["s1"]), s(&["f1"])),
            (s(&["s1"]), s(&["f1", "f2"])),
            // The run takes the steering message before its first call...
            (s(&[]), s(&["f1", "f2"])),
            // ...then one follow-up per turn.
            (s(&[]), s(&["f2"])),
            (s(&[]), s(&[])),
            // After the run: queued, then cleared.
            (s(&[]), s(&["later"])),
            (s(&[]), s(&[])),
        ]
    );
    assert_eq!(provider.requests().len(), 3);
}
