//! The composer's input history (`history.jsonl` in the data dir) when it is damaged:
//! a line that cannot be read (invalid UTF-8, not a JSON string, torn) is skipped and
//! counted; every other entry is kept, and an entry added after a torn line starts a
//! line of its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::Sandbox;
use crate::support::pty::Tui;
use claw_tui::tui::host::history::{append, history_path, load};
use std::io::Write;

/// The bytes of a history with two bad lines between good ones, and a torn end.
fn damaged_history() -> Vec<u8> {
    let mut bytes = b"\"first\"\n".to_vec();
    bytes.extend_from_slice(b"\"caf\xe9 latin-1\"\n");
    bytes.extend_from_slice(b"\"second\"\n");
    bytes.extend_from_slice(b"42\n");
    bytes.extend_from_slice(b"\"third\"\n");
    bytes.extend_from_slice(b"\"torn at the en");
    bytes
}

#[test]
fn unreadable_lines_are_skipped_and_counted_and_the_rest_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    std::fs::write(history_path(data), damaged_history()).unwrap();
    let loaded = load(data).unwrap();
    assert_eq!(loaded.entries, ["first", "second", "third"]);
    assert_eq!(loaded.skipped, 3);

    // Appended after the torn line: a line of its own, not glued to the fragment.
    append(data, "fourth").unwrap();
    let loaded = load(data).unwrap();
    assert_eq!(loaded.entries, ["first", "second", "third", "fourth"]);
    assert_eq!(loaded.skipped, 3);
}

#[test]
fn the_client_keeps_the_history_around_a_bad_line_and_says_so() {
    let sandbox = Sandbox::new();
    let data = sandbox.dir.path().join("data/claw-tui");
    std::fs::create_dir_all(&data).unwrap();
    let mut file = std::fs::File::create(history_path(&data)).unwrap();
    file.write_all(b"\"older entry\"\n\"bad \xff byte\"\n\"newest entry\"\n")
        .unwrap();
    drop(file);

    let mut tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_text("unreadable line (not UTF-8 text");
    tui.send("\x1b[A");
    tui.wait_text("newest entry");
    tui.send("\x1b[A");
    tui.wait_text("older entry");
    // Ctrl+C clears the composer; Ctrl+D on the empty composer quits.
    tui.send("\x03");
    tui.wait_text("again to quit");
    tui.quit();
}
