//! A turn larger than one summary request: it is summarised in chunks that each fit the
//! window, each one updating the summary of the chunks before it, and no chunk separates
//! a tool call from its result; `[compaction] model` writes them; and a summary request
//! the provider refuses as too long is planned again in smaller chunks.

use crate::support::compacting::*;
use crate::support::fake_llm::FakeLlm;
use crate::support::until_agent_end;
use claw_tui::agent::compaction::SUMMARY_PREFIX;
use claw_tui::agent::{
    AssistantMessage, Block, CompactionResult, CompactionSettings, Message, ToolResultMessage,
};
use serde_json::json;

/// One user turn with `rounds` tool calls, each answered with 2,000 characters (about
/// 520 tokens a round, the summary request's cut not needed).
fn one_long_turn(rounds: usize) -> Vec<Message> {
    let mut history = vec![Message::user("read every part of the log")];
    for i in 0..rounds {
        let id = format!("call-{i:02}");
        history.push(Message::Assistant(AssistantMessage {
            content: vec![Block::ToolCall {
                id: id.clone(),
                name: "read_file".into(),
                args: json!({"path": format!("part-{i:02}.log")}),
            }],
            model: "test-model".into(),
            ..AssistantMessage::default()
        }));
        history.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: id,
            tool_name: "read_file".into(),
            content: format!("part {i:02}: {}", "l".repeat(1_990)),
            images: Vec::new(),
            details: serde_json::Value::Null,
            is_error: false,
            timestamp: 0,
        }));
    }
    history
}

#[tokio::test]
async fn a_turn_larger_than_a_summary_request_is_summarised_in_chunks_that_each_fit() {
    let server = FakeLlm::start(vec![
        text_reply("## Goal\nRead the log (chunk-one)", 900),
        text_reply("## Goal\nRead the log (chunk-two)", 900),
        text_reply("## Goal\nRead the log (chunk-three)", 900),
        text_reply("went on", 3_000),
    ])
    .await;
    // Summaries by a model of their own ([compaction] model), on the same provider.
    let agent = agent_on(
        &server,
        CompactionSettings {
            model: Some("summary-model".into()),
            ..settings()
        },
    );
    agent.replace_messages(one_long_turn(20)).unwrap();
    let mut rx = agent.subscribe(None);
    agent.compact(None).unwrap();
    let events = until_agent_end(&mut rx).await;
    let end = compaction_ends(&events).remove(0);
    assert_eq!(end.outcome, CompactionResult::Compacted, "{end:?}");
    let kept = end.first_kept_message.unwrap();
    assert!(
        kept % 2 == 1,
        "the cut is on a call, never on its result: {kept}"
    );

    let requests = server.requests();
    let summaries: Vec<_> = requests.iter().filter(|r| is_summary_request(r)).collect();
    assert!(summaries.len() >= 2, "{} summary requests", summaries.len());
    let mut seen = Vec::new();
    for (n, request) in summaries.iter().enumerate() {
        // Each request fits the window with room for the reply (4 bytes a token).
        let tokens = request.body["messages"].to_string().len() / 4;
        assert!(tokens < 6_000, "summary request {n}: about {tokens} tokens");
        assert_eq!(request.body["model"], "summary-model");
        let asked = content(request, 1);
        // Every call in a chunk comes with its result.
        for i in 0..20 {
            let call = asked.contains(&format!("[tool call call-{i:02}: read_file]"));
            let result = asked.contains(&format!("[tool result call-{i:02}: read_file]"));
            assert_eq!(call, result, "call-{i:02} in request {n}");
            if call {
                seen.push(i);
            }
        }
        // From the second on, each updates the summary so far.
        if n > 0 {
            assert!(asked.contains("<previous-summary>"), "{asked}");
            let before = ["(chunk-one)", "(chunk-two)"][n - 1];
            assert!(asked.contains(before), "request {n} lacks {before}");
        }
    }
    // Every summarised call was in exactly one chunk, in order, up to the cut.
    let summarised = (kept - 1) / 2;
    assert_eq!(seen, (0..summarised).collect::<Vec<_>>());

    // The next request carries the merged summary, then the kept calls and results.
    agent.prompt("go on").unwrap();
    until_agent_end(&mut rx).await;
    let requests = server.requests();
    let last = requests.last().unwrap();
    assert_eq!(last.body["model"], "test-model");
    assert!(content(last, 1).starts_with(SUMMARY_PREFIX));
    let last_summary = ["(chunk-one)", "(chunk-two)", "(chunk-three)"][summaries.len() - 1];
    assert!(content(last, 1).contains(last_summary));
    assert_eq!(
        messages(last)[2]["tool_calls"][0]["id"],
        format!("call-{summarised:02}")
    );
}

#[tokio::test]
async fn a_summary_request_refused_as_too_long_is_planned_again_in_smaller_chunks() {
    let mut script = vec![openai_overflow()];
    script.extend((1..=6).map(|n| text_reply(&format!("## Goal\nRead the log (s{n})"), 900)));
    let server = FakeLlm::start(script).await;
    let agent = agent_on(&server, settings());
    agent.replace_messages(one_long_turn(8)).unwrap();
    let mut rx = agent.subscribe(None);
    agent.compact(None).unwrap();
    let events = until_agent_end(&mut rx).await;
    let end = compaction_ends(&events).remove(0);
    assert_eq!(end.outcome, CompactionResult::Compacted, "{end:?}");
    let requests = server.requests();
    assert!(requests.iter().all(is_summary_request));
    // One request for all of it, refused; then the same part again in smaller requests,
    // the first of them starting afresh and the others updating it.
    let size = |i: usize| requests[i].body["messages"].to_string().len();
    assert!(requests.len() >= 3, "{} requests", requests.len());
    for i in 1..requests.len() {
        assert!(size(i) < size(0), "request {i}: {} of {}", size(i), size(0));
    }
    assert!(!content(&requests[1], 1).contains("<previous-summary>"));
    assert!(content(&requests[2], 1).contains("(s1)"));
    let last = requests.len() - 1;
    assert!(
        end.summary.contains(&format!("(s{last})")),
        "{}",
        end.summary
    );
}
