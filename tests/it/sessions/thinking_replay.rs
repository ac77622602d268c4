//! Thinking state in session files, through the real binary: a session line written by
//! earlier builds (the provider's state as a string in `signature`: an Anthropic
//! signature, `redacted_thinking:` data, an `openai-responses:` reasoning item) resumes
//! and is replayed in exactly the request bytes those builds sent, to Anthropic and to
//! the Responses API; what a run writes now keeps that form and replays the same way.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run, session_messages};
use crate::support::fake_llm::anthropic::{
    block_start, block_stop, reply, text_block, text_reply, thinking_block,
};
use crate::support::fake_llm::responses::{self, Script};
use crate::support::fake_llm::{FakeLlm, Scripted};
use serde_json::json;
use std::io::Write;

/// A user line and an assistant line as earlier builds wrote them: one thinking block
/// of each kind of provider state, one cut before its signature came, then the answer.
const OLD_LINES: &str = concat!(
    r#"{"type":"message","timestamp":1700000000003,"message":{"role":"user","content":"think hard","timestamp":1700000000003}}"#,
    "\n",
    r#"{"type":"message","timestamp":1700000000004,"message":{"role":"assistant","content":["#,
    r#"{"type":"thinking","thinking":"Let me think.","signature":"EqQBCgIYAhIM"},"#,
    r#"{"type":"thinking","thinking":"[thinking redacted by the provider]","signature":"redacted_thinking:RUQtb3BhcXVl"},"#,
    r#"{"type":"thinking","thinking":"Plan","signature":"openai-responses:{\"encrypted_content\":\"gAAAAenc==\",\"id\":\"rs_1\",\"status\":\"completed\",\"summary\":[{\"text\":\"Plan\",\"type\":\"summary_text\"}],\"type\":\"reasoning\"}"},"#,
    r#"{"type":"thinking","thinking":"cut","signature":""},"#,
    r#"{"type":"text","text":"Answer."}],"#,
    r#""stop_reason":"stop","usage":{"input":100,"output":20,"cache_read":0,"cache_write":0,"cost":0.0},"model":"m","timestamp":1700000000004}}"#,
    "\n",
);

/// Runs the binary in `sb` with `args` (off the test's runtime, which serves the fake).
async fn run_in(sb: &Sandbox, args: &[&str]) {
    let mut cmd = sb.command();
    cmd.args(args);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
}

/// A session made by one plain run, with the old lines appended to its file.
async fn session_with_old_lines(sb: &Sandbox) {
    run_in(sb, &["-p", "hello"]).await;
    let file = sb.only_session();
    let mut out = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    out.write_all(OLD_LINES.as_bytes()).unwrap();
}

/// The raw request body, as text.
fn raw(server: &FakeLlm, n: usize) -> String {
    String::from_utf8(server.requests()[n].raw.to_vec()).unwrap()
}

