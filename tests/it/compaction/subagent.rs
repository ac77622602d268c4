//! A subagent whose window fills compacts as the main agent does, and its events (the
//! compaction's too) reach the UI tagged with the spawn call.

use crate::support::DEADLINE;
use crate::support::compacting::*;
use crate::support::fake_llm::FakeLlm;
use crate::support::fake_llm::drive::openai;
use crate::support::runtime::until_runtime;
use claw_tui::agent::{AgentEvent, CompactionReason, CompactionResult};
use claw_tui::runtime::{
    MessageBus, RuntimeEvent, SYSTEM_CHANNEL, SubagentConfig, SubagentManager, SubagentStatus,
    runtime_channel,
};
use claw_tui::tools::ToolRegistry;
use claw_tui::tools::exec::Approver;
use claw_tui::tools::policy::{PolicyConfig, ToolPolicy};
use serde_json::json;
use std::sync::Arc;

#[tokio::test]
async fn a_subagent_compacts_when_its_window_fills() {
    let server = FakeLlm::start(vec![
        call_reply("c1", "read_file", json!({"path": "a.txt"}), 600),
        call_reply("c2", "read_file", json!({"path": "b.txt"}), 4_500),
        text_reply("## Goal\nCompare two files (sub-summary)", 900),
        text_reply("the files differ", 3_000),
    ])
    .await;
    let registry: ToolRegistry = [big_reader(8_000)].into_iter().collect();
    let policy = ToolPolicy::new(registry, PolicyConfig::default(), Approver::Nobody);
    let bus = MessageBus::new();
    let (tx, mut events) = runtime_channel();
    let config = SubagentConfig {
        compaction: settings(),
        context_window: Some(WINDOW),
        ..SubagentConfig::new("test-model")
    };
    let manager = SubagentManager::new(Arc::new(openai(&server)), policy, bus.clone(), tx, config);
    manager
        .spawn_task("call-main-1", "compare a.txt and b.txt".into(), None)
        .unwrap();
    let seen = until_runtime(&mut events, |e| {
        matches!(e, RuntimeEvent::SubagentUpdate { info } if info.status == SubagentStatus::Done)
    })
    .await;
    let compaction: Vec<&AgentEvent> = seen
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::SubagentEvent {
                parent_tool_call_id,
                event,
                ..
            } if parent_tool_call_id == "call-main-1" => Some(event),
            _ => None,
        })
        .filter(|e| {
            matches!(
                e,
                AgentEvent::CompactionStart { .. } | AgentEvent::CompactionEnd(_)
            )
        })
        .collect();
    assert_eq!(compaction.len(), 2, "{seen:?}");
    assert!(matches!(
        compaction[0],
        AgentEvent::CompactionStart {
            reason: CompactionReason::Threshold,
            ..
        }
    ));
    let AgentEvent::CompactionEnd(end) = compaction[1] else {
        unreachable!()
    };
    assert_eq!(end.outcome, CompactionResult::Compacted);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(is_summary_request(&requests[2]));
    assert!(
        content(&requests[3], 0).contains("subagent"),
        "{:?}",
        content(&requests[3], 0)
    );
    assert!(content(&requests[3], 1).contains("(sub-summary)"));
    tokio::time::timeout(DEADLINE, manager.wait_all())
        .await
        .unwrap();
    let results: Vec<String> = bus
        .drain(SYSTEM_CHANNEL)
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert!(
        results.iter().any(|r| r.contains("the files differ")),
        "{results:?}"
    );
}
