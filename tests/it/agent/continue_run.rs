#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! `continue_run` from every kind of tail, and `reset`.

use crate::support::history::{assistant, call, describe_request, result};
use crate::support::reading::{count, final_assistant};
use crate::support::*;
use claw_tui::agent::{
    Agent, AgentError, AgentEvent, Message, MessageDelta, QueueKind, StopReason,
};
use claw_tui::llm::LlmEvent;

// ---------------------------------------------------------------------------------------
// continue_run
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn continue_from_a_user_message_tail() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["answer"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent
        .replace_messages(vec![Message::user("resume here")])
        .unwrap();
    agent.continue_run().unwrap();
    let events = until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(describe_request(&requests[0]), ["user:resume here"]);
    assert_eq!(
        count(&labels(&events), "message_start:user"),
        0,
        "nothing is added before the call"
    );
    let roles: Vec<&str> = agent.state().messages.iter().map(role).collect();
    assert_eq!(roles, ["user", "assistant"]);
}

#[tokio::test]
async fn continue_from_a_tool_result_tail() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["the file says hi"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_tools(vec![echo_tool()]);
    let mut rx = agent.subscribe(None);

    agent
        .replace_messages(vec![
            Message::user("read it"),
            Message::Assistant(assistant(vec![call("c1", "echo")], StopReason::ToolUse)),
            Message::ToolResult(result("c1", "hi")),
        ])
        .unwrap();
    agent.continue_run().unwrap();
    until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        describe_request(&requests[0]),
        ["user:read it", "assistant:[\"c1\"]:ToolUse", "result:c1:hi"]
    );
}

