//! Cancelling a compaction (nothing lost, the history as before) and messages that
//! arrive while one runs (delivered after it).

use crate::support::compacting::*;
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text, usage};
use crate::support::fake_llm::{BodyEnd, FakeLlm, Scripted, Step};
use crate::support::{until, until_agent_end};
use claw_tui::agent::{AgentEvent, CompactionResult, Message, StopReason};
use claw_tui::runtime::{MessageBus, Supervisor, SupervisorOutcome, runtime_channel};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::Notify;

/// A summary reply that waits for `gate` before its first byte.
fn gated_summary(gate: &Arc<Notify>, summary: &str) -> Scripted {
    Scripted::sse(Vec::<String>::new())
        .then(Step::Wait(gate.clone()))
        .then_chunks([
            chunk(json!({"role": "assistant", "content": ""}), None),
            text(summary),
            finish("stop"),
            usage(900, 50, 0),
            done_marker(),
        ])
}

/// Two calls whose results pass the threshold, then `summary` for the compaction.
fn filling_up(summary: Scripted, rest: Vec<Scripted>) -> Vec<Scripted> {
    let mut script = vec![
        call_reply("c1", "read_file", json!({"path": "a.txt"}), 600),
        call_reply("c2", "read_file", json!({"path": "b.txt"}), 4_500),
        summary,
    ];
    script.extend(rest);
    script
}

#[tokio::test]
async fn abort_during_a_compaction_cancels_it_and_changes_nothing() {
    let hanging = Scripted::sse(Vec::<String>::new()).then(Step::Hang);
    let server = FakeLlm::start(filling_up(hanging, Vec::new())).await;
    let agent = agent_on(&server, settings());
    agent.set_tools(vec![big_reader(8_000)]);
    let mut rx = agent.subscribe(None);
    agent.prompt("compare a.txt and b.txt").unwrap();
    until(&mut rx, |e| matches!(e, AgentEvent::CompactionStart { .. })).await;
    // The summary request is at the server (and hangs there) before it is cancelled.
    server.until_requests(3).await;
    let before: Vec<Message> = agent.state().messages.to_vec();
    agent.abort();
    let events = until_agent_end(&mut rx).await;
    let ends = compaction_ends(&events);
    assert_eq!(ends.len(), 1);
    assert!(ends[0].aborted);
    assert_eq!(ends[0].outcome, CompactionResult::Aborted);
    assert_eq!(ends[0].tokens_after, ends[0].tokens_before);
    // The summary request's connection was closed.
    assert_eq!(server.next_body_end().await, BodyEnd::Completed);
    assert_eq!(server.next_body_end().await, BodyEnd::Completed);
    assert_eq!(server.next_body_end().await, BodyEnd::Dropped);
    // The history is as it was, plus the turn's answer marked as interrupted; nothing
    // is summarised and no request went out after the cancel.
    let state = agent.state();
    assert!(state.compaction.is_none());
    assert_eq!(state.messages.to_vec()[..before.len()], before[..]);
    assert_eq!(state.messages.len(), before.len() + 1);
    let last = state.messages.last().unwrap().as_assistant().unwrap();
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert!(!state.is_streaming);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_follow_up_sent_during_a_compaction_is_delivered_after_it() {
    let gate = Arc::new(Notify::new());
    let server = FakeLlm::start(filling_up(
        gated_summary(&gate, "## Goal\nthe gist"),
        vec![text_reply("done", 3_000), text_reply("followed up", 3_100)],
    ))
    .await;
    let agent = agent_on(&server, settings());
    agent.set_tools(vec![big_reader(8_000)]);
    let mut rx = agent.subscribe(None);
    agent.prompt("compare a.txt and b.txt").unwrap();
    until(&mut rx, |e| matches!(e, AgentEvent::CompactionStart { .. })).await;
    agent.follow_up("and then this");
    gate.notify_one();
    let events = until_agent_end(&mut rx).await;
    let end_at = events
        .iter()
        .position(|e| matches!(e, AgentEvent::CompactionEnd(_)))
        .unwrap();
    let delivered_at = events
        .iter()
        .position(|e| {
            matches!(e, AgentEvent::MessageEnd { message: Message::User(u) } if u.content == "and then this")
        })
        .unwrap();
    assert!(end_at < delivered_at);
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let last = messages(&requests[4]);
    assert!(content(&requests[4], 1).contains("the gist"));
    assert_eq!(last[last.len() - 1]["content"], "and then this");
    assert_eq!(last[last.len() - 2]["content"], "done");
}

#[tokio::test]
async fn slash_compact_with_a_focus_then_a_message_sent_meanwhile() {
    let gate = Arc::new(Notify::new());
    let server = FakeLlm::start(vec![
        gated_summary(&gate, "## Goal\nthe parser (focused)"),
        text_reply("answered after compacting", 1_000),
    ])
    .await;
    let agent = agent_on(&server, settings());
    let history: Vec<Message> = (0..12)
        .map(|i| Message::user(format!("note {i}: {}", "n".repeat(1_200))))
        .collect();
    agent.replace_messages(history).unwrap();
    let mut rx = agent.subscribe(None);
    let bus = MessageBus::new();
    let (tx, _runtime_events) = runtime_channel();
    let supervisor = Supervisor::start(agent.clone(), &bus, tx).unwrap();
    supervisor
        .compact(Some("the parser design".into()))
        .unwrap();
    until(&mut rx, |e| matches!(e, AgentEvent::CompactionStart { .. })).await;
    // Busy compacting: a second /compact is refused, a message waits.
    assert!(supervisor.compact(None).is_err());
    assert_eq!(
        supervisor.submit("what next?"),
        SupervisorOutcome::QueuedFollowUp
    );
    gate.notify_one();
    let compacted = until_agent_end(&mut rx).await;
    let end = compaction_ends(&compacted).remove(0);
    assert_eq!(end.outcome, CompactionResult::Compacted);
    assert!(end.tokens_after < end.tokens_before);
    let answered = until_agent_end(&mut rx).await;
    assert_eq!(
        crate::support::final_text(&answered),
        "answered after compacting"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(content(&requests[0], 1).contains("pay particular attention to: the parser design"));
    let after = messages(&requests[1]);
    assert!(content(&requests[1], 1).contains("(focused)"));
    assert_eq!(after.last().unwrap()["content"], "what next?");
    assert!(after.len() < 12);
}
