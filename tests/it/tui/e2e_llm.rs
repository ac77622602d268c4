//! End to end against the fake OpenAI-compatible server: the real binary in a
//! pseudo-terminal streams, runs a slow tool, takes a steering message into the next
//! request, is interrupted, and quits with the terminal restored.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::Sandbox;
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text, text_reply, tool, usage};
use crate::support::fake_llm::{FakeLlm, Scripted, Step};
use crate::support::pty::{Tui, status_line};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::Notify;

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

#[test]
fn stream_slow_tool_steer_into_the_next_request_interrupt_and_quit() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.workspace();
    // The "slow tool": `cat` on a named pipe blocks until the test writes to it.
    nix::unistd::mkfifo(&workspace.join("gate"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let first_words = Arc::new(Notify::new());
    let role = chunk(json!({"role": "assistant", "content": ""}), None);
    let call = Scripted::sse([role.clone(), text("Checking the ")])
        .then(Step::Wait(first_words.clone()))
        .then_chunks([
            text("workspace now."),
            tool(
                Some(0),
                Some("call_1"),
                Some("exec"),
                r#"{"command": "cat gate"}"#,
            ),
            finish("tool_calls"),
            usage(120, 30, 0),
            done_marker(),
        ]);
    let after_steer = Scripted::sse(text_reply(&["Understood, ", "switching to the other dir."]));
    let endless = Scripted::sse([role, text("A long answer that never ")]).then(Step::Hang);
    let server = runtime.block_on(FakeLlm::start(vec![call, after_steer, endless]));

    let mut tui = Tui::openai_at(sandbox.dir.path(), &server.url(), &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.wait_for("the provider and model", |s| {
        status_line(s).contains("openai · gpt-test")
    });

    // Streamed: the first words are on screen while the server holds the rest back.
    tui.send("check the repo\r");
    let partial = tui.wait_text("Checking the");
    assert!(!partial.contains("workspace now."));
    first_words.notify_one();

    // The tool call shows in the tree and runs until the test opens the gate.
    tui.wait_for("the exec call running", |s| {
        s.contents().contains("exec cat gate") && status_line(s).contains("running tools")
    });
    tui.send("use the other dir");
    tui.wait_text("use the other dir");
    tui.send("\x1b");
    tui.wait_text(" steer  use the other dir");
    std::fs::write(workspace.join("gate"), "released\n").unwrap();
    tui.wait_for("the answer after the steer", |s| {
        s.contents().contains("switching to the other dir.") && idle(s)
    });
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].body.to_string();
    assert!(
        second.contains("use the other dir"),
        "the steering message went to the model: {second}"
    );
    assert!(
        second.contains("released"),
        "with the tool's result: {second}"
    );
    let screen = tui.text();
    assert!(screen.contains("✓ exec cat gate"), "{screen}");
    assert!(screen.contains("› use the other dir"), "{screen}");

    // Interrupt a reply that never ends.
    tui.send("go on\r");
    tui.wait_text("A long answer that never");
    tui.send("\x1b");
    tui.wait_for("the interruption", |s| {
        s.contents().contains("interrupted") && idle(s)
    });

    tui.send("\x03");
    tui.wait_text("again to quit");
    tui.send("\x03");
    let (code, alternate, cursor_hidden) = tui.wait_exit();
    assert_eq!((code, alternate, cursor_hidden), (0, false, false));
}

/// A rate limit waits with a countdown in the chat; a final failure says `/retry`, and
/// `/retry` sends the same request again (without the failed answer), which answers.
#[test]
fn a_rate_limit_counts_down_and_retry_sends_the_failed_request_again() {
    let sandbox = Sandbox::new();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let limited =
        Scripted::json(429, json!({"error": {"message": "slow down"}})).header("retry-after", "2");
    let refused = Scripted::json(400, json!({"error": {"message": "upstream hiccup"}}));
    let answer = Scripted::sse(text_reply(&["Recovered ", "after the retry."]));
    let server = runtime.block_on(FakeLlm::start(vec![limited, refused, answer]));

    let mut tui = Tui::openai_at(sandbox.dir.path(), &server.url(), &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.send("hello there\r");
    tui.wait_text("↻ retry 1/10 in 2s · Esc cancels: HTTP 429");
    let failed = tui.wait_for("the final failure", |s| {
        s.contents().contains("upstream hiccup") && idle(s)
    });
    assert!(
        failed.contains("/retry sends the request again"),
        "{failed}"
    );
    assert!(
        failed.contains("↻ retry 1/10 in 2.0s"),
        "the wait is over: {failed}"
    );
    tui.send("/retry\r");
    tui.wait_for("the answer", |s| {
        s.contents().contains("Recovered after the retry.") && idle(s)
    });
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // The same request as the first: the prompt once, no failed answer in between.
    let texts = requests[2].body["messages"].to_string();
    assert_eq!(texts.matches("hello there").count(), 1, "{texts}");
    assert!(!texts.contains("upstream hiccup"), "{texts}");
    tui.quit();
}
