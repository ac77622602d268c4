//! File changes in the chat (the client issue's item 1): an `edit_file` or `write_file`
//! card shows its diff — line numbers, signs, the file's highlighting — a long one
//! folded to its first lines with the key that shows the rest, and that key (or `o` /
//! Enter on the selected card) unfolds and folds it again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{StopReason, ToolResult};
use claw_tui::tools::fs::FileChange;
use claw_tui::tui::chat::CardBody;
use claw_tui::tui::{App, Effect, Msg};
use crossterm::event::KeyCode;
use serde_json::json;

/// A run whose one call `name` changed `path` from `before` to `after`.
fn changed(app: &mut App, name: &str, path: &str, before: Option<&str>, after: &str) {
    let clock = Clock::new(app);
    run_start(&clock, app, "change the file");
    let args = json!({"path": path});
    answer(
        &clock,
        app,
        5,
        vec![call("c1", name, args.clone())],
        StopReason::ToolUse,
    );
    start(&clock, app, 10, "c1", name, args);
    let change = FileChange::between(
        path,
        before.map(str::as_bytes),
        Some(after.as_bytes()),
        false,
    );
    let result = ToolResult {
        content: format!("Changed {path}"),
        details: json!({"change": change.to_value()}),
        ..ToolResult::default()
    };
    end_with(&clock, app, 20, "c1", name, result);
    answer(&clock, app, 30, vec![text("Done.")], StopReason::Stop);
    run_end(&clock, app, 40);
}

#[test]
fn an_edit_shows_its_hunk_with_line_numbers_under_the_card() {
    let mut app = sized(120, 30);
    let before = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
    let after = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
    changed(&mut app, "edit_file", "src/calc.py", Some(before), after);
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("✓ edit_file src/calc.py +4 −0"), "{shown}");
    assert!(shown.contains("@@ -4,3 +4,7 @@"), "{shown}");
    assert!(shown.contains(" 9 │+ def mul(a, b):"), "{shown}");
    assert!(shown.contains("10 │+     return a * b"), "{shown}");
    assert!(
        !shown.contains("show all"),
        "a short diff is whole: {shown}"
    );
    insta::assert_snapshot!("edit_diff_120x30", draw(&mut app).backend());
}

#[test]
fn the_diff_asks_for_the_files_highlighting() {
    let mut app = sized(120, 30);
    changed(&mut app, "write_file", "main.rs", None, "fn main() {}\n");
    let now = app.now();
    let effects = app.update_at(Msg::Frame, now);
    assert!(
        effects.iter().any(
            |e| matches!(e, Effect::Highlight(r) if r.lang == "rs" && r.code == "fn main() {}")
        ),
        "{effects:?}"
    );
}

#[test]
fn a_long_diff_is_folded_and_the_expand_key_unfolds_and_folds_it() {
    let mut app = sized(120, 40);
    let after: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    changed(&mut app, "write_file", "notes.txt", None, &after);
    let folded = screen(&mut app).join("\n");
    assert!(folded.contains("line 11"), "{folded}");
    assert!(!folded.contains("line 12"), "{folded}");
    assert!(
        folded.contains("└ 29 more lines · Ctrl+O: show all"),
        "{folded}"
    );
    insta::assert_snapshot!("long_diff_folded_120x40", draw(&mut app).backend());

    app.update(ctrl('o'));
    assert!(matches!(
        app.chat().card("c1").map(|c| &c.body),
        Some(CardBody::Diff { expanded: true, .. })
    ));
    let open = screen(&mut app).join("\n");
    assert!(open.contains("the whole diff shown"), "{open}");
    assert!(open.contains("Ctrl+O: fold"), "{open}");
    // The end of the diff is at the bottom of the chat now.
    assert!(open.contains("40 │+ line 40"), "{open}");

    // `o` on the selected card folds it again.
    app.update(key(KeyCode::Tab));
    app.update(key(KeyCode::Char('[')));
    app.update(key(KeyCode::Char('[')));
    app.update(key(KeyCode::Char('o')));
    let again = screen(&mut app).join("\n");
    assert!(again.contains("29 more lines"), "{again}");
}
