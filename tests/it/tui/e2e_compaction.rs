//! End to end against the fake OpenAI-compatible server with an 8,000-token window: in
//! the real client, `/compact` shows its live line and the `compacting` state, Esc
//! cancels it, a second `/compact` leaves the divider under the full history, and `-c`
//! resumes with the divider shown and the summary sent to the model; Esc during a
//! compaction the run started on its own cancels it and gives back what was queued.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::Sandbox;
use crate::support::compacting::{call_reply, messages, text_reply};
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text, usage};
use crate::support::fake_llm::{FakeLlm, Scripted, Step};
use crate::support::pty::{Tui, status_line};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::Notify;

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

#[test]
fn compact_in_the_client_cancel_it_compact_again_and_resume() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.workspace().join("big.txt"),
        "a line of the big file\n".repeat(600),
    )
    .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let gate = Arc::new(Notify::new());
    let gated_summary = Scripted::sse(Vec::<String>::new())
        .then(Step::Wait(gate.clone()))
        .then_chunks([
            chunk(json!({"role": "assistant", "content": ""}), None),
            text("## Goal\nRead big.txt (e2e-summary)"),
            finish("stop"),
            usage(900, 40, 0),
            done_marker(),
        ]);
    let server = runtime.block_on(FakeLlm::start(vec![
        call_reply("c1", "read_file", json!({"path": "big.txt"}), 600),
        text_reply("It is a big file.", 3_500),
        Scripted::sse(Vec::<String>::new()).then(Step::Hang),
        gated_summary,
        text_reply("resumed with the summary", 1_200),
    ]));
    sandbox.write_config(&format!(
        "provider = \"local\"\n\n[compaction]\nreserve_tokens = 2000\nkeep_recent_tokens = 2500\n\n\
         [providers.local]\napi = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"local-model\"\n\
         context_window = 8000\n",
        server.url()
    ));
    let root = sandbox.dir.path();
    let mut tui = Tui::in_sandbox(root, &[], &[], (120, 40));
    tui.wait_text("Welcome to claw-tui");
    tui.send("read big.txt\r");
    // 3,500 + 10 tokens of 8,000.
    tui.wait_for("the answer and the context figure", |s| {
        s.contents().contains("It is a big file.") && idle(s) && status_line(s).contains("ctx 43%")
    });

    tui.send("/compact\r");
    tui.wait_for("the live line", |s| {
        s.contents().contains("Esc cancels") && status_line(s).contains("compacting")
    });
    // The summary request is at the server (and hangs there) before Esc cancels it.
    runtime.block_on(server.until_requests(3));
    tui.send("\x1b");
    let screen = tui.wait_for("the cancel", |s| {
        s.contents().contains("Compaction cancelled") && idle(s)
    });
    assert!(!screen.contains("── compacted"), "{screen}");

    tui.send("/compact\r");
    tui.wait_text("Esc cancels");
    gate.notify_one();
    let screen = tui.wait_for("the divider", |s| {
        s.contents().contains("── compacted: ") && idle(s)
    });
    assert!(screen.contains("▸ summary"), "{screen}");
    assert!(screen.contains("› read big.txt") && screen.contains("It is a big file."));
    tui.send("\x04");
    let (code, alternate, _) = tui.wait_exit();
    assert_eq!((code, alternate), (0, false));

    let mut tui = Tui::in_sandbox(root, &["-c"], &[], (120, 40));
    let screen = tui.wait_for("the resumed chat", |s| {
        s.contents().contains("Resumed session") && idle(s)
    });
    let divider = screen.find("── compacted: ").expect(&screen);
    assert!(screen.find("› read big.txt").unwrap() < divider, "{screen}");
    tui.send("what now?\r");
    tui.wait_for("the answer after resuming", |s| {
        s.contents().contains("resumed with the summary") && idle(s)
    });
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let sent = messages(&requests[4]);
    assert!(
        sent[1]["content"]
            .as_str()
            .unwrap()
            .contains("(e2e-summary)")
    );
    assert_eq!(sent.last().unwrap()["content"], "what now?");
    // The big result was summarised: the request no longer carries it.
    assert!(
        !requests[4]
            .body
            .to_string()
            .contains(&"a line of the big file\\n".repeat(200))
    );
    tui.send("\x04");
    let (code, _, _) = tui.wait_exit();
    assert_eq!(code, 0);
}

#[test]
fn esc_during_a_threshold_compaction_cancels_it_and_gives_back_what_was_queued() {
    let sandbox = Sandbox::new();
    // About 6,000 tokens once read: the next request passes the 6,000-token threshold.
    std::fs::write(
        sandbox.workspace().join("big.txt"),
        "a line of the big file\n".repeat(1_000),
    )
    .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeLlm::start(vec![
        call_reply("c1", "read_file", json!({"path": "big.txt"}), 600),
        Scripted::sse(Vec::<String>::new()).then(Step::Hang),
        text_reply("## Goal\nSummarise big.txt (after-esc)", 900),
        text_reply("Summarised it.", 1_500),
    ]));
    sandbox.write_config(&format!(
        "provider = \"local\"\n\n[compaction]\nreserve_tokens = 2000\nkeep_recent_tokens = 2500\n\n\
         [providers.local]\napi = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"local-model\"\n\
         context_window = 8000\n",
        server.url()
    ));
    let mut tui = Tui::in_sandbox(sandbox.dir.path(), &[], &[], (120, 40));
    tui.wait_text("Welcome to claw-tui");
    tui.send("read big.txt\r");
    // The run compacts on its own before its second call.
    tui.wait_for("the threshold compaction", |s| {
        s.contents().contains("Esc cancels") && status_line(s).contains("compacting")
    });
    tui.send("and then summarise it\r");
    // Shown queued above the composer.
    let queued = |s: &vt100::Screen| s.contents().contains("follow-up  and then summarise it");
    tui.wait_for("the queued follow-up", queued);
    runtime.block_on(server.until_requests(2));
    tui.send("\x1b");
    // The queue is emptied into the composer, not dropped.
    let screen = tui.wait_for("the cancel", |s| {
        s.contents().contains("Compaction cancelled")
            && idle(s)
            && !queued(s)
            && s.contents().contains("and then summarise it")
    });
    assert!(!screen.contains("── compacted"), "{screen}");
    // Nothing went out after the cancel.
    assert_eq!(server.requests().len(), 2);

    // The follow-up is back in the composer: Enter sends it, with the history intact.
    tui.send("\r");
    tui.wait_for("the answer to the restored follow-up", |s| {
        s.contents().contains("› and then summarise it")
            && s.contents().contains("Summarised it.")
            && idle(s)
    });
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // The whole history was still there to summarise: the call and its result.
    let asked = requests[2].body.to_string();
    assert!(asked.contains("[tool call c1: read_file]"), "{asked}");
    assert!(asked.contains("a line of the big file"));
    let sent = messages(&requests[3]);
    assert!(sent[1]["content"].as_str().unwrap().contains("(after-esc)"));
    // The interrupted turn is named to the model, then the follow-up as typed.
    let last = sent.last().unwrap()["content"].as_str().unwrap().to_owned();
    assert!(
        last.starts_with("[The previous message got no complete answer: Aborted")
            && last.ends_with("\n\nand then summarise it"),
        "{last}"
    );
    tui.send("\x04");
    let (code, alternate, _) = tui.wait_exit();
    assert_eq!((code, alternate), (0, false));
}
