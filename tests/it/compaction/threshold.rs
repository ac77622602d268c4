//! Compaction at the threshold: the summary requests (no call cut from its result, tool
//! results cut to 2,000 characters, the previous summary updated the second time), the
//! request after each (system prompt with AGENTS.md, the summary, the recent messages),
//! the events and the context figures; a large system prompt, which leaves less room to
//! keep; and `enabled = false`, which never compacts.

use crate::support::compacting::*;
use crate::support::fake_llm::FakeLlm;
use crate::support::{run, until_agent_end};
use claw_tui::agent::compaction::SUMMARY_PREFIX;
use claw_tui::agent::{
    AgentEvent, CompactionReason, CompactionResult, CompactionSettings, Message,
};
use claw_tui::runtime::build_system_prompt;
use serde_json::json;

const AGENTS_RULE: &str = "Always run the tests before saying a change is done (rule 7).";

#[tokio::test]
async fn the_history_is_summarised_at_the_threshold_and_the_model_sees_summary_then_recent() {
    let server = FakeLlm::start(vec![
        call_reply("c1", "read_file", json!({"path": "a.txt"}), 600),
        call_reply("c2", "read_file", json!({"path": "b.txt"}), 4_500),
        text_reply("## Goal\nCompare a.txt and b.txt (summary-one)", 900),
        text_reply("done", 3_000),
        call_reply("c3", "read_file", json!({"path": "c.txt"}), 4_500),
        text_reply("## Goal\nCompare the three files (summary-two)", 900),
        text_reply("all done", 2_000),
    ])
    .await;
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("AGENTS.md"), AGENTS_RULE).unwrap();
    let config_dir = tempfile::tempdir().unwrap();
    let agent = agent_on(&server, settings());
    agent.set_tools(vec![big_reader(8_000)]);
    agent.set_system_prompt(build_system_prompt(
        workspace.path(),
        config_dir.path(),
        &["read_file".to_owned()],
        None,
    ));

    let first = run(&agent, "compare a.txt and b.txt").await;
    let ends = compaction_ends(&first);
    assert_eq!(ends.len(), 1, "{first:?}");
    let end = &ends[0];
    assert_eq!(
        (end.reason, end.outcome, end.aborted),
        (
            CompactionReason::Threshold,
            CompactionResult::Compacted,
            false
        )
    );
    // The last answer reported 4,500 + 20 tokens; the 8,000-character result came after.
    assert_eq!(end.tokens_before, 4_520 + 2_005);
    assert!(end.tokens_after < 3_000, "{end:?}");
    assert_eq!(end.first_kept_message, Some(3));
    assert!(first.iter().any(|e| matches!(
        e,
        AgentEvent::CompactionStart { reason: CompactionReason::Threshold, tokens_before } if *tokens_before == end.tokens_before
    )));

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let summary = &requests[2];
    assert!(is_summary_request(summary), "{:?}", summary.body);
    assert!(
        summary
            .body
            .get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty))
    );
    let asked = content(summary, 1);
    assert!(asked.contains("[user]\ncompare a.txt and b.txt"), "{asked}");
    assert!(asked.contains("[tool call c1: read_file] {\"path\":\"a.txt\"}"));
    assert!(asked.contains(&format!(
        "[tool result c1: read_file]\n{}\n[… 6000 more characters cut]",
        "x".repeat(2_000)
    )));
    assert!(
        !asked.contains(&"x".repeat(2_001)),
        "a tool result longer than 2,000 characters"
    );
    // The second call and its result are kept verbatim, both of them.
    assert!(!asked.contains("c2"), "{asked}");
    for section in [
        "## Goal",
        "## Progress",
        "## Next steps",
        "## Critical facts",
        "## Files",
    ] {
        assert!(asked.contains(section), "{section}");
    }

    // The request after compaction: system prompt (AGENTS.md in it), summary, kept part.
    let next = messages(&requests[3]);
    assert_eq!(next.len(), 4, "{next:?}");
    assert_eq!(next[0]["role"], "system");
    assert!(content(&requests[3], 0).contains(AGENTS_RULE));
    assert_eq!(next[1]["role"], "user");
    let summary_message = content(&requests[3], 1);
    assert!(summary_message.starts_with(SUMMARY_PREFIX));
    assert!(summary_message.contains("(summary-one)"));
    assert_eq!(next[2]["tool_calls"][0]["id"], "c2");
    assert_eq!(next[3]["tool_call_id"], "c2");
    assert_eq!(next[3]["content"].as_str().unwrap().len(), 8_000);

    // The whole history stays; the model's view is recorded as the compaction.
    let state = agent.state();
    assert_eq!(state.messages.len(), 6);
    assert_eq!(
        state.compaction.as_ref().map(|c| c.first_kept_message),
        Some(3)
    );
    let turn_end_usage: Vec<_> = first
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TurnEnd { context_usage, .. } => Some(*context_usage),
            _ => None,
        })
        .collect();
    assert_eq!(turn_end_usage.len(), 3);
    assert!(
        turn_end_usage
            .iter()
            .all(|u| u.window == WINDOW && u.threshold == 6_000)
    );
    // After the last answer (3,000 + 10 reported), the next request is about that big.
    assert_eq!(turn_end_usage[2].tokens, 3_010);
    assert_eq!(agent.context_usage().tokens, 3_010);

    // A second compaction updates the first summary instead of summarising it blindly.
    let second = run(&agent, "now c.txt too").await;
    let ends = compaction_ends(&second);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].first_kept_message, Some(5));
    let requests = server.requests();
    assert_eq!(requests.len(), 7);
    let update = content(&requests[5], 1);
    assert!(update.contains("<previous-summary>\n## Goal\nCompare a.txt and b.txt (summary-one)\n</previous-summary>"), "{update}");
    assert!(
        update.contains("[tool call c2: read_file]")
            && update.contains("[tool result c2: read_file]")
    );
    assert!(
        !update.contains("[tool call c1") && !update.contains("c3"),
        "{update}"
    );
    let last = messages(&requests[6]);
    let roles: Vec<&str> = last.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "user", "assistant", "tool"]
    );
    assert!(content(&requests[6], 1).contains("(summary-two)"));
    assert!(content(&requests[6], 0).contains(AGENTS_RULE));
    assert_eq!(content(&requests[6], 2), "done");
    assert_eq!(content(&requests[6], 3), "now c.txt too");
    assert_eq!(last[4]["tool_calls"][0]["id"], "c3");
    assert_eq!(agent.state().messages.len(), 10);
}

