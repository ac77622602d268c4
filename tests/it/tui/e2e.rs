//! End to end: the real binary in a pseudo-terminal, on the offline demo model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::Sandbox;
use crate::support::pty::{Tui, status_line};

fn start(sandbox: &Sandbox, pace_ms: &str, extra: &[&str]) -> Tui {
    Tui::demo(sandbox.dir.path(), pace_ms, extra)
}

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

/// The client on the demo model with `$EDITOR` a shell script of `script`, and `env`.
fn with_editor(sandbox: &Sandbox, script: &str, env: &[(&str, &str)]) -> Tui {
    use std::os::unix::fs::PermissionsExt;
    let editor = sandbox.dir.path().join("editor.sh");
    std::fs::write(&editor, script).unwrap();
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut all_env = vec![
        ("CLAW_TUI_DEMO_PACE_MS", "0"),
        ("EDITOR", editor.to_str().unwrap()),
    ];
    all_env.extend_from_slice(env);
    Tui::in_sandbox(
        sandbox.dir.path(),
        &["--provider", "demo"],
        &all_env,
        (120, 40),
    )
}

#[test]
fn prompt_stream_tool_call_steer_interrupt_and_quit() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.workspace().join("notes.txt"), "hello").unwrap();
    let mut tui = start(&sandbox, "6", &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.wait_for("the idle state", idle);
    // Nothing for the side panes to show yet: the chat has the whole width.
    assert!(!tui.text().contains("Dashboard"), "{}", tui.text());

    // A prompt that makes the demo model call list_dir: the call shows in the tree and
    // its result comes back in the chat.
    tui.send("list files\r");
    tui.wait_text("› list files");
    let screen = tui.wait_for("the list_dir result", |s| {
        s.contents().contains("returned:") && idle(s)
    });
    assert!(
        screen.contains("✓ list_dir"),
        "the card shows the finished call:\n{screen}"
    );
    assert!(
        screen.contains("(Tab switches)"),
        "with a call made, the panes are tabs at 120 columns:\n{screen}"
    );
    assert!(
        screen.contains("notes.txt"),
        "the tool's output is quoted:\n{screen}"
    );

    // A slow answer: its text appears piece by piece while the state says streaming.
    tui.send("hello\r");
    let partial = tui.wait_for("a partly streamed answer", |s| {
        status_line(s).contains("streaming") && s.contents().contains("offline demo model")
    });
    assert!(
        !partial.contains("qwen2.5-coder"),
        "the end of the answer is not there yet"
    );

    // Esc with text steers: the message waits in the queue strip, then is delivered.
    tui.send("then list files");
    tui.wait_text("then list files");
    tui.send("\x1b");
    tui.wait_for("the steering message in the queue strip", |s| {
        s.contents().contains(" steer  then list files")
            || s.contents().contains("› then list files")
    });
    let screen = tui.wait_for("the steered turn to finish", |s| {
        s.contents().contains("› then list files") && idle(s)
    });
    assert!(
        screen.contains("qwen2.5-coder") || screen.contains("returned:"),
        "{screen}"
    );

    // Esc with an empty composer interrupts a run.
    tui.send("hello again\r");
    tui.wait_for("the next answer streaming", |s| {
        status_line(s).contains("streaming")
    });
    tui.send("\x1b");
    tui.wait_for("the interruption", |s| {
        s.contents().contains("interrupted") && idle(s)
    });

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
    tui.wait_for("the answer", |s| {
        s.contents().contains("read_file") && idle(s)
    });
    tui.send("\x04");
    assert_eq!(tui.wait_exit().0, 0);
    let history =
        std::fs::read_to_string(sandbox.dir.path().join("data/claw-tui/history.jsonl")).unwrap();
    assert_eq!(history, "\"read notes.txt\"\n");

    let root = sandbox.dir.path();
    let mut narrow = Tui::in_sandbox(root, &["--provider", "demo"], &[], (80, 24));
    narrow.wait_text("Welcome to claw-tui");
    // The history of the first run is there: Up recalls it.
    narrow.send("\x1b[A");
    narrow.wait_text("read notes.txt");
    // No call yet in this run: the chat has the whole width, no tab bar, until F4.
    assert!(!narrow.text().contains("(Tab switches)"));
    narrow.send("\x1bOS");
    narrow.wait_text("(Tab switches)");
    // Tab moves the focus through the panes; in the narrow layout the tab follows it.
    narrow.send("\t\t");
    narrow.wait_text("No tool calls yet.");
    // Ctrl+C clears the composer, then Ctrl+D on the empty composer quits.
    narrow.send("\x03");
    narrow.wait_text("again to quit");
    narrow.send("\x04");
    assert_eq!(narrow.wait_exit().0, 0);

    let mut tiny = Tui::in_sandbox(root, &["--provider", "demo"], &[], (30, 8));
    tiny.wait_text("Terminal too small: 30×8");
    tiny.send("\x04");
    assert_eq!(tiny.wait_exit().0, 0);
}

