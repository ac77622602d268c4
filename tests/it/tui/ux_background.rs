//! Background work across sessions and dashboard actions (issue 18, items 19-20), on
//! the model side: a result recorded for another session is a quiet line in the chat
//! and a count in the dashboard, `/sessions` marks sessions with waiting results; `x`
//! asks first and does nothing on a finished subagent; Enter opens a subagent's
//! conversation read-only; a resumed session gets its subagents' calls back in the
//! tree; a hidden dashboard's countdown costs no redraws.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{
    AgentEvent, AssistantMessage, Message, MessageDelta, StopReason, ToolResult,
};
use claw_tui::runtime::SubagentStatus;
use claw_tui::session::SubagentCall;
use claw_tui::tui::chat::EntryKind;
use claw_tui::tui::layout::Focus;
use claw_tui::tui::sessions::{self, LoadedSession, SessionRow};
use claw_tui::tui::tool_tree::TreeRow;
use claw_tui::tui::{App, Msg, Overlay, subagents};
use crossterm::event::KeyCode;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

#[test]
fn work_for_another_session_is_a_quiet_line_and_a_count_per_session() {
    let mut app = app();
    app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some("9f9f0000aaaa1111".into()),
            quiet: true,
            ..LoadedSession::default()
        },
    ))));
    for _ in 0..2 {
        app.update(Msg::Parked {
            session_id: "3c3b1f2a77770000".into(),
            summary: "Cron job \"build-check\" (cron-1) fired".into(),
        });
    }
    app.update(Msg::Parked {
        session_id: "a1b2c3d4eeee5555".into(),
        summary: "Subagent \"scan\" (subagent-2) completed".into(),
    });
    let shown = screen(&mut app).join("\n");
    // Said once, and counted when the same job fires again.
    let notices: Vec<String> = app
        .chat()
        .transcript()
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Notice(_, text) => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        notices,
        [
            "2× cron \"build-check\" fired for session 3c3b1f2a · /sessions to open",
            "subagent \"scan\" completed for session a1b2c3d4 · /sessions to open"
        ]
    );
    assert_eq!(shown.matches("build-check").count(), 1, "{shown}");
    assert_eq!(
        app.dashboard().waiting_elsewhere(),
        [
            ("3c3b1f2a77770000".to_owned(), 2),
            ("a1b2c3d4eeee5555".to_owned(), 1)
        ]
    );
    assert!(
        shown.contains("+ 3 waiting in other sessions (/sessions)"),
        "{shown}"
    );
    assert!(
        shown.contains("    3c3b1f2a  2") && shown.contains("    a1b2c3d4  1"),
        "{shown}"
    );
    insta::assert_snapshot!("parked_120x40", draw(&mut app).backend());

    // The picker marks sessions with results waiting.
    let at = |minutes: u64| epoch() - Duration::from_secs(minutes * 60);
    let row = |id: &str, waiting| SessionRow {
        id: id.into(),
        path: PathBuf::from(format!("/data/{id}.jsonl")),
        created: at(100),
        last_activity: at(5),
        first_prompt: Some("check the build every minute".into()),
        message_count: 4,
        waiting,
        name: None,
        last: Default::default(),
    };
    app.update(Msg::Sessions(sessions::Msg::List(vec![
        row("9f9f0000aaaa1111", 0),
        row("3c3b1f2a77770000", 2),
        row("a1b2c3d4eeee5555", 1),
    ])));
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("◆ results waiting in 2"), "{shown}");
    assert!(
        shown.contains("◆ 3c3b1f2a") && shown.contains("2 waiting · check the build"),
        "{shown}"
    );
    resize(&mut app, 80, 24);
    insta::assert_snapshot!("sessions_waiting_80x24", draw(&mut app).backend());

    // Opening one of them delivers what waited: its count goes.
    app.update(key(KeyCode::Esc));
    app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some("3c3b1f2a77770000".into()),
            resumed: true,
            ..LoadedSession::default()
        },
    ))));
    assert_eq!(
        app.dashboard().waiting_elsewhere(),
        [("a1b2c3d4eeee5555".to_owned(), 1)]
    );
}

