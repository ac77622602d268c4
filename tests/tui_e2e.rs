//! End to end: the real binary in a pseudo-terminal, on the offline demo model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
mod tui_pty;

use support::bin::Sandbox;
use tui_pty::{Tui, status_line};

fn start(sandbox: &Sandbox, pace_ms: &str, extra: &[&str]) -> Tui {
    let config = sandbox.config_path();
    let workspace = sandbox.workspace();
    let data = sandbox.dir.path().join("data");
    let state = sandbox.dir.path().join("state");
    let xdg_config = sandbox.dir.path().join("config");
    let mut args = vec![
        "--provider",
        "demo",
        "--config",
        config.to_str().unwrap(),
        "--workspace",
        workspace.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    Tui::spawn(
        &args,
        &[
            ("CLAW_TUI_DEMO_PACE_MS", pace_ms),
            ("XDG_DATA_HOME", data.to_str().unwrap()),
            ("XDG_STATE_HOME", state.to_str().unwrap()),
            ("XDG_CONFIG_HOME", xdg_config.to_str().unwrap()),
            ("EDITOR", "true"),
        ],
        &workspace,
        120,
        40,
    )
}

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

#[test]
fn prompt_stream_tool_call_steer_interrupt_and_quit() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.workspace().join("notes.txt"), "hello").unwrap();
    let mut tui = start(&sandbox, "6", &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.wait_for("the idle state", idle);
    assert!(tui.text().contains("Tools") && tui.text().contains("Dashboard"));

    // A prompt that makes the demo model call list_dir: the call shows in the tree and
    // its result comes back in the chat.
    tui.send("list files\r");
    tui.wait_text("› list files");
    let screen = tui.wait_for("the list_dir result", |s| s.contents().contains("returned:") && idle(s));
    assert!(screen.contains("✓ list_dir"), "the tree shows the finished call:\n{screen}");
    assert!(screen.contains("notes.txt"), "the tool's output is quoted:\n{screen}");

    // A slow answer: its text appears piece by piece while the state says streaming.
    tui.send("hello\r");
    let partial = tui.wait_for("a partly streamed answer", |s| {
        status_line(s).contains("streaming") && s.contents().contains("offline demo model")
    });
    assert!(!partial.contains("qwen2.5-coder"), "the end of the answer is not there yet");

    // Esc with text steers: the message waits in the queue strip, then is delivered.
    tui.send("then list files");
    tui.wait_text("then list files");
    tui.send("\x1b");
    tui.wait_for("the steering message in the queue strip", |s| {
        s.contents().contains(" steer  then list files") || s.contents().contains("› then list files")
    });
    let screen = tui.wait_for("the steered turn to finish", |s| {
        s.contents().contains("› then list files") && idle(s)
    });
    assert!(screen.contains("qwen2.5-coder") || screen.contains("returned:"), "{screen}");

    // Esc with an empty composer interrupts a run.
    tui.send("hello again\r");
    tui.wait_for("the next answer streaming", |s| status_line(s).contains("streaming"));
    tui.send("\x1b");
    tui.wait_for("the interruption", |s| s.contents().contains("interrupted") && idle(s));

    // Ctrl+C twice quits with the terminal restored.
    tui.send("\x03");
    tui.wait_text("again to quit");
    tui.send("\x03");
    let (code, alternate, cursor_hidden) = tui.wait_exit();
    assert_eq!(code, 0);
    assert!(!alternate, "the alternate screen must be left");
    assert!(!cursor_hidden, "the cursor must be shown again");
}

#[test]
fn a_prompt_on_the_command_line_is_sent_and_ctrl_d_quits() {
    let sandbox = Sandbox::new();
    let mut tui = start(&sandbox, "0", &["list files"]);
    tui.wait_for("the answer to the positional prompt", |s| {
        s.contents().contains("› list files") && s.contents().contains("returned:") && idle(s)
    });
    tui.send("\x04");
    let (code, alternate, _) = tui.wait_exit();
    assert_eq!((code, alternate), (0, false));
    let history = std::fs::read_to_string(sandbox.dir.path().join("data/claw-tui/history.jsonl"));
    assert!(history.is_err(), "a positional prompt is not typed history");
}

#[test]
fn narrow_and_tiny_terminals_and_history_across_runs() {
    let sandbox = Sandbox::new();
    let mut tui = start(&sandbox, "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.send("read notes.txt\r");
    tui.wait_for("the answer", |s| s.contents().contains("read_file") && idle(s));
    tui.send("\x04");
    assert_eq!(tui.wait_exit().0, 0);
    let history = std::fs::read_to_string(sandbox.dir.path().join("data/claw-tui/history.jsonl")).unwrap();
    assert_eq!(history, "\"read notes.txt\"\n");

    let config = sandbox.config_path();
    let workspace = sandbox.workspace();
    let data = sandbox.dir.path().join("data");
    let state = sandbox.dir.path().join("state");
    let mut narrow = Tui::spawn(
        &[
            "--provider",
            "demo",
            "--config",
            config.to_str().unwrap(),
            "--workspace",
            workspace.to_str().unwrap(),
        ],
        &[
            ("XDG_DATA_HOME", data.to_str().unwrap()),
            ("XDG_STATE_HOME", state.to_str().unwrap()),
        ],
        &workspace,
        80,
        24,
    );
    narrow.wait_text("(Tab switches)");
    // The history of the first run is there: Up recalls it.
    narrow.send("\x1b[A");
    narrow.wait_text("read notes.txt");
    // Tab moves the focus through the panes; in the narrow layout the tab follows it.
    narrow.send("\t\t");
    narrow.wait_text("No tool calls yet.");
    // Ctrl+C clears the composer, then Ctrl+D on the empty composer quits.
    narrow.send("\x03");
    narrow.wait_text("again to quit");
    narrow.send("\x04");
    assert_eq!(narrow.wait_exit().0, 0);

    let mut tiny = Tui::spawn(
        &["--provider", "demo", "--config", config.to_str().unwrap(), "--workspace", workspace.to_str().unwrap()],
        &[("XDG_DATA_HOME", data.to_str().unwrap()), ("XDG_STATE_HOME", state.to_str().unwrap())],
        &workspace,
        30,
        8,
    );
    tiny.wait_text("Terminal too small (30×8)");
    tiny.send("\x04");
    assert_eq!(tiny.wait_exit().0, 0);
}
