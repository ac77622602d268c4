//! Diffs and undo in the real client: the binary in a pseudo-terminal against the fake
//! OpenAI-compatible server, whose scripted replies make the real file tools edit, create
//! and overwrite files. The card shows each change's counts, `/diff` lists every file,
//! `/undo` asks about a file the user changed since and leaves it, and the next `/undo`
//! restores the edit and removes the new file, on disk.

use crate::support::bin::Sandbox;
use crate::support::fake_llm::openai::{done_marker, finish, text_reply, tool, usage};
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::pty::{Tui, status_line};
use serde_json::json;

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_real_client_shows_each_change_and_undo_puts_the_files_back() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    std::fs::write(ws.join("a.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(ws.join("b.txt"), "mine\n").unwrap();
    let edit = json!({"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"});
    let create = json!({"path": "docs/new.txt", "content": "one\ntwo\n"});
    let overwrite = json!({"path": "b.txt", "content": "the model's\n"});
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeLlm::start(vec![
        Scripted::sse([
            tool(Some(0), Some("c1"), Some("edit_file"), &edit.to_string()),
            tool(Some(1), Some("c2"), Some("write_file"), &create.to_string()),
            finish("tool_calls"),
            usage(10, 5, 0),
            done_marker(),
        ]),
        Scripted::sse(text_reply(&["Changed both."])),
        Scripted::sse([
            tool(
                Some(0),
                Some("c3"),
                Some("write_file"),
                &overwrite.to_string(),
            ),
            finish("tool_calls"),
            usage(10, 5, 0),
            done_marker(),
        ]),
        Scripted::sse(text_reply(&["Wrote b."])),
    ]));
    let mut tui = Tui::openai_at(sandbox.dir.path(), &server.url(), &[]);
    tui.wait_for("the idle state", idle);

    tui.send("change the files\r");
    tui.wait_for("the first turn with both cards", |s| {
        let text = s.contents();
        [
            "Changed both.",
            "edit_file a.txt +1 −1",
            "write_file docs/new.txt +2 −0",
        ]
        .iter()
        .all(|l| text.contains(l))
            && idle(s)
    });
    assert_eq!(read(&ws.join("a.txt")), "ALPHA\nbeta\n");
    assert_eq!(read(&ws.join("docs/new.txt")), "one\ntwo\n");

    tui.send("now b\r");
    tui.wait_for("the second turn with its card", |s| {
        let text = s.contents();
        text.contains("Wrote b.") && text.contains("write_file b.txt +1 −1") && idle(s)
    });
    // The user's editor changes b.txt after the model did.
    std::fs::write(ws.join("b.txt"), "mine, edited\n").unwrap();

    tui.send("/diff\r");
    // Waited for whole: a screen may be caught while the overlay is being drawn.
    let lines = [
        "Session diff: 3 file(s)",
        "a.txt +1 −1",
        "b.txt +1 −1  (changed since by something else)",
        "docs/new.txt +2 −0",
    ];
    tui.wait_for("the session diff of the three files", |s| {
        let text = s.contents();
        lines.iter().all(|l| text.contains(l))
    });
    tui.send("\x1b");
    tui.wait_for("the diff closed", |s| {
        !s.contents().contains("Session diff") && idle(s)
    });

    // The last turn overwrote b.txt, which the user changed since: asked, and left.
    tui.send("/undo\r");
    tui.wait_text("Undo: files changed since");
    tui.send("s");
    tui.wait_text("Undid turn “now b”. Left as they are (changed since by something");
    assert_eq!(read(&ws.join("b.txt")), "mine, edited\n");

    // The turn before: the edit goes back and the new file goes away.
    tui.send("/undo\r");
    tui.wait_for("the undo of the first turn", |s| {
        let text = s.contents();
        [
            "Undid turn “change the files”.",
            "Restored a.txt",
            "Removed docs/new.txt",
        ]
        .iter()
        .all(|l| text.contains(l))
    });
    assert_eq!(read(&ws.join("a.txt")), "alpha\nbeta\n");
    assert!(!ws.join("docs/new.txt").exists());
    assert_eq!(read(&ws.join("b.txt")), "mine, edited\n");
}
