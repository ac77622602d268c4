//! The subagents' side file (`<session>.subagents`) has the discipline of the other
//! logs beside a session, through the real binary on the demo model: a damaged line
//! (not UTF-8, not a call, torn mid-file) loses only itself and is said by the export
//! and by the client opening the session; a torn last line is cut aside into
//! `.subagents.damaged` (and said) before the next call starts a line of its own; and a
//! full disk holds the calls in memory, says so in the client, and writes them in
//! order once there is room, without waiting for another call.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::{Sandbox, run, session_lines, session_messages};
use crate::support::poll;
use crate::support::pty::{DEADLINE, Tui, status_line};
use crate::support::tmpfs::Tmpfs;
use claw_tui::session::{read_subagent_calls, subagent_calls_path};
use scraper::{Html, Selector};

/// The screen's chat pane as one line of words: rows joined, the panes' borders and
/// the dashboard beside the chat left out, so a wrapped notice reads whole.
fn chat_words(screen: &vt100::Screen) -> String {
    let rows: Vec<String> = screen
        .contents()
        .lines()
        .map(|row| row.split("││").next().unwrap_or_default().replace('│', " "))
        .collect();
    rows.join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The lines of the side file that end with a newline.
fn whole_lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|b| *b == b'\n')
        .filter(|l| l.ends_with(b"\n"))
        .map(<[u8]>::to_vec)
        .collect()
}

/// Asks the demo model for a subagent that lists the workspace, and waits until it
/// reported (`reports` notifications in the session) and the client is idle.
fn spawn_and_wait(tui: &mut Tui, sandbox: &Sandbox, reports: usize) {
    tui.send("spawn list files\r");
    tui.wait_for("the subagent's report", |s| {
        let files = sandbox.session_files();
        let [session] = files.as_slice() else {
            return false;
        };
        let notifications = session_messages(session)
            .iter()
            .filter(|m| m["role"] == "notification")
            .count();
        notifications >= reports && status_line(s).contains("idle")
    });
}

/// How many subagent calls the HTML export of the session with `id` nests in its
/// spawn cards; the export's stderr.
fn exported_calls(sandbox: &Sandbox, id: &str) -> (usize, String) {
    let mut cmd = sandbox.command();
    cmd.args(["export", id, "--format", "html"]);
    let (code, html, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let doc = Html::parse_document(&html);
    let calls = Selector::parse(".subagent-call").unwrap();
    (doc.select(&calls).count(), stderr)
}

#[test]
fn damaged_lines_of_the_subagents_file_lose_only_themselves_and_are_said() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let mut tui = Tui::demo(root, "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    spawn_and_wait(&mut tui, &sandbox, 1);
    spawn_and_wait(&mut tui, &sandbox, 2);
    tui.quit();

    let session = sandbox.only_session();
    let id = session_lines(&session)[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = subagent_calls_path(&session);
    let lines = whole_lines(&std::fs::read(&path).unwrap());
    assert_eq!(lines.len(), 2, "one call per subagent");
    // Between the two calls: a line that is not UTF-8, one that is not a call, and one
    // torn mid-file (ended by the next record); after them, a torn last line.
    let torn_tail = b"{\"parent_call_id\":\"torn-at-the-end";
    let mut damaged = lines[0].clone();
    damaged.extend_from_slice(b"{\"call_id\":\"\xff\xfe\"}\n");
    damaged.extend_from_slice(b"not a call\n");
    damaged.extend_from_slice(b"{\"parent_call_id\":\"sp\n");
    damaged.extend_from_slice(&lines[1]);
    damaged.extend_from_slice(torn_tail);
    std::fs::write(&path, &damaged).unwrap();

    let (calls, stderr) = exported_calls(&sandbox, &id);
    assert_eq!(calls, 2, "both calls are still shown: {stderr}");
    assert!(
        stderr.contains("skipped 3 damaged lines (2, 3, 4)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "last line is incomplete (claw-tui stopped while writing it); its {} bytes",
            torn_tail.len()
        )),
        "{stderr}"
    );

    // Opened again: the torn last line is cut aside before anything is appended, and
    // both that and the damaged lines are said in the chat.
    let mut tui = Tui::demo(root, "0", &["-c"]);
    tui.wait_for("the damage said", |s| {
        let words = chat_words(s);
        words.contains("skipped 3 damaged lines") && words.contains("subagents.damaged")
    });
    spawn_and_wait(&mut tui, &sandbox, 3);
    poll::until("the third call kept", DEADLINE, || {
        (read_subagent_calls(&session).calls.len() == 3).then_some(())
    });
    tui.quit();

    let read = read_subagent_calls(&session);
    assert_eq!(read.calls.len(), 3, "{:?}", read.warnings);
    assert_eq!(
        read.warnings.len(),
        1,
        "only the damaged lines: {:?}",
        read.warnings
    );
    let kept = std::fs::read(session.with_extension("subagents.damaged")).unwrap();
    assert!(
        kept.windows(torn_tail.len()).any(|w| w == torn_tail),
        "{}",
        String::from_utf8_lossy(&kept)
    );
    let (calls, _) = exported_calls(&sandbox, &id);
    assert_eq!(calls, 3);
}

#[test]
fn a_full_disk_holds_the_subagents_calls_says_so_and_writes_them_once_there_is_room() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let Some(disk) = Tmpfs::mount(&root.join("data"), 512 * 1024) else {
        return;
    };
    let mut tui = Tui::demo(root, "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    // The side file does not exist yet: its first line needs a page the disk lacks.
    disk.fill();
    tui.send("spawn list files\r");
    tui.wait_for("the side file's trouble said", |s| {
        chat_words(s).contains(".subagents (No space left on device")
    });
    let session = sandbox.only_session();
    assert!(read_subagent_calls(&session).calls.is_empty());

    // Room again: what was held back is written without another call coming.
    disk.free();
    poll::until("the held call written", DEADLINE, || {
        (read_subagent_calls(&session).calls.len() == 1).then_some(())
    });
    tui.wait_for("idle", |s| status_line(s).contains("idle"));
    spawn_and_wait(&mut tui, &sandbox, 2);
    poll::until("the next call written after it", DEADLINE, || {
        (read_subagent_calls(&session).calls.len() == 2).then_some(())
    });
    tui.quit();
    let read = read_subagent_calls(&session);
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let ids: Vec<&str> = read
        .calls
        .iter()
        .map(|c| c.parent_call_id.as_str())
        .collect();
    assert_ne!(
        ids[0], ids[1],
        "each subagent's call under its own spawn, in order"
    );
}
