#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Replay sanitising: what of the history reaches the model (`sanitize_for_llm`).

use crate::support::history::{assistant, call, describe, describe_request, result};
use crate::support::*;
use claw_tui::agent::convert::{NO_RESULT_PROVIDED, sanitize_for_llm};
use claw_tui::agent::{
    Agent, AssistantMessage, Block, Message, NoticeLevel, StopReason, UserMessage,
};
use claw_tui::llm::LlmMessage;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn text(t: &str) -> Block {
    Block::Text { text: t.to_owned() }
}

fn failed(content: Vec<Block>, reason: StopReason, error: &str) -> AssistantMessage {
    let mut m = assistant(content, reason);
    m.error_message = Some(error.to_owned());
    m
}

fn describe_all(messages: &[LlmMessage]) -> Vec<String> {
    messages.iter().map(describe).collect()
}

// ---------------------------------------------------------------------------------------
// Replay
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn replay_drops_failed_messages_and_answers_dangling_calls() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["ok"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_tools(vec![echo_tool()]);
    let mut rx = agent.subscribe(None);

    agent
        .replace_messages(vec![
            Message::user("start"),
            Message::Assistant(assistant(
                vec![call("a", "echo"), call("b", "echo")],
                StopReason::ToolUse,
            )),
            Message::ToolResult(result("a", "A")),
            // `b` never got a result (the session was cut off).
            Message::Assistant(failed(
                vec![text("half"), call("x", "echo")],
                StopReason::Aborted,
                "aborted",
            )),
            Message::ToolResult(result("x", "result of an aborted call")),
            Message::user("again"),
            Message::Assistant(failed(vec![text("oops")], StopReason::Error, "boom")),
            Message::notice(NoticeLevel::Warning, "shown to the user only"),
        ])
        .unwrap();
    agent.prompt("go on").unwrap();
    until_agent_end(&mut rx).await;

    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        describe_request(&requests[0]),
        [
            "user:start".to_owned(),
            "assistant:[\"a\", \"b\"]:ToolUse".to_owned(),
            "result:a:A".to_owned(),
            format!("result:b:{NO_RESULT_PROVIDED}:error"),
            "user:again".to_owned(),
            // The answer to "again" failed: the model is told before the next prompt.
            "user:[The previous message got no complete answer: boom.]\n\ngo on".to_owned(),
        ]
    );
    // The history itself is untouched: only the request is sanitised.
    assert_eq!(agent.state().messages.len(), 10);
}

#[test]
fn sanitize_keeps_a_well_formed_history_unchanged() {
    let history = vec![
        LlmMessage::from(UserMessage::new("q")),
        LlmMessage::from(assistant(
            vec![call("a", "echo"), call("b", "echo")],
            StopReason::ToolUse,
        )),
        LlmMessage::from(result("a", "A")),
        LlmMessage::from(result("b", "B")),
        LlmMessage::from(assistant(vec![text("done")], StopReason::Stop)),
    ];
    assert_eq!(sanitize_for_llm(history.clone()), history);
}

#[test]
fn sanitize_drops_failed_assistant_messages() {
    let out = sanitize_for_llm(vec![
        LlmMessage::from(UserMessage::new("q")),
        LlmMessage::from(failed(
            vec![text("partial")],
            StopReason::Aborted,
            "aborted",
        )),
        LlmMessage::from(UserMessage::new("q again")),
        LlmMessage::from(failed(vec![], StopReason::Error, "boom")),
    ]);
    assert_eq!(
        describe_all(&out),
        [
            "user:q",
            "user:[The previous message got no complete answer: aborted.]\n\nq again"
        ]
    );
}

#[test]
fn sanitize_explains_a_lost_answer_only_between_two_user_messages() {
    let mut lost = failed(vec![], StopReason::Aborted, "");
    lost.error_message = None;
    let out = sanitize_for_llm(vec![
        LlmMessage::from(UserMessage::new("prompt")),
        // Steering sent with the prompt: two user messages, nothing lost between them.
        LlmMessage::from(UserMessage::new("and also")),
        LlmMessage::from(assistant(vec![call("a", "echo")], StopReason::ToolUse)),
        LlmMessage::from(result("a", "A")),
        // Lost after a tool result: the history is well-formed without a note.
        LlmMessage::from(failed(vec![text("half")], StopReason::Error, "overloaded")),
        LlmMessage::from(UserMessage::new("retry")),
        LlmMessage::from(lost),
        LlmMessage::from(UserMessage::new("hello?")),
    ]);
    assert_eq!(
        describe_all(&out),
        [
            "user:prompt",
            "user:and also",
            "assistant:[\"a\"]:ToolUse",
            "result:a:A",
            "user:retry",
            "user:[The previous message got no complete answer: it was interrupted.]\n\nhello?",
        ]
    );
}

#[test]
fn sanitize_answers_dangling_calls_right_after_their_message() {
    let out = sanitize_for_llm(vec![
        LlmMessage::from(UserMessage::new("q")),
        LlmMessage::from(assistant(
            vec![call("a", "echo"), call("b", "echo")],
            StopReason::ToolUse,
        )),
        LlmMessage::from(result("b", "B")),
        LlmMessage::from(UserMessage::new("steer")),
        LlmMessage::from(assistant(vec![call("c", "echo")], StopReason::ToolUse)),
    ]);
    assert_eq!(
        describe_all(&out),
        [
            "user:q".to_owned(),
            "assistant:[\"a\", \"b\"]:ToolUse".to_owned(),
            "result:b:B".to_owned(),
            format!("result:a:{NO_RESULT_PROVIDED}:error"),
            "user:steer".to_owned(),
            "assistant:[\"c\"]:ToolUse".to_owned(),
            format!("result:c:{NO_RESULT_PROVIDED}:error"),
        ]
    );
    let LlmMessage::ToolResult(synthetic) = &out[3] else {
        panic!("a synthetic result");
    };
    assert_eq!(
        synthetic.tool_name, "echo",
        "the synthetic result names the called tool"
    );
    assert!(synthetic.is_error);
}

#[test]
fn sanitize_drops_results_that_answer_no_kept_call() {
    let out = sanitize_for_llm(vec![
        // Orphan: no call before it.
        LlmMessage::from(result("ghost", "?")),
        LlmMessage::from(UserMessage::new("q")),
        LlmMessage::from(failed(
            vec![call("x", "echo")],
            StopReason::Aborted,
            "aborted",
        )),
        // Answers a call of a dropped message.
        LlmMessage::from(result("x", "X")),
        LlmMessage::from(assistant(vec![call("a", "echo")], StopReason::ToolUse)),
        LlmMessage::from(result("a", "A")),
        // Duplicate answer.
        LlmMessage::from(result("a", "A again")),
    ]);
    assert_eq!(
        describe_all(&out),
        ["user:q", "assistant:[\"a\"]:ToolUse", "result:a:A"]
    );
}
