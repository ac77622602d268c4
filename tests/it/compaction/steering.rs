//! A steering message injected at the tool boundary right before a compaction is the
//! request's own input: it is kept verbatim whatever it costs, never summarised away.

use crate::support::FnTool;
use crate::support::compacting::*;
use crate::support::fake_llm::FakeLlm;
use crate::support::{until, until_agent_end};
use claw_tui::agent::{AgentEvent, CompactionResult, ToolResult};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::Notify;

#[tokio::test]
async fn a_steering_message_injected_before_a_compaction_is_kept_verbatim() {
    let server = FakeLlm::start(vec![
        call_reply("c1", "read_file", json!({"path": "a.txt"}), 600),
        call_reply("c2", "read_file", json!({"path": "b.txt"}), 4_500),
        text_reply("## Goal\nCompare a.txt and b.txt (steered)", 900),
        text_reply("done", 3_000),
    ])
    .await;
    // The second read waits until the test has steered.
    let gate = Arc::new(Notify::new());
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reader = {
        let (gate, calls) = (gate.clone(), calls.clone());
        FnTool::new(
            "read_file",
            json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            move |_, _, _, _| {
                let (gate, calls) = (gate.clone(), calls.clone());
                async move {
                    if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 1 {
                        gate.notified().await;
                    }
                    ToolResult::text("x".repeat(8_000))
                }
            },
        )
    };
    let agent = agent_on(&server, settings());
    agent.set_tools(vec![reader]);
    let mut rx = agent.subscribe(None);
    agent.prompt("compare a.txt and b.txt").unwrap();
    let mut events = until(&mut rx, |e| {
        matches!(e, AgentEvent::ToolExecutionStart { tool_call_id, .. } if tool_call_id == "c2")
    })
    .await;
    // About 3,000 tokens: more than keep_recent_tokens (2,500) on its own.
    let steer = format!(
        "use the second file as the reference: {}",
        "s".repeat(12_000)
    );
    agent.steer(steer.clone());
    gate.notify_one();
    events.extend(until_agent_end(&mut rx).await);
    let end = compaction_ends(&events).remove(0);
    assert_eq!(end.outcome, CompactionResult::Compacted, "{end:?}");

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(is_summary_request(&requests[2]));
    assert!(!content(&requests[2], 1).contains("use the second file"));
    // The request after it: the summary, then the steering message as it was typed.
    let next = messages(&requests[3]);
    assert!(content(&requests[3], 1).contains("(steered)"));
    assert_eq!(next.last().unwrap()["content"], steer.as_str());
    let kept = end.first_kept_message.unwrap();
    let state = agent.state();
    assert_eq!(
        state.messages[kept].preview_text(),
        claw_tui::agent::Message::user(steer).preview_text()
    );
}
