//! Diffs of file changes in the client: the chat card (`edit_file src/main.rs +3 −1`)
//! and the detail overlay (the coloured unified diff with line numbers, highlighted by
//! the file's language) for an edit, a new file and an overwrite, each from the real
//! tool's result on a temp workspace; and the `/diff` overlay.

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{AgentEvent, StopReason, Tool, ToolResult};
use claw_tui::checkpoint::SessionFile;
use claw_tui::theme::Token;
use claw_tui::tools::Workspace;
use claw_tui::tools::fs::{EditFileTool, FileChange, WriteFileTool};
use claw_tui::tui::{App, Effect, Msg, checkpoints};
use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

const MAIN_RS: &str = "use std::env;\n\nfn main() {\n    let args: Vec<String> = env::args().collect();\n    let name = args.get(1).map(String::as_str).unwrap_or(\"world\");\n    println!(\"hello {name}\");\n}\n\nfn unused() {}\n";

/// Runs `tool` with `args` in a temp workspace prepared by `setup`.
async fn real_result(tool: &str, args: Value, setup: impl FnOnce(&Path)) -> ToolResult {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let ws = Arc::new(Workspace::new(dir.path().canonicalize().unwrap(), false));
    let tool: Arc<dyn Tool> = match tool {
        "edit_file" => Arc::new(EditFileTool::new(ws)),
        _ => Arc::new(WriteFileTool::new(ws)),
    };
    let result = crate::support::call(tool.as_ref(), args).await;
    assert!(!result.is_error, "{result:?}");
    result
}

/// The app after one call of `name` with `args` that returned `result`.
fn scene(prompt: &str, name: &str, args: Value, result: ToolResult) -> App {
    let mut app = app();
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, prompt);
    answer(
        &clock,
        &mut app,
        20,
        vec![call("c1", name, args.clone())],
        StopReason::ToolUse,
    );
    start(&clock, &mut app, 30, "c1", name, args);
    let event = AgentEvent::ToolExecutionEnd {
        tool_call_id: "c1".into(),
        tool_name: name.into(),
        is_error: result.is_error,
        result,
    };
    clock.at(&mut app, 42, agent(event));
    app
}

/// Opens the call's details from the tool tree (Tab, Tab, Enter), answering the
/// highlight requests as the worker would.
fn open_detail(app: &mut App) {
    app.update(key(KeyCode::Tab));
    app.update(key(KeyCode::Tab));
    let effects = app.update(key(KeyCode::Enter));
    answer_highlights(app, effects);
}

fn answer_highlights(app: &mut App, effects: Vec<Effect>) {
    for effect in effects {
        if let Effect::Highlight(r) = effect {
            let lines = sets().highlight(&r.lang, &r.code, &r.theme);
            app.update(Msg::Highlighted { key: r.key, lines });
        }
    }
}