#[tokio::test]
async fn continue_after_an_error_retries_without_the_failed_message() {
    let provider = ScriptedProvider::new(vec![
        Reply::error("connection reset"),
        Reply::text(&["second try"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("hi").unwrap();
    until_agent_end(&mut rx).await;
    assert!(agent.state().error.is_some());

    agent.continue_run().unwrap();
    let events = until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        describe_request(&requests[1]),
        ["user:hi"],
        "the failed message is not replayed"
    );
    assert_eq!(final_assistant(&events).text(), "second try");
    let state = agent.state();
    assert_eq!(state.error, None);
    let roles: Vec<&str> = state.messages.iter().map(role).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "assistant"],
        "the prompt is not duplicated"
    );
}

#[tokio::test]
async fn continue_after_an_abort_retries_without_the_partial_message() {
    let provider = ScriptedProvider::new(vec![
        Reply::Hang(vec![
            LlmEvent::Start,
            LlmEvent::Delta(MessageDelta::Text {
                index: 0,
                text: "half an ans".into(),
            }),
        ]),
        Reply::text(&["a whole answer"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("hi").unwrap();
    until(&mut rx, |e| matches!(e, AgentEvent::MessageUpdate { .. })).await;
    agent.abort();
    until_agent_end(&mut rx).await;

    agent.continue_run().unwrap();
    until_agent_end(&mut rx).await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(describe_request(&requests[1]), ["user:hi"]);
}

#[tokio::test]
async fn continue_from_an_answered_conversation_is_refused() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["done"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    assert!(
        matches!(agent.continue_run(), Err(AgentError::NothingToContinue(_))),
        "an empty conversation has nothing to continue"
    );
    assert!(!agent.state().is_streaming);

    agent.prompt("hi").unwrap();
    until_agent_end(&mut rx).await;
    let err = agent.continue_run().unwrap_err();
    assert!(matches!(err, AgentError::NothingToContinue(_)), "{err:?}");
    assert!(
        !agent.state().is_streaming,
        "a refused continue starts no run"
    );
    assert_eq!(provider.requests().len(), 1);
    assert!(rx.try_recv().is_err(), "a refused continue emits nothing");
}

#[tokio::test]
async fn continue_delivers_a_queued_follow_up() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["done"]), Reply::text(&["and more"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("hi").unwrap();
    until_agent_end(&mut rx).await;
    agent.follow_up("one more thing");
    agent.continue_run().unwrap();
    let events = until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        describe_request(&requests[1]),
        ["user:hi", "assistant:done[]:Stop", "user:one more thing"]
    );
    assert!(agent.queued(QueueKind::FollowUp).is_empty());
    assert_eq!(final_assistant(&events).text(), "and more");
}

#[tokio::test]
async fn continue_delivers_a_queued_steering_message() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["done"]), Reply::text(&["adjusted"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("hi").unwrap();
    until_agent_end(&mut rx).await;
    agent.steer("shorter please");
    agent.continue_run().unwrap();
    until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        describe_request(&requests[1]),
        ["user:hi", "assistant:done[]:Stop", "user:shorter please"]
    );
    assert!(agent.queued(QueueKind::Steering).is_empty());
}

/// `continue_run` checks the queue lengths while holding the state lock, while `steer`,
/// `follow_up` and `clear_queue` emit `queue_update` (which takes the state lock) while
/// holding the queue lock. A UI thread continuing while another thread queues a message
/// must not freeze the agent. This is a stress test: with a consistent lock order it
/// always passes; with the inverted order it deadlocks within a few hundred iterations on
/// a multi-core machine. The timeout is only a failure guard.
#[test]
fn continue_run_does_not_deadlock_with_concurrent_queue_changes() {
    const ROUNDS: usize = 10_000;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let agent = Agent::new(ScriptedProvider::new(Vec::new()), "scripted");
    let (done_tx, done_rx) = std::sync::mpsc::channel();

    let continuing = agent.clone();
    let handle = runtime.handle().clone();
    let tx = done_tx.clone();
    std::thread::spawn(move || {
        let _runtime = handle.enter();
        for _ in 0..ROUNDS {
            // Busy, NothingToContinue or a started run: all fine, only progress matters.
            let _ = continuing.continue_run();
        }
        tx.send("continue_run").unwrap();
    });
    let queueing = agent.clone();
    std::thread::spawn(move || {
        for _ in 0..ROUNDS {
            queueing.follow_up("x");
            queueing.clear_queue(None);
        }
        done_tx.send("follow_up/clear_queue").unwrap();
    });

    let mut finished = Vec::new();
    for _ in 0..2 {
        match done_rx.recv_timeout(DEADLINE) {
            Ok(who) => finished.push(who),
            Err(_) => {
                // Workers may be blocked on the same lock: do not wait for them.
                runtime.shutdown_background();
                panic!(
                    "deadlock: continue_run and queue changes stopped making progress (finished: {finished:?})"
                );
            }
        }
    }
    runtime.shutdown_background();
}

// ---------------------------------------------------------------------------------------
// Reset
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn reset_aborts_waits_and_clears_history_and_queues() {
    let provider = ScriptedProvider::new(vec![
        Reply::text(&["first answer"]),
        Reply::Hang(vec![LlmEvent::Start]),
        Reply::text(&["fresh answer"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("old topic").unwrap();
    until_agent_end(&mut rx).await;
    agent.prompt("still old").unwrap();
    until(&mut rx, |e| {
        matches!(
            e,
            AgentEvent::MessageStart {
                message: Message::Assistant(_)
            }
        )
    })
    .await;
    agent.steer("stale steering");
    agent.follow_up("stale follow-up");

    tokio::time::timeout(DEADLINE, agent.reset())
        .await
        .expect("reset finishes");

    let state = agent.state();
    assert!(!state.is_streaming, "reset waits for the run to end");
    assert!(
        state.messages.is_empty(),
        "history cleared: {:#?}",
        state.messages
    );
    assert_eq!(state.error, None, "the abort's error is cleared too");
    assert!(agent.queued(QueueKind::Steering).is_empty());
    assert!(agent.queued(QueueKind::FollowUp).is_empty());
    let events = until_agent_end(&mut rx).await;
    assert_eq!(
        final_assistant(&events).stop_reason,
        StopReason::Aborted,
        "the active run was aborted"
    );

    agent.prompt("new topic").unwrap();
    until_agent_end(&mut rx).await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        describe_request(&requests[2]),
        ["user:new topic"],
        "nothing from before the reset reaches the model"
    );
}

#[tokio::test]
async fn reset_while_idle_clears_the_error() {
    let provider = ScriptedProvider::new(vec![Reply::error("bad gateway")]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("hi").unwrap();
    until_agent_end(&mut rx).await;
    assert!(agent.state().error.is_some());

    tokio::time::timeout(DEADLINE, agent.reset())
        .await
        .expect("reset finishes");
    let state = agent.state();
    assert_eq!(state.error, None);
    assert!(state.messages.is_empty());
    assert!(matches!(
        agent.continue_run(),
        Err(AgentError::NothingToContinue(_))
    ));
}
