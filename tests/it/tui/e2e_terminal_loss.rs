//! The real client in a pseudo-terminal when things around it break: its terminal
//! window is closed in the middle of a streamed answer (it saves the session and exits,
//! without a panic), and a corrupt cron jobs file (the chat says so at start).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::Sandbox;
use crate::support::pty::Tui;
use std::path::{Path, PathBuf};

fn session_files(root: &Path) -> Vec<PathBuf> {
    let dir = root.join("data/claw-tui/sessions");
    let mut files = Vec::new();
    for slug in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(slug.path()).unwrap().flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            if name.ends_with(".jsonl") && !name.ends_with(".events.jsonl") {
                files.push(file.path());
            }
        }
    }
    files
}

#[test]
fn closing_the_terminal_while_streaming_saves_the_session_and_exits_cleanly() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    // Slow enough that the answer is still streaming when the window closes.
    let mut tui = Tui::demo(root, "20", &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.send("hello there\r");
    tui.wait_text("offline demo model");
    tui.hang_up();

    let (code, signal) = tui.wait_hung_up();
    let log = std::fs::read_to_string(root.join("state/claw-tui/claw-tui.log")).unwrap();
    assert!(!log.contains("panic"), "{log}");
    assert_eq!(
        (code, signal.as_deref()),
        (129, None),
        "exit as on SIGHUP, no abort"
    );

    let files = session_files(root);
    assert_eq!(files.len(), 1, "{files:?}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let messages: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["type"] == "message")
        .map(|l| &l["message"])
        .collect();
    assert_eq!(messages.len(), 2, "{lines:#?}");
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[0]["content"], "hello there");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["stop_reason"], "aborted", "{:#}", messages[1]);
    let text = messages[1]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("offline demo model"), "{text}");
}

#[test]
fn a_corrupt_jobs_file_is_reported_in_the_chat() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let jobs = sandbox.cron_dir().join("jobs.json");
    std::fs::create_dir_all(jobs.parent().unwrap()).unwrap();
    std::fs::write(&jobs, "not json at all").unwrap();
    let mut tui = Tui::demo(root, "0", &[]);
    tui.wait_text("Cron jobs are stopped");
    tui.wait_text("expected ident at line 1");
    tui.send("\x04");
    let (code, alternate, _) = tui.wait_exit();
    assert_eq!((code, alternate), (0, false));
    assert_eq!(std::fs::read_to_string(&jobs).unwrap(), "not json at all");
}
