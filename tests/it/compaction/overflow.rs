//! Overflow recovery: a provider that refuses the request as too long gets one
//! compaction and one retry of the same turn (OpenAI, Anthropic and Gemini wordings,
//! Anthropic's 413 among them); refused
//! again, the run ends with a clear error and nothing queued is lost.

use crate::support::compacting::*;
use crate::support::fake_llm::anthropic as ant;
use crate::support::fake_llm::drive::anthropic;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::{label, until_agent_end};
use claw_tui::agent::compaction::SUMMARY_PREFIX;
use claw_tui::agent::{
    Agent, AgentEvent, AssistantMessage, CompactionReason, ErrorKind, Message, QueueKind,
};
use serde_json::json;
use std::sync::Arc;

fn answers(events: &[AgentEvent]) -> Vec<AssistantMessage> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } => Some(a.clone()),
            _ => None,
        })
        .collect()
}

async fn recovers(agent: Agent, server: &FakeLlm) {
    agent.replace_messages(earlier_history(6)).unwrap();
    let mut rx = agent.subscribe(None);
    agent.prompt("the new question").unwrap();
    let events = until_agent_end(&mut rx).await;
    let labels: Vec<String> = crate::support::labels(&events)
        .into_iter()
        .filter(|l| !l.starts_with("message_update") && !l.starts_with("queue"))
        .collect();
    assert_eq!(
        labels,
        [
            "agent_start",
            "turn_start:1",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "compaction_start",
            "compaction_end",
            "message_end:assistant",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end"
        ],
        "{events:?}"
    );
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::CompactionStart {
            reason: CompactionReason::Overflow,
            ..
        }
    )));
    let answers = answers(&events);
    let refused = &answers[0];
    assert_eq!(refused.error_kind, Some(ErrorKind::ContextOverflow));
    let said = refused.error_message.as_deref().unwrap();
    assert!(
        said.contains("compacted and the request sent again"),
        "{said}"
    );
    assert!(!answers[1].is_failed(), "{:?}", answers[1]);
    assert_eq!(answers[1].text(), "recovered");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let end = compaction_ends(&events).remove(0);
    let kept = end.first_kept_message.unwrap();
    assert!((1..12).contains(&kept), "{end:?}");
    // The refused answer is in the history (the chat shows it); the model never sees it.
    let state = agent.state();
    assert_eq!(state.messages.len(), 15);
    assert!(
        state.messages[13]
            .as_assistant()
            .is_some_and(AssistantMessage::is_failed)
    );
    assert_eq!(label(&events[events.len() - 2]), "turn_end");
}

#[tokio::test]
async fn openai_context_length_exceeded_is_compacted_and_retried_once() {
    let server = FakeLlm::start(vec![
        openai_overflow(),
        text_reply("## Goal\nAnswer the new question (the gist)", 500),
        text_reply("recovered", 2_000),
    ])
    .await;
    recovers(agent_on(&server, settings()), &server).await;
    let requests = server.requests();
    assert!(is_summary_request(&requests[1]));
    let asked = content(&requests[1], 1);
    assert!(asked.contains("[user]\nold question 0: "), "{asked}");
    // The retry carries the summary and, last, the question refused the first time.
    let retry = messages(&requests[2]);
    assert!(content(&requests[2], 1).starts_with(SUMMARY_PREFIX));
    assert!(content(&requests[2], 1).contains("(the gist)"));
    assert_eq!(retry.last().unwrap()["content"], "the new question");
    assert!(retry.len() < messages(&requests[0]).len());
}