/// An app with a working subagent `subagent-1` (spawned by call `s1`) that has written
/// part of an answer and runs a command.
fn with_subagent(width: u16, height: u16) -> (App, Clock) {
    let mut app = sized(width, height);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "count lines in the background");
    answer(
        &clock,
        &mut app,
        10,
        vec![call(
            "s1",
            "spawn",
            json!({"task": "count lines of src", "label": "count lines"}),
        )],
        StopReason::ToolUse,
    );
    start(
        &clock,
        &mut app,
        20,
        "s1",
        "spawn",
        json!({"task": "count lines of src"}),
    );
    end(
        &clock,
        &mut app,
        30,
        "s1",
        "spawn",
        "Started subagent-1 (count lines).",
        false,
    );
    run_end(&clock, &mut app, 40);
    clock.at(
        &mut app,
        50,
        Msg::Subagents(subagents::Msg::List(vec![subagent("subagent-1")])),
    );
    let sub = |app: &mut App, ms, event| {
        clock.at(
            app,
            ms,
            Msg::Subagents(subagents::Msg::Event {
                subagent_id: "subagent-1".into(),
                parent_call_id: "s1".into(),
                event,
            }),
        )
    };
    sub(&mut app, 60, AgentEvent::AgentStart);
    for e in user("count lines of src") {
        sub(&mut app, 60, e);
    }
    sub(
        &mut app,
        70,
        AgentEvent::MessageStart {
            message: Message::Assistant(AssistantMessage::default()),
        },
    );
    sub(
        &mut app,
        80,
        AgentEvent::MessageUpdate {
            delta: MessageDelta::Text {
                index: 0,
                text: "I'll count them with `wc`.".into(),
            },
        },
    );
    let calling = assistant(
        vec![
            text("I'll count them with `wc`."),
            call("n1", "exec", json!({"command": "wc -l src/*.rs"})),
        ],
        StopReason::ToolUse,
    );
    sub(
        &mut app,
        90,
        AgentEvent::MessageEnd {
            message: Message::Assistant(calling),
        },
    );
    sub(
        &mut app,
        100,
        AgentEvent::ToolExecutionStart {
            tool_call_id: "n1".into(),
            tool_name: "exec".into(),
            args: json!({"command": "wc -l src/*.rs"}),
        },
    );
    sub(
        &mut app,
        300,
        AgentEvent::ToolExecutionUpdate {
            tool_call_id: "n1".into(),
            tool_name: "exec".into(),
            partial: json!({"stdout": "  120 src/main.rs\n  80 src/lib.rs\n"}),
        },
    );
    (app, clock)
}

#[test]
fn enter_on_a_subagent_shows_its_conversation_live_and_esc_returns() {
    let (mut app, clock) = with_subagent(120, 40);
    for _ in 0..3 {
        app.update(key(KeyCode::Tab));
    }
    assert_eq!(app.focus(), Focus::Dashboard);
    app.update(key(KeyCode::Enter));
    assert_eq!(app.viewing_subagent(), Some("subagent-1"));
    assert_eq!(app.focus(), Focus::Chat);
    clock.at(&mut app, 400, Msg::Tick);
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("Subagent count lines (subagent-1) · read-only · Esc returns"),
        "{shown}"
    );
    assert!(
        shown.contains("› count lines of src") && shown.contains("I'll count them with wc."),
        "{shown}"
    );
    assert!(
        shown.contains("exec wc -l src/*.rs") && shown.contains("│   120 src/main.rs"),
        "{shown}"
    );
    insta::assert_snapshot!("subagent_view_120x40", draw(&mut app).backend());
    resize(&mut app, 80, 24);
    insta::assert_snapshot!("subagent_view_80x24", draw(&mut app).backend());

    // Esc returns to the main chat.
    app.update(key(KeyCode::Esc));
    assert_eq!(app.viewing_subagent(), None);
    assert!(
        screen(&mut app)
            .join("\n")
            .contains("› count lines in the background")
    );
}

#[test]
fn x_asks_before_cancelling_and_does_nothing_on_a_finished_subagent() {
    let (mut app, _) = with_subagent(120, 40);
    for _ in 0..3 {
        app.update(key(KeyCode::Tab));
    }
    assert_eq!(app.update(key(KeyCode::Char('x'))), []);
    assert_eq!(
        app.overlay(),
        Some(&Overlay::ConfirmCancel {
            id: "subagent-1".into(),
            label: "count lines".into()
        })
    );
    insta::assert_snapshot!("confirm_cancel_120x40", draw(&mut app).backend());
    assert_eq!(
        app.update(key(KeyCode::Char('n'))),
        [],
        "any other key keeps it"
    );
    assert_eq!(app.overlay(), None);

    let mut done = subagent("subagent-1");
    done.status = SubagentStatus::Done;
    app.update(Msg::Subagents(subagents::Msg::Update(done)));
    let before = screen(&mut app);
    let now = app.now();
    assert_eq!(app.update_at(key(KeyCode::Char('x')), now), []);
    assert_eq!(app.overlay(), None, "a finished subagent: nothing to ask");
    assert_eq!(app.status().hint(), None, "and nothing said");
    assert!(!app.needs_draw(), "nothing changed on screen");
    assert_eq!(screen(&mut app), before);
}

