//! Tool output in the chat (issue 18, items 1-3): a running command's card shows its
//! last lines live with a timer; a finished one its last lines, the exit code and a key
//! to show all; the tree's line under a call is its latest line with a count; an
//! interrupted call says so, and the chat marks where the run was interrupted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{AgentEvent, StopReason, ToolResult};
use claw_tui::tui::chat::CardBody;
use claw_tui::tui::tool_tree::{CallStatus, TreeRow};
use claw_tui::tui::{Effect, Msg};
use crossterm::event::KeyCode;
use serde_json::json;

const COMMAND: &str = "for i in 1 2 3 4 5 6 7 8; do echo line $i; sleep 1; done";

/// A run calling `exec` with `COMMAND`, which has printed lines 1 to `printed`.
fn counting(width: u16, height: u16, printed: u64) -> (claw_tui::tui::App, Clock) {
    let mut app = sized(width, height);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "count to eight slowly");
    answer(
        &clock,
        &mut app,
        100,
        vec![
            text("Counting, one line a second."),
            call("c1", "exec", json!({"command": COMMAND})),
        ],
        StopReason::ToolUse,
    );
    start(
        &clock,
        &mut app,
        200,
        "c1",
        "exec",
        json!({"command": COMMAND}),
    );
    for i in 1..=printed {
        output(
            &clock,
            &mut app,
            200 + i * 1000,
            "c1",
            &format!("line {i}\n"),
        );
    }
    clock.at(&mut app, 300 + printed * 1000, Msg::Tick);
    (app, clock)
}

#[test]
fn a_running_command_shows_its_last_lines_and_a_timer() {
    let (mut app, _) = counting(120, 40, 7);
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("exec for i in 1 2 3 4 5 6 7 8; do echo line $i; sleep 1; d… · 7.1s"),
        "the arguments give way to the timer: {shown}"
    );
    assert!(shown.contains("│ line 7") && shown.contains("│ line 3"));
    assert!(!shown.contains("│ line 2"), "only the last five lines");
    insta::assert_snapshot!("card_running_120x40", draw(&mut app).backend());
    resize(&mut app, 80, 24);
    insta::assert_snapshot!("card_running_80x24", draw(&mut app).backend());
}

#[test]
fn a_finished_command_shows_its_end_and_exit_code_and_expands_in_place() {
    let (mut app, clock) = counting(120, 40, 8);
    let out: String = (1..=8).map(|i| format!("line {i}\n")).collect();
    end_with(&clock, &mut app, 8300, "c1", "exec", exec_result(&out, 0));
    run_end(&clock, &mut app, 8400);
    let card = app.chat().card("c1").unwrap().clone();
    assert_eq!(
        card.body,
        CardBody::Output {
            lines: (4..=8).map(|i| format!("line {i}")).collect(),
            total: 8,
            exit_code: Some(0),
            expanded: false,
        },
        "the last five lines, the notes left out"
    );
    insta::assert_snapshot!("card_finished_120x40", draw(&mut app).backend());

    // The tree's line under the call is the exit code and the latest line, with how
    // many there are.
    app.update(Msg::Frame);
    assert!(app.tools().calls().rows().contains(&TreeRow::Preview {
        depth: 0,
        text: "exit 0 · line 8  (8 lines)".into()
    }));

    // Ctrl+O shows all of the newest card's output in place; again folds it.
    app.update(ctrl('o'));
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("│ line 1") && shown.contains("Ctrl+O: collapse"),
        "{shown}"
    );
    insta::assert_snapshot!("card_expanded_120x40", draw(&mut app).backend());
    resize(&mut app, 80, 24);
    insta::assert_snapshot!("card_expanded_80x24", draw(&mut app).backend());
    app.update(ctrl('o'));
    assert!(!app.chat().is_expanded("c1"));
}

#[test]
fn a_failed_command_shows_its_exit_code_in_the_error_colour() {
    let (mut app, clock) = counting(120, 40, 2);
    end_with(
        &clock,
        &mut app,
        2500,
        "c1",
        "exec",
        exec_result("line 1\nline 2\nmake: *** [all] Error 2\n", 2),
    );
    let terminal = draw(&mut app);
    let shown = format!("{}", terminal.backend());
    assert!(
        shown.contains("✗ exec") && shown.contains("exit 2 · 3 lines"),
        "{shown}"
    );
}

#[test]
fn an_interrupted_call_says_interrupted_and_the_chat_marks_the_point() {
    let (mut app, clock) = counting(120, 40, 3);
    // Esc on an empty composer interrupts the run.
    let effects = app.update(key(KeyCode::Esc));
    assert!(effects.contains(&Effect::Abort));
    let mut stopped = exec_result("line 1\nline 2\nline 3\n", 143);
    stopped.content = "line 1\nline 2\nline 3\n[Cancelled by the user: the command and every \
                       process it started were killed.]"
        .into();
    stopped.details = json!({"exit_code": null, "cancelled": true, "interrupted": "abort"});
    end_with(&clock, &mut app, 3500, "c1", "exec", stopped);
    run_end(&clock, &mut app, 3600);
    assert_eq!(
        app.tools().node("c1").unwrap().status,
        CallStatus::Interrupted
    );
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("■ exec") && shown.contains("· interrupted ·"),
        "{shown}"
    );
    assert!(!shown.contains("failed"), "{shown}");
    assert!(
        shown.contains("■ interrupted"),
        "the marker where it stopped: {shown}"
    );
    insta::assert_snapshot!("card_interrupted_120x40", draw(&mut app).backend());
}

#[test]
fn stopping_only_the_tool_keeps_the_run_going() {
    let (mut app, clock) = counting(120, 40, 2);
    typed(&mut app, "stop counting, two is enough");
    let effects = app.update(ctrl('x'));
    assert_eq!(
        effects,
        [
            Effect::Steer("stop counting, two is enough".into()),
            Effect::InterruptTools
        ]
    );
    assert_eq!(
        app.status().hint(),
        Some("stopping exec · the steer goes in now")
    );
    let mut result = ToolResult::text(format!(
        "line 1\nline 2\n{}",
        claw_tui::agent::INTERRUPTED_BY_USER
    ));
    result.is_error = true;
    result.details = json!({"exit_code": null, "cancelled": true, "interrupted": "user"});
    end_with(&clock, &mut app, 2600, "c1", "exec", result);
    clock.at(&mut app, 2700, agent(AgentEvent::TurnStart { turn: 2 }));
    for e in user("stop counting, two is enough") {
        clock.at(&mut app, 2700, agent(e));
    }
    assert!(app.status().running(), "the run goes on");
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("■ exec") && shown.contains("· interrupted ·"),
        "{shown}"
    );
    assert!(
        !shown.contains("■ interrupted"),
        "the run was not interrupted: {shown}"
    );
    insta::assert_snapshot!("card_tool_stopped_120x40", draw(&mut app).backend());
}

#[test]
fn a_failed_call_shows_why_below_its_header() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "read the config");
    answer(
        &clock,
        &mut app,
        10,
        vec![call("r1", "read_file", json!({"path": "missing.toml"}))],
        StopReason::ToolUse,
    );
    start(
        &clock,
        &mut app,
        20,
        "r1",
        "read_file",
        json!({"path": "missing.toml"}),
    );
    end(
        &clock,
        &mut app,
        30,
        "r1",
        "read_file",
        "No such file: missing.toml (the workspace has config.toml)",
        true,
    );
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("✗ read_file missing.toml · failed · 10ms"),
        "{shown}"
    );
    assert!(shown.contains("└ No such file: missing.toml"), "{shown}");
}