#[tokio::test]
async fn anthropic_prompt_is_too_long_is_compacted_and_retried_once() {
    let too_long = Scripted::json(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error",
               "message": "prompt is too long: 208656 tokens > 200000 maximum"}}),
    );
    let server = FakeLlm::start(vec![
        too_long,
        Scripted::sse(ant::text_reply(&["## Goal\nthe gist"])),
        Scripted::sse(ant::text_reply(&["recov", "ered"])),
    ])
    .await;
    let agent = Agent::new(Arc::new(anthropic(&server)), "claude-sonnet-4-5");
    agent.configure(|c| {
        c.context_window = Some(WINDOW);
        c.compaction = settings();
    });
    recovers(agent, &server).await;
    let requests = server.requests();
    // Anthropic: the system prompt is its own field; one user message asks for the summary.
    let summary = &requests[1].body;
    assert!(
        summary["system"].to_string().contains("working summary"),
        "{summary}"
    );
    assert_eq!(summary["messages"].as_array().unwrap().len(), 1);
    let retry = requests[2].body["messages"].as_array().unwrap().clone();
    assert!(retry[0].to_string().contains(SUMMARY_PREFIX));
}

/// An Anthropic agent whose first request `refusal` refuses; then a summary and the answer.
async fn anthropic_recovers_from(refusal: Scripted) {
    let server = FakeLlm::start(vec![
        refusal,
        Scripted::sse(ant::text_reply(&["## Goal\nthe gist"])),
        Scripted::sse(ant::text_reply(&["recov", "ered"])),
    ])
    .await;
    let agent = Agent::new(Arc::new(anthropic(&server)), "claude-sonnet-4-5");
    agent.configure(|c| {
        c.context_window = Some(WINDOW);
        c.compaction = settings();
    });
    recovers(agent, &server).await;
}

#[tokio::test]
async fn anthropic_input_and_max_tokens_over_the_context_limit_is_compacted_and_retried_once() {
    anthropic_recovers_from(Scripted::json(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error",
               "message": "input length and `max_tokens` exceed context limit: 197000 + 8192 \
                           > 200000, decrease input length or `max_tokens` and try again"}}),
    ))
    .await;
}

#[tokio::test]
async fn anthropic_request_too_large_413_is_compacted_and_retried_once() {
    anthropic_recovers_from(Scripted::json(
        413,
        json!({"type": "error", "error": {"type": "request_too_large",
               "message": "Request exceeds the maximum allowed number of bytes."}}),
    ))
    .await;
}

#[tokio::test]
async fn gemini_input_token_count_over_the_maximum_is_compacted_and_retried_once() {
    // Gemini's OpenAI-compatible endpoint answers with a list holding one error.
    let too_long = Scripted::json(
        400,
        json!([{"error": {"code": 400, "message": "The input token count (1196265) exceeds \
                the maximum number of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}]),
    );
    let server = FakeLlm::start(vec![
        too_long,
        text_reply("## Goal\nAnswer the new question (the gist)", 500),
        text_reply("recovered", 2_000),
    ])
    .await;
    recovers(agent_on(&server, settings()), &server).await;
    assert!(is_summary_request(&server.requests()[1]));
}

#[tokio::test]
async fn refused_again_after_compacting_the_run_ends_with_what_to_do_and_keeps_the_queue() {
    let server = FakeLlm::start(vec![
        openai_overflow(),
        text_reply("## Goal\nthe gist", 500),
        openai_overflow(),
    ])
    .await;
    let agent = agent_on(&server, settings());
    agent.replace_messages(earlier_history(6)).unwrap();
    agent.follow_up("a follow-up typed earlier");
    let mut rx = agent.subscribe(None);
    agent.prompt("the new question").unwrap();
    let events = until_agent_end(&mut rx).await;
    assert_eq!(
        server.requests().len(),
        3,
        "one compaction, one retry, no more"
    );
    let last = answers(&events).pop().unwrap();
    assert!(last.is_context_overflow());
    let error = last.error_message.unwrap();
    for part in [
        "no longer fits the context window",
        "still does not fit after compacting",
        "/new",
        "keep_recent_tokens",
    ] {
        assert!(error.contains(part), "{part:?} in {error}");
    }
    let queued: Vec<String> = agent
        .queued(QueueKind::FollowUp)
        .iter()
        .map(Message::preview_text)
        .collect();
    assert_eq!(queued, ["a follow-up typed earlier"]);
    // The compaction that was made stays in force: the next try starts from it.
    assert!(agent.state().compaction.is_some());
}