#[test]
fn approval_overlay_editor_and_sigterm() {
    let sandbox = Sandbox::new();
    sandbox.write_config("[exec]\napproval = \"ask\"\n");
    let mut tui = with_editor(
        &sandbox,
        "#!/bin/sh\nprintf 'written in the editor' > \"$1\"\n",
        &[],
    );
    tui.wait_text("Welcome to claw-tui");

    // A command needs approval: the overlay shows it; n denies, then y allows.
    tui.send("run echo approved-output\r");
    let screen = tui.wait_text("Approve exec?");
    assert!(screen.contains("$ echo approved-output"), "{screen}");
    tui.send("n");
    tui.wait_for("the denial reported", |s| {
        s.contents().contains("reported an error") && idle(s)
    });
    tui.send("run echo approved-output\r");
    tui.wait_text("Approve exec?");
    tui.send("y");
    tui.wait_for("the approved command's output", |s| {
        s.contents().contains("✓ exec echo approved-output") && idle(s)
    });

    // Ctrl+Z gives the terminal back and takes it again. (Here the kernel drops the stop
    // signal, as for any process group without a job-control shell, so it resumes at once.)
    tui.send("\x1a");
    tui.send("back");
    tui.wait_for("the client back after Ctrl+Z", |s| {
        s.alternate_screen() && s.contents().contains("back")
    });

    // Ctrl+G hands the message to $EDITOR and takes its text back.
    tui.send(" draft");
    tui.wait_text("back draft");
    tui.send("\x07");
    tui.wait_text("written in the editor");

    // SIGTERM restores the terminal too.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(tui.pid()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let (code, alternate, cursor_hidden) = tui.wait_exit();
    assert_eq!((code, alternate, cursor_hidden), (143, false, false));
}

#[test]
fn the_editor_has_the_keyboard_until_it_exits_and_the_client_has_it_after() {
    let sandbox = Sandbox::new();
    // An editor that reads a line typed at the terminal, as a real one reads keys, and
    // adds it to the message. It reads only once the test says so through a FIFO, so the
    // line waits in the terminal meanwhile, with the client the only other reader.
    let go = sandbox.dir.path().join("go.fifo");
    nix::unistd::mkfifo(&go, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let mut tui = with_editor(
        &sandbox,
        "#!/bin/sh\nprintf 'EDITOR READY> '\nread _ < \"$GO\"\nIFS= read -r line\n\
         printf '%s %s' \"$(cat \"$1\")\" \"$line\" > \"$1\"\n",
        &[("GO", go.to_str().unwrap())],
    );
    tui.wait_text("Welcome to claw-tui");
    tui.send("draft");
    tui.wait_text("draft");

    // Ctrl+G: the editor has the terminal; a line typed now is the editor's, even while
    // it does not read yet (the terminal echoes it once it holds it).
    tui.send("\x07");
    tui.wait_for("the editor's prompt", |s| {
        !s.alternate_screen() && s.contents().contains("EDITOR READY>")
    });
    tui.send("typed in the editor\r");
    tui.wait_text("EDITOR READY> typed in the editor");
    std::fs::write(&go, "read now\n").unwrap();
    tui.wait_for("the edited message back in the composer", |s| {
        s.alternate_screen() && s.contents().contains("draft typed in the editor")
    });

    // Back in the client, keys reach it again: typing goes on, Enter sends.
    tui.send(" and after");
    tui.wait_text("draft typed in the editor and after");
    tui.send("\r");
    tui.wait_text("› draft typed in the editor and after");
    tui.send("\x04");
    let (code, alternate, _) = tui.wait_exit();
    assert_eq!((code, alternate), (0, false));
}

#[test]
fn theme_errors_are_reported_before_the_screen_is_taken() {
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.command();
    cmd.args(["--provider", "demo", "--theme", "nope"]);
    let (code, stdout, stderr) = crate::support::bin::run(cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("unknown theme \"nope\"") && stderr.contains("dark, light, high-contrast"),
        "{stderr}"
    );

    let themes = sandbox.dir.path().join("config/themes");
    std::fs::create_dir_all(&themes).unwrap();
    let dark = include_str!("../../../themes/dark.toml");
    std::fs::write(
        themes.join("mine.toml"),
        dark.replace("link = \"#8fa1b3\"\n", ""),
    )
    .unwrap();
    let mut cmd = sandbox.command();
    cmd.args(["--provider", "demo", "--theme", "mine"]);
    let (code, _, stderr) = crate::support::bin::run(cmd);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("mine.toml") && stderr.contains("colors.link"),
        "{stderr}"
    );
}
