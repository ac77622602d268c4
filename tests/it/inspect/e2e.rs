//! End to end in a pseudo-terminal, against the fake OpenAI-compatible server: the
//! inspector overlay of the live client (F3, a request opened, its three views, `/`
//! search in the body, Esc back out), then the same session's replay opening the
//! inspector at the request in flight at each turn.

use crate::support::bin::Sandbox;
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text, tool, usage};
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::pty::{Tui, status_line};
use serde_json::json;
use std::path::Path;

const F3: &str = "\x1bOR";
const ESC: &str = "\x1b";

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

/// Neither the list nor a request of the inspector is on screen.
fn closed(screen: &vt100::Screen) -> bool {
    let text = screen.contents();
    !text.contains("Requests (") && !text.contains("· Esc: list")
}

fn replay(root: &Path) -> Tui {
    let config = root.join("config/config.toml");
    let workspace = root.join("ws");
    let dir = |name: &str| root.join(name).display().to_string();
    let (data, state, xdg) = (dir("data"), dir("state"), dir("config"));
    let args = [
        "--config",
        config.to_str().unwrap(),
        "--workspace",
        workspace.to_str().unwrap(),
        "replay",
        "--speed",
        "64",
    ];
    let env = [
        ("XDG_DATA_HOME", data.as_str()),
        ("XDG_STATE_HOME", state.as_str()),
        ("XDG_CONFIG_HOME", xdg.as_str()),
    ];
    Tui::spawn(&args, &env, &workspace, 120, 40)
}

#[test]
fn the_inspector_in_the_live_client_and_in_its_replay() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    std::fs::write(
        sandbox.workspace().join("notes.txt"),
        "plant the tomatoes\n",
    )
    .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let role = chunk(json!({"role": "assistant", "content": ""}), None);
    let read = Scripted::sse([
        role.clone(),
        tool(
            Some(0),
            Some("call_1"),
            Some("read_file"),
            r#"{"path": "notes.txt"}"#,
        ),
        finish("tool_calls"),
        usage(900, 20, 0),
        done_marker(),
    ]);
    let answer = Scripted::sse([
        role,
        text("The notes say to plant the tomatoes."),
        finish("stop"),
        usage(1_000, 12, 800),
        done_marker(),
    ]);
    let server = runtime.block_on(FakeLlm::start(vec![read, answer]));
    let mut live = Tui::openai_at(root, &server.url(), &[]);
    live.wait_text("Welcome to claw-tui");
    live.send("what do my notes say?\r");
    let screen = live.wait_for("the answer after the read", |s| {
        s.contents().contains("plant the tomatoes.") && idle(s)
    });
    assert!(screen.contains("✓ read_file"), "{screen}");
    assert!(
        screen.lines().last().unwrap().contains("cost n/a"),
        "gpt-test has no known prices: {screen}"
    );

    // F3: the list, the latest request selected.
    live.send(F3);
    let list = live.wait_text("Requests (2)");
    assert!(list.contains("gpt-test"), "{list}");
    live.send("\r");
    // The prompt's tokens as the server reported them (cached ones included), split.
    live.wait_for("request 2's breakdown", |s| {
        let text = s.contents();
        [
            "Request 2 · turn 2 · main · gpt-test · [1 Breakdown]",
            "Input: 1000 tokens (as the provider reported)",
            "system prompt",
            "tool: read_file",
            "user messages (1)",
            "assistant messages (1)",
            "tool results (1)",
        ]
        .iter()
        .all(|part| text.contains(part))
    });

    // 2: the body, searched with `/` for what the tool read.
    live.send("2");
    live.wait_text("[2 Body]");
    live.send("/tomatoes\r");
    // Found: the tool result's block shown, the search line without "(not found)".
    live.wait_for("the search hit", |s| {
        let text = s.contents();
        text.contains("/tomatoes  n: next")
            && !text.contains("(not found)")
            && text.contains("plant the tomatoes")
    });
    live.send("/no such words\r");
    live.wait_text("/no such words  n: next  (not found)");

    // 3: the diff against the first request: the appended messages.
    live.send("3");
    live.wait_for("the diff", |s| {
        s.contents().contains("[3 Diff]") && s.contents().contains("messages")
    });
    live.send("1");
    live.wait_text("[1 Breakdown]");

    // Esc: back to the list, then closed; the chat is as it was.
    live.send(ESC);
    live.wait_text("Requests (2)");
    live.send(ESC);
    live.wait_for("the inspector closed", |s| {
        closed(s) && s.contents().contains("plant the tomatoes.")
    });
    live.send("\x04");
    assert_eq!(live.wait_exit().0, 0);

    // The replay: played to the end, then at each turn F3 opens that turn's request.
    let mut tui = replay(root);
    // Its status bar prices the session as live did (the replay runs on the demo).
    tui.wait_for("the end of the replay, priced as live", |s| {
        s.contents().contains("REPLAY ×64 ■ turn 2/2") && status_line(s).contains("cost n/a")
    });
    tui.send(" ");
    tui.send("\x1b[H");
    tui.wait_text("⏸ turn 0/2");
    tui.send("]");
    tui.wait_text("⏸ turn 1/2");
    tui.send(F3);
    tui.wait_for("request 1's breakdown", |s| {
        s.contents()
            .contains("Request 1 · turn 1 · main · gpt-test")
            && s.contents().contains("Input: 900 tokens")
    });
    tui.send(ESC);
    tui.wait_text("Requests (2)");
    tui.send(ESC);
    tui.wait_for("the inspector closed", closed);
    tui.send("]");
    tui.wait_text("⏸ turn 2/2");
    tui.send(F3);
    tui.wait_text("Request 2 · turn 2 · main · gpt-test");
    tui.send("2");
    tui.wait_text("[2 Body]");
    tui.send(ESC);
    tui.wait_text("Requests (2)");
    tui.send(ESC);
    tui.wait_for("the inspector closed", closed);
    tui.send("q");
    let (code, alternate, _) = tui.wait_exit();
    assert_eq!((code, alternate), (0, false));
}
