//! The offline demo model's subagents and cron jobs in the real client (pty): a spawned
//! subagent does a real job with a tool and its one-line report comes back as a
//! notification with a one-line answer; a cron job's fires get one line each and
//! `stop` ends the job; the help lists every command; a read's and a listing's card say
//! what the call did.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::Sandbox;
use crate::support::pty::{Tui, status_line};

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

/// The client on the demo model, answering at once, in a terminal of `rows` rows.
fn start(sandbox: &Sandbox, rows: u16) -> Tui {
    let tui = Tui::in_sandbox(
        sandbox.dir.path(),
        &["--provider", "demo"],
        &[("CLAW_TUI_DEMO_PACE_MS", "0")],
        (120, rows),
    );
    tui.wait_text("Welcome to claw-tui");
    tui
}

#[test]
fn a_spawned_subagent_counts_the_lines_and_its_report_comes_back_in_one_line() {
    let sandbox = Sandbox::new();
    let readme: String = (1..=42).map(|i| format!("line {i}\n")).collect();
    std::fs::write(sandbox.workspace().join("README.md"), readme).unwrap();
    let mut tui = start(&sandbox, 40);

    tui.send("spawn count the lines in README.md\r");
    let screen = tui.wait_for("the main agent's answer to the subagent's report", |s| {
        s.contents()
            .contains("Task 1 (subagent-1) completed: README.md has 42 lines.")
            && idle(s)
    });
    assert!(
        screen.contains("subagent-1 is on it in the background"),
        "the spawn is acknowledged in one line:\n{screen}"
    );
    assert!(
        screen.contains("◆ Subagent \"Task 1\" (subagent-1) completed"),
        "the report arrives as the client shows notifications:\n{screen}"
    );
    let report_lines = screen
        .lines()
        .filter(|l| l.contains("README.md has 42 lines."))
        .count();
    assert_eq!(
        report_lines, 2,
        "once in the notification, once in the answer:\n{screen}"
    );
    for unwanted in ["Try one of these", "ʼʼʼ", "reported back", "returned:"] {
        assert!(
            !screen.contains(unwanted),
            "{unwanted:?} on screen:\n{screen}"
        );
    }
    tui.quit();
}

#[test]
fn a_cron_jobs_fires_get_one_line_each_and_stop_removes_it() {
    let sandbox = Sandbox::new();
    let mut tui = start(&sandbox, 40);

    tui.send("every 2 seconds ping\r");
    let screen = tui.wait_for("the job scheduled and fired", |s| {
        s.contents()
            .contains("Scheduled cron-1: every 2 seconds, “ping”")
            && s.contents().contains("cron-1 fired")
    });
    assert!(
        screen.contains("◆ Cron job \"ping\" (cron-1) fired"),
        "{screen}"
    );
    assert!(
        !screen.contains("[SYSTEM NOTIFICATION]"),
        "the envelope is for the model:\n{screen}"
    );
    assert!(!screen.contains("ʼʼʼ"), "no quoted block:\n{screen}");

    tui.send("stop cron-1\r");
    tui.wait_for("the job removed", |s| {
        s.contents()
            .contains("Removed cron-1; it will not fire again.")
            && idle(s)
    });
    tui.quit();
}

#[test]
fn the_help_lists_every_demo_command() {
    let sandbox = Sandbox::new();
    // Tall enough for the whole help.
    let mut tui = start(&sandbox, 60);
    tui.send("help\r");
    let screen = tui.wait_for("the help", |s| {
        s.contents().contains("qwen2.5-coder") && idle(s)
    });
    for command in [
        "list files",
        "read PATH",
        "run COMMAND",
        "count the lines in PATH",
        "spawn TASK",
        "spawn count the lines in README.md",
        "message TEXT",
        "every N seconds TEXT",
        "every 30 seconds check the build",
        "stop JOB",
    ] {
        assert!(screen.contains(command), "{command:?} missing:\n{screen}");
    }
    tui.quit();
}

/// A read's and a listing's card in the chat say what the call did, in the Tools pane's
/// words: the lines read, the entries listed.
#[test]
fn the_cards_of_a_read_and_a_listing_say_what_they_did() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.workspace().join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(sandbox.workspace().join("todo.md"), "- a\n").unwrap();
    let mut tui = start(&sandbox, 40);

    tui.send("read notes.txt\r");
    tui.wait_for("the read's card", |s| {
        s.contents().contains("✓ read_file notes.txt · 3 lines") && idle(s)
    });
    tui.send("list files\r");
    let screen = tui.wait_for("the listing's card", |s| {
        s.contents().contains("entries · ") && idle(s)
    });
    // Whatever else the workspace holds (the two files at least), the count is its own.
    let entries = std::fs::read_dir(sandbox.workspace()).unwrap().count();
    assert!(entries >= 2);
    assert!(
        screen
            .lines()
            .any(|l| l.contains("✓ list_dir") && l.contains(&format!("{entries} entries"))),
        "{entries} entries:\n{screen}"
    );
    tui.quit();
}
