//! `@image` mentions of files the model planted in the real client: a link to
//! `/dev/zero` and a FIFO are refused at once with the reason, the message is not sent
//! and its text is back in the composer, and nothing was read (the client's peak memory
//! stays small).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::Sandbox;
use crate::support::pty::{Tui, status_line};

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

/// The process's peak resident memory in KiB (`VmHWM`).
fn peak_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn mentions_of_a_device_link_or_a_fifo_are_refused_and_the_text_kept() {
    let sandbox = Sandbox::new();
    let mut tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_for("the idle state", idle);
    // The model plants them (the demo model runs `run COMMAND` with exec).
    tui.send("run ln -s /dev/zero zero.png && mkfifo pipe.png\r");
    tui.wait_for("the command to end", |s| {
        idle(s) && sandbox.workspace().join("pipe.png").exists()
    });
    for name in ["zero.png", "pipe.png"] {
        tui.send(&format!("look at @{name} please"));
        tui.wait_text(&format!("look at @{name} please"));
        tui.send("\r");
        let screen = tui.wait_text(&format!("Cannot attach @{name}"));
        assert!(screen.contains("is not a regular file"), "{screen}");
        tui.wait_for("the text back in the composer, nothing sent", |s| {
            idle(s) && s.contents().contains(&format!("look at @{name} please"))
        });
        // Cleared by hand (Ctrl+C twice in a row would quit).
        tui.send(&"\x7f".repeat(format!("look at @{name} please").len()));
        tui.wait_for("an empty composer", |s| {
            !s.contents()
                .lines()
                .rev()
                .take(4)
                .any(|l| l.contains(&format!("look at @{name} please")))
        });
    }
    let peak = peak_kib(tui.pid());
    assert!(peak < 200 * 1024, "peak RSS {peak} KiB");
    tui.send("/quit\r");
    tui.wait_exit();
    // Neither message reached the session.
    let sessions = sandbox.session_files();
    let text: String = sessions
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(!text.contains("look at @"), "{text}");
}