#[tokio::test]
async fn with_compaction_off_no_summary_request_is_ever_made() {
    let server = FakeLlm::start(vec![
        call_reply("c1", "read_file", json!({"path": "a.txt"}), 600),
        call_reply("c2", "read_file", json!({"path": "b.txt"}), 4_500),
        text_reply("done", 7_900),
        openai_overflow(),
    ])
    .await;
    let agent = agent_on(
        &server,
        CompactionSettings {
            enabled: false,
            ..settings()
        },
    );
    agent.set_tools(vec![big_reader(8_000)]);
    let first = run(&agent, "compare a.txt and b.txt").await;
    assert!(compaction_ends(&first).is_empty());
    assert!(
        !first
            .iter()
            .any(|e| matches!(e, AgentEvent::CompactionStart { .. }))
    );
    // Past the threshold, and the provider refuses: a clear error, still nothing sent.
    assert!(agent.context_usage().above_threshold());
    let mut rx = agent.subscribe(None);
    agent.prompt("and once more").unwrap();
    let second = until_agent_end(&mut rx).await;
    assert!(compaction_ends(&second).is_empty());
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(!requests.iter().any(is_summary_request));
    let Some(AgentEvent::AgentEnd { messages }) = second.last() else {
        unreachable!()
    };
    let failed = messages
        .iter()
        .rev()
        .find_map(Message::as_assistant)
        .unwrap();
    assert!(failed.is_context_overflow());
    let error = failed.error_message.as_deref().unwrap();
    for part in [
        "no longer fits the context window",
        "/compact",
        "/new",
        "Automatic compaction is off ([compaction] enabled = false)",
    ] {
        assert!(error.contains(part), "{part:?} in {error}");
    }
    assert!(agent.state().compaction.is_none());
}

#[tokio::test]
async fn a_large_system_prompt_leaves_less_kept_so_the_compacted_request_is_under_the_threshold() {
    let server = FakeLlm::start(vec![
        text_reply("## Goal\nKeep taking notes (big-prompt)", 900),
        text_reply("noted", 4_400),
    ])
    .await;
    let agent = agent_on(&server, settings());
    // About 3,500 tokens in every request: with 2,500 kept verbatim and the summary, a
    // compacted request would be over the 6,000-token threshold again.
    agent.set_system_prompt(format!("You are the test agent. {}", "r".repeat(14_000)));
    let notes: Vec<Message> = (0..10)
        .map(|i| Message::user(format!("note {i}: {}", "n".repeat(1_200))))
        .collect();
    agent.replace_messages(notes).unwrap();
    assert!(agent.context_usage().above_threshold());
    let events = run(&agent, "one more note").await;
    let end = compaction_ends(&events).remove(0);
    assert_eq!(end.outcome, CompactionResult::Compacted, "{end:?}");
    // At most half of the 2,500 the system prompt leaves is kept: four notes (and the
    // prompt), not eight.
    assert_eq!(end.first_kept_message, Some(6));
    assert!(end.tokens_after < 6_000 - 500, "{end:?}");
    let requests = server.requests();
    assert_eq!(messages(&requests[1]).len(), 1 + 1 + 4 + 1);
}
