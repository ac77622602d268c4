//! What the user is told when an overflow is not recovered: the advice matches what the
//! loop did (never "/compact" right after a compaction that did not help, never "/compact"
//! when there is nothing left to compact), and a refused request below the window the
//! table assumes still compacts.

use crate::support::compacting::*;
use crate::support::fake_llm::{FakeLlm, Scripted, Step};
use crate::support::reading::final_assistant;
use crate::support::{until, until_agent_end};
use claw_tui::agent::{Agent, AgentEvent, CompactionResult, QueueKind};
use serde_json::json;

/// The error text of the run's last answer, which must be a refused overflow.
fn last_overflow(events: &[AgentEvent]) -> String {
    let last = final_assistant(events);
    assert!(last.is_context_overflow(), "{last:?}");
    last.error_message.unwrap()
}

fn says(error: &str, parts: &[&str], never: &[&str]) {
    for part in parts {
        assert!(error.contains(part), "{part:?} in {error}");
    }
    for part in never {
        assert!(!error.contains(part), "{part:?} in {error}");
    }
}

#[tokio::test]
async fn a_failed_summary_request_changes_nothing_and_suggests_compact_or_new() {
    let server = FakeLlm::start(vec![
        openai_overflow(),
        Scripted::json(
            400,
            json!({"error": {"message": "model \"test-model\" does not accept this request",
                   "type": "invalid_request_error"}}),
        ),
    ])
    .await;
    let agent = agent_on(&server, settings());
    let history = earlier_history(5);
    agent.replace_messages(history.clone()).unwrap();
    agent.follow_up("typed while it ran");
    let mut rx = agent.subscribe(None);
    agent.prompt("the new question").unwrap();
    let events = until_agent_end(&mut rx).await;
    let end = compaction_ends(&events).remove(0);
    assert_eq!(end.outcome, CompactionResult::Failed);
    assert!(end.error.as_deref().unwrap().contains("does not accept"));
    let error = last_overflow(&events);
    says(
        &error,
        &[
            "no longer fits the context window",
            "Compacting it automatically failed, so nothing changed",
            "does not accept this request",
            "/compact",
            "/new",
        ],
        &[],
    );
    // No retry went out; the history is as it was plus the turn; the queue is intact.
    assert_eq!(server.requests().len(), 2);
    let state = agent.state();
    assert!(state.compaction.is_none());
    assert_eq!(state.messages.to_vec()[..history.len()], history[..]);
    assert_eq!(state.messages.len(), history.len() + 2);
    assert_eq!(agent.queued(QueueKind::FollowUp).len(), 1);
}

#[tokio::test]
async fn cancelling_an_overflow_compaction_suggests_compact_or_new() {
    let server = FakeLlm::start(vec![
        openai_overflow(),
        Scripted::sse(Vec::<String>::new()).then(Step::Hang),
    ])
    .await;
    let agent = agent_on(&server, settings());
    agent.replace_messages(earlier_history(5)).unwrap();
    let mut rx = agent.subscribe(None);
    agent.prompt("the new question").unwrap();
    let mut events = until(&mut rx, |e| matches!(e, AgentEvent::CompactionStart { .. })).await;
    server.until_requests(2).await;
    agent.abort();
    events.extend(until_agent_end(&mut rx).await);
    assert!(compaction_ends(&events)[0].aborted);
    says(
        &last_overflow(&events),
        &[
            "Compacting it was cancelled, so nothing changed",
            "/compact",
            "/new",
        ],
        &[],
    );
    assert!(agent.state().compaction.is_none());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_turn_too_large_on_its_own_is_not_told_to_compact() {
    let server = FakeLlm::start(vec![openai_overflow()]).await;
    let agent = agent_on(&server, settings());
    let mut rx = agent.subscribe(None);
    agent
        .prompt(format!("read this: {}", "p".repeat(40_000)))
        .unwrap();
    let events = until_agent_end(&mut rx).await;
    // Nothing older to summarise: no compaction is announced, no summary request made.
    assert!(compaction_ends(&events).is_empty());
    assert_eq!(server.requests().len(), 1);
    says(
        &last_overflow(&events),
        &[
            "Nothing older is left to compact",
            "/new",
            "smaller than the 8000 tokens assumed here, set context_window",
        ],
        &["/compact"],
    );
}

#[tokio::test]
async fn refused_again_after_compacting_is_not_told_to_compact_again() {
    let server = FakeLlm::start(vec![
        openai_overflow(),
        text_reply("## Goal\nthe gist", 500),
        openai_overflow(),
    ])
    .await;
    let agent = agent_on(&server, settings());
    agent.replace_messages(earlier_history(5)).unwrap();
    let mut rx = agent.subscribe(None);
    agent.prompt("the new question").unwrap();
    let events = until_agent_end(&mut rx).await;
    says(
        &last_overflow(&events),
        &[
            "still does not fit after compacting",
            "/new",
            "keep_recent_tokens",
            "set context_window",
        ],
        &["/compact"],
    );
}

#[tokio::test]
async fn a_server_whose_window_is_smaller_than_the_table_says_still_gets_a_compacted_retry() {
    // No context_window configured: "test-model" gets the default 128k, and the default
    // keep_recent_tokens (20,000) is more than the whole history. The server refuses
    // anyway (a local server started with a small context).
    let server = FakeLlm::start(vec![
        openai_overflow(),
        text_reply("## Goal\nthe gist (small server)", 500),
        text_reply("recovered", 900),
    ])
    .await;
    let provider = std::sync::Arc::new(crate::support::fake_llm::drive::openai(&server));
    let agent = Agent::new(provider, "test-model");
    agent.replace_messages(earlier_history(5)).unwrap();
    let mut rx = agent.subscribe(None);
    agent.prompt("the new question").unwrap();
    let events = until_agent_end(&mut rx).await;
    let end = compaction_ends(&events).remove(0);
    assert_eq!(end.outcome, CompactionResult::Compacted, "{end:?}");
    // A quarter of the refused request is kept verbatim at most: the newest messages.
    let kept = end.first_kept_message.unwrap();
    assert!((5..10).contains(&kept), "{end:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(is_summary_request(&requests[1]));
    assert!(content(&requests[2], 0).contains("(small server)"));
    assert_eq!(crate::support::final_text(&events), "recovered");
}