#[test]
fn a_resumed_session_gets_its_subagents_calls_back_under_their_spawn() {
    let mut app = app();
    let spawn = Message::Assistant(assistant(
        vec![call(
            "s1",
            "spawn",
            json!({"task": "count lines of src", "label": "count lines"}),
        )],
        StopReason::ToolUse,
    ));
    let started = Message::ToolResult(claw_tui::agent::ToolResultMessage {
        tool_call_id: "s1".into(),
        tool_name: "spawn".into(),
        content: "Started subagent-1 (count lines).".into(),
        details: serde_json::Value::Null,
        is_error: false,
        images: Vec::new(),
        timestamp: 0,
    });
    let nested = |id: &str, name: &str, args, out: &str| SubagentCall {
        parent_call_id: "s1".into(),
        subagent_id: "subagent-1".into(),
        call_id: id.into(),
        tool_name: name.into(),
        args,
        result: ToolResult::text(out),
    };
    app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some("feedc0ffee123456".into()),
            messages: vec![
                Message::user("count lines in the background"),
                spawn,
                started,
            ]
            .into(),
            resumed: true,
            nested: vec![
                nested("n1", "list_dir", json!({"path": "src"}), "main.rs\nlib.rs"),
                nested(
                    "n2",
                    "exec",
                    json!({"command": "wc -l src/*.rs"}),
                    "200 total",
                ),
            ],
            ..LoadedSession::default()
        },
    ))));
    app.update(Msg::Frame);
    let rows = app.tools().calls().rows().to_vec();
    assert!(
        rows.contains(&TreeRow::Call {
            id: "n1".into(),
            depth: 1
        }),
        "{rows:?}"
    );
    assert!(
        rows.contains(&TreeRow::Call {
            id: "n2".into(),
            depth: 1
        }),
        "{rows:?}"
    );
    insta::assert_snapshot!("resumed_nested_120x40", draw(&mut app).backend());
}

#[test]
fn a_cron_countdown_costs_no_redraws_while_the_dashboard_is_hidden() {
    let mut app = sized(80, 24);
    app.update(Msg::CronJobs(vec![cron("job-1", false)]));
    app.update(Msg::Frame);
    assert!(!app.dashboard_counts_down(), "the Chat tab is shown");
    assert_eq!(app.next_deadline(), None, "no timer while idle and hidden");
    app.update(Msg::Tick);
    assert!(!app.needs_draw(), "a tick draws nothing");
    // On the Dashboard tab it counts down every second.
    for _ in 0..3 {
        app.update(key(KeyCode::Tab));
    }
    assert_eq!(app.focus(), Focus::Dashboard);
    assert!(app.dashboard_counts_down());
    assert!(app.next_deadline().is_some());
    app.update(Msg::Frame);
    app.update(Msg::Tick);
    assert!(app.needs_draw());
}

#[test]
fn cron_changes_replace_add_and_remove_jobs_by_id() {
    let mut app = sized(120, 40);
    app.update(Msg::CronJobs(vec![
        cron("job-1", false),
        cron("job-2", false),
    ]));
    app.update(Msg::CronChanges {
        changed: vec![cron("job-2", true), cron("job-3", false)],
        removed: vec!["job-1".into()],
    });
    for _ in 0..3 {
        app.update(key(KeyCode::Tab));
    }
    let screen = crate::support::tui::scene::screen(&mut app).join("\n");
    assert!(screen.contains("Cron (2)"), "{screen}");
    assert!(!screen.contains("job-1"), "{screen}");
    let (two, three) = (screen.find("job-2").unwrap(), screen.find("job-3").unwrap());
    assert!(two < three, "a new job goes last: {screen}");
}

/// A subagent's row counts its turns in words that agree with the number.
#[test]
fn a_subagent_of_one_turn_says_one_turn() {
    let mut app = sized(120, 40);
    let mut first = subagent("subagent-1");
    first.turns = 1;
    app.update(Msg::Subagents(subagents::Msg::List(vec![first])));
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("working · 1 turn · 12.4k tok"), "{shown}");
    assert!(!shown.contains("1 turns"), "{shown}");
}