fn row_text(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

/// The first row containing `needle`, and the column where it starts.
fn find(buf: &Buffer, needle: &str) -> (u16, u16) {
    for y in 0..buf.area.height {
        let text = row_text(buf, y);
        if let Some(byte) = text.find(needle) {
            let col = text[..byte].chars().count() as u16;
            return (col, y);
        }
    }
    panic!("{needle:?} is not on screen")
}

#[tokio::test]
async fn an_edit_shows_plus_three_minus_one_and_its_highlighted_diff() {
    let args = json!({
        "path": "src/main.rs",
        "old_text": "    println!(\"hello {name}\");\n",
        "new_text": "    if !name.is_empty() {\n        println!(\"hi {name}\");\n    }\n",
    });
    let result = real_result("edit_file", args.clone(), |dir| {
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/main.rs"), MAIN_RS).unwrap();
    })
    .await;
    let mut app = scene("greet nobody", "edit_file", args, result);
    let terminal = draw(&mut app);
    insta::assert_snapshot!("edit_card", terminal.backend());
    let buf = terminal.backend().buffer();
    let (x, y) = find(buf, "+3 −1");
    assert_eq!(buf[(x, y)].fg, app_theme().fg(Token::Success).fg.unwrap());

    open_detail(&mut app);
    let terminal = draw(&mut app);
    insta::assert_snapshot!("edit_overlay", terminal.backend());
    let buf = terminal.backend().buffer();
    let (x, y) = find(buf, "−     println!(\"hello {name}\");");
    assert_eq!(
        buf[(x + 2, y)].fg,
        app_theme().fg(Token::Error).fg.unwrap(),
        "the removed line is in the error colour"
    );
    let needle = "if !name.is_empty() {";
    let (x, y) = find(buf, needle);
    let colours: std::collections::HashSet<_> = (x..x + needle.len() as u16)
        .map(|x| buf[(x, y)].fg)
        .collect();
    assert!(
        colours.len() >= 2,
        "the added line is highlighted: {colours:?}"
    );
}

#[tokio::test]
async fn a_new_file_is_all_added() {
    let content = "# Todo\n\n- [ ] diffs\n- [ ] undo\n- [x] hooks\n";
    let args = json!({"path": "notes/todo.md", "content": content});
    let result = real_result("write_file", args.clone(), |_| {}).await;
    let mut app = scene("start a todo list", "write_file", args, result);
    insta::assert_snapshot!("new_file_card", draw(&mut app).backend());
    open_detail(&mut app);
    insta::assert_snapshot!("new_file_overlay", draw(&mut app).backend());
}

#[tokio::test]
async fn an_overwrite_shows_what_was_lost() {
    let old = "[server]\nport = 8080\nhost = \"0.0.0.0\"\n\n[log]\nlevel = \"debug\"\nfile = \"/var/log/app.log\"\n";
    let new = "[server]\nport = 9090\n\n[log]\nlevel = \"info\"\n";
    let args = json!({"path": "config.toml", "content": new});
    let result = real_result("write_file", args.clone(), |dir| {
        std::fs::write(dir.join("config.toml"), old).unwrap();
    })
    .await;
    let change = FileChange::from_details(&result.details).unwrap();
    assert_eq!((change.added, change.removed), (2, 4));
    let mut app = scene("simplify the config", "write_file", args, result);
    insta::assert_snapshot!("overwrite_card", draw(&mut app).backend());
    open_detail(&mut app);
    insta::assert_snapshot!("overwrite_overlay", draw(&mut app).backend());
}

#[test]
fn long_hunks_fold_in_the_overlay_and_f_unfolds_them() {
    let content: String = (1..=80).map(|i| format!("line {i}\n")).collect();
    let change = FileChange::between("big.txt", None, Some(content.as_bytes()), false);
    let result = ToolResult::text("Wrote it.").with_details(json!({"change": change}));
    let mut app = scene(
        "write a big file",
        "write_file",
        json!({"path": "big.txt"}),
        result,
    );
    open_detail(&mut app);
    let folded = draw(&mut app);
    find(folded.backend().buffer(), "50 lines folded (f unfolds)");
    app.update(key(KeyCode::Char('f')));
    app.update(key(KeyCode::PageDown));
    let unfolded = draw(&mut app);
    let buf = unfolded.backend().buffer();
    find(buf, "line 40");
    assert!(
        (0..buf.area.height).all(|y| !row_text(buf, y).contains("lines folded")),
        "unfolded"
    );
}

#[test]
fn the_session_diff_overlay_lists_every_file() {
    let mut app = app();
    let files = vec![
        SessionFile {
            change: FileChange::between(
                "src/lib.rs",
                Some(b"pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"),
                Some(b"pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n"),
                false,
            ),
            changed_outside: false,
        },
        SessionFile {
            change: FileChange::between("NOTES.md", None, Some(b"remember the milk\n"), false),
            changed_outside: true,
        },
    ];
    let effects = app.update(Msg::Checkpoints(checkpoints::Msg::Diff(Ok(files))));
    answer_highlights(&mut app, effects);
    insta::assert_snapshot!("session_diff", draw(&mut app).backend());
}

fn app_theme() -> claw_tui::theme::Theme {
    crate::support::tui::config().theme
}
