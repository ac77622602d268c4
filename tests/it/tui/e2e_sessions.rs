//! End to end: sessions in the real client (pseudo-terminal, demo model) — recorded,
//! resumed with `-c`, `/new`, the `/sessions` picker, and a session in use elsewhere.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::{Sandbox, run};
use crate::support::pty::{Tui, status_line};
use std::path::{Path, PathBuf};

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

fn session_files(root: &Path) -> Vec<PathBuf> {
    let dir = root.join("data/claw-tui/sessions");
    let mut files = Vec::new();
    for slug in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(slug.path()).unwrap().flatten() {
            // The event log beside each session is not a session.
            if !file
                .file_name()
                .to_string_lossy()
                .ends_with(".events.jsonl")
            {
                files.push(file.path());
            }
        }
    }
    files.sort();
    files
}

/// Records a session with `-p`, opens it in a first client, then starts a second
/// `-c` client on it and waits until that one offers to copy the session in use.
fn second_client_on_a_session_in_use(sandbox: &Sandbox) -> (Tui, Tui) {
    let root = sandbox.dir.path();
    let mut cmd = sandbox.command();
    cmd.args(["--provider", "demo", "-p", "hello there"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");

    let first = Tui::demo(root, "0", &["-c"]);
    first.wait_for("the first client on the session", |s| {
        s.contents().contains("› hello there") && idle(s)
    });

    let second = Tui::demo(root, "0", &["-c"]);
    second.wait_text("open in another claw-tui process");
    (first, second)
}

#[test]
fn the_client_records_resumes_starts_new_and_picks_sessions() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    std::fs::write(sandbox.workspace().join("notes.txt"), "hello").unwrap();

    let tui = Tui::demo(root, "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    let mut tui = tui;
    tui.send("read notes.txt\r");
    tui.wait_for("the read_file answer", |s| {
        s.contents().contains("returned:") && idle(s)
    });
    tui.quit();
    let files = session_files(root);
    assert_eq!(files.len(), 1, "one session was recorded: {files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("read notes.txt") && text.contains("\"tool_result\""));

    // -c brings the chat and the tool tree back.
    let mut tui = Tui::demo(root, "0", &["-c"]);
    let screen = tui.wait_for("the resumed chat", |s| {
        s.contents().contains("Resumed session") && idle(s)
    });
    assert!(screen.contains("› read notes.txt"), "{screen}");
    assert!(
        screen.contains("✓ read_file"),
        "the tree is rebuilt:\n{screen}"
    );

    // /new clears the chat and starts a second file.
    tui.send("/new\r");
    let screen = tui.wait_text("New session");
    assert!(!screen.contains("› read notes.txt"), "{screen}");
    tui.send("hello\r");
    tui.wait_for("the second session's answer", |s| {
        s.contents().contains("› hello") && idle(s)
    });
    tui.quit();
    assert_eq!(session_files(root).len(), 2);

    // A plain start is a third session; the picker lists the two earlier ones (and
    // this one once it has a message) and opens the chosen one.
    let mut tui = Tui::demo(root, "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.send("/sessions\r");
    let screen = tui.wait_text("Sessions (");
    assert!(
        screen.contains("read notes.txt") && screen.contains("hello"),
        "{screen}"
    );
    // Most recent first: "hello" is on top, the first session below it.
    tui.send("\x1b[B");
    tui.send("\r");
    // The picker gone too: a frame is read as it arrives, and one half drawn can show
    // the resumed chat above the picker's last rows — its preview of the highlighted
    // session's last prompt among them. So the wait is for the whole frame: the first
    // session and none of the second; opening the wrong one times out with its screen.
    tui.wait_for("the picked session, and only it", |s| {
        s.contents().contains("Resumed session")
            && s.contents().contains("› read notes.txt")
            && !s.contents().contains("name or first prompt")
            && !s.contents().contains("› hello")
    });
    tui.quit();
}

#[test]
fn a_session_in_use_is_offered_as_a_copy() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let (first, mut second) = second_client_on_a_session_in_use(&sandbox);
    second.send("y\r");
    let screen = second.wait_for("the copy", |s| {
        s.contents().contains("with a copy of session") && idle(s)
    });
    assert!(!screen.contains("Resumed session"), "{screen}");
    second.quit();
    first.quit();
    assert_eq!(session_files(root).len(), 2, "the copy is a new session");
}

#[test]
fn declining_the_copy_of_a_session_in_use_opens_nothing_and_exits_2() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let (first, mut second) = second_client_on_a_session_in_use(&sandbox);
    second.send("n\r");
    second.wait_text("was not opened; close the other claw-tui first, or pass --fork");
    let (code, alternate, _) = second.wait_exit();
    assert_eq!(
        (code, alternate),
        (2, false),
        "a usage error, the screen never taken"
    );
    first.quit();
    assert_eq!(session_files(root).len(), 1, "no copy was made");
}

/// Quitting names the session, what it used and the command that resumes it; a client
/// quit before anything was said names nothing (its empty session is not kept).
#[test]
fn quitting_says_how_to_resume_the_session() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let mut tui = Tui::demo(root, "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.send("\x04");
    assert_eq!(tui.wait_exit().0, 0);
    let said = tui.text();
    assert!(!said.contains("Resume it with"), "{said}");
    assert!(session_files(root).is_empty());

    let mut tui = Tui::demo(root, "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.send("hello\r");
    tui.wait_for("the answer", |s| {
        s.contents().contains("› hello") && idle(s)
    });
    tui.send("\x04");
    assert_eq!(tui.wait_exit().0, 0);
    let said = tui.text().replace('\n', "");
    let files = session_files(root);
    assert_eq!(files.len(), 1);
    let stem = files[0].file_stem().unwrap().to_string_lossy().into_owned();
    let id = stem.rsplit('_').next().unwrap();
    assert!(said.contains(&format!("Session {id} saved (↑")), "{said}");
    assert!(said.contains("tokens · $0.0000)"), "{said}");
    assert!(said.contains(&format!("--session {id}")), "{said}");

    // The command it gives resumes that session.
    let command = said
        .split("Resume it with: claw-tui")
        .nth(1)
        .unwrap()
        .trim();
    let args: Vec<&str> = command.split_whitespace().collect();
    let mut cmd = sandbox.command();
    cmd.args(["--provider", "demo"])
        .args(&args)
        .args(["-p", "again"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(session_files(root), files, "the same session went on");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("hello") && text.contains("again"));
}