/// The signatures of the thinking blocks in the session's last assistant message, as
/// the file holds them.
fn last_signatures(sb: &Sandbox) -> Vec<serde_json::Value> {
    let messages = session_messages(&sb.only_session());
    let last = messages.iter().rev().find(|m| m["role"] == "assistant");
    last.unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "thinking")
        .map(|b| b["signature"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn old_signature_lines_resume_and_replay_the_same_bytes_to_anthropic() {
    let answer = reply(
        vec![
            thinking_block(0, &["Again."], "EqNEWsig"),
            vec![
                block_start(
                    1,
                    json!({"type": "redacted_thinking", "data": "TkVXLWRhdGE="}),
                ),
                block_stop(1),
            ],
            text_block(2, &["Second."]),
        ],
        "end_turn",
    );
    let server = FakeLlm::start(vec![
        Scripted::sse(text_reply(&["Hi."])),
        Scripted::sse(answer),
        Scripted::sse(text_reply(&["Third."])),
    ])
    .await;
    let sb = Sandbox::new();
    sb.write_config(&format!(
        "provider = \"claude\"\n[providers.claude]\napi = \"anthropic\"\nbase_url = \"{}\"\n\
         model = \"claude-sonnet-4-5\"\napi_key = \"sk-ant-thinking\"\n",
        server.url()
    ));
    session_with_old_lines(&sb).await;

    run_in(&sb, &["-c", "-p", "more"]).await;
    // Anthropic gets its own signature and redacted data back; the Responses item and
    // the block cut before its signature stay out.
    let old_turn = concat!(
        r#"{"content":["#,
        r#"{"signature":"EqQBCgIYAhIM","thinking":"Let me think.","type":"thinking"},"#,
        r#"{"data":"RUQtb3BhcXVl","type":"redacted_thinking"},"#,
        r#"{"text":"Answer.","type":"text"}],"role":"assistant"}"#,
    );
    let body = raw(&server, 1);
    assert!(body.contains(old_turn), "{body}");

    // What this run wrote keeps the form earlier builds read.
    assert_eq!(
        last_signatures(&sb),
        [json!("EqNEWsig"), json!("redacted_thinking:TkVXLWRhdGE=")]
    );
    run_in(&sb, &["-c", "-p", "last"]).await;
    let new_turn = concat!(
        r#"{"content":["#,
        r#"{"signature":"EqNEWsig","thinking":"Again.","type":"thinking"},"#,
        r#"{"data":"TkVXLWRhdGE=","type":"redacted_thinking"},"#,
        r#"{"text":"Second.","type":"text"}],"role":"assistant"}"#,
    );
    let body = raw(&server, 2);
    assert!(body.contains(old_turn) && body.contains(new_turn), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn old_signature_lines_resume_and_replay_the_same_bytes_to_the_responses_api() {
    let answer = Script::new("gpt-5")
        .reasoning(0, &[&["Check again."]], "gAAAAnew==")
        .message(1, &["Second."])
        .completed(100, 0, 20, 10);
    let server = FakeLlm::start(vec![
        Scripted::sse(responses::text_reply("gpt-5", &["Hi."])),
        Scripted::sse(answer),
        Scripted::sse(responses::text_reply("gpt-5", &["Third."])),
    ])
    .await;
    let sb = Sandbox::new();
    sb.write_config(&format!(
        "provider = \"local\"\n[providers.local]\napi = \"openai-responses\"\n\
         base_url = \"{}/v1\"\nmodel = \"gpt-5\"\napi_key = \"sk-responses-thinking\"\n",
        server.url()
    ));
    session_with_old_lines(&sb).await;

    run_in(&sb, &["-c", "--thinking", "high", "-p", "more"]).await;
    // Only the reasoning item goes back (without its id and status); Anthropic's
    // signature and redacted data mean nothing here.
    let old_items = concat!(
        r#"{"content":[{"text":"think hard","type":"input_text"}],"role":"user","type":"message"},"#,
        r#"{"encrypted_content":"gAAAAenc==","summary":[{"text":"Plan","type":"summary_text"}],"type":"reasoning"},"#,
        r#"{"content":[{"text":"Answer.","type":"output_text"}],"role":"assistant","type":"message"},"#,
    );
    let body = raw(&server, 1);
    assert!(body.contains(old_items), "{body}");

    // What this run wrote keeps the form earlier builds read.
    assert_eq!(
        last_signatures(&sb),
        [json!(concat!(
            r#"openai-responses:{"encrypted_content":"gAAAAnew==","id":"rs_0000","#,
            r#""summary":[{"text":"Check again.","type":"summary_text"}],"type":"reasoning"}"#
        ))]
    );
    run_in(&sb, &["-c", "--thinking", "high", "-p", "last"]).await;
    let new_item = concat!(
        r#"{"encrypted_content":"gAAAAnew==","summary":[{"text":"Check again.","type":"summary_text"}],"type":"reasoning"},"#,
        r#"{"content":[{"text":"Second.","type":"output_text"}],"role":"assistant","type":"message"}"#,
    );
    let body = raw(&server, 2);
    assert!(
        body.contains(old_items) && body.contains(new_item),
        "{body}"
    );
}
