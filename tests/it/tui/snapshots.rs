//! Snapshots of every pane state on ratatui's TestBackend (text only; colours that
//! matter are asserted separately).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{
    AgentEvent, AssistantMessage, Block, Message, MessageDelta, SKIPPED_FOR_STEERING, StopReason,
    ToolResult,
};
use claw_tui::tools::message::OutboundMessage;
use claw_tui::tui::{Msg, subagents};
use crossterm::event::KeyCode;
use serde_json::{Value, json};
use std::time::Duration;

#[test]
fn empty_app() {
    let mut app = app();
    insta::assert_snapshot!("empty_app", draw(&mut app).backend());
}

#[test]
fn streaming_markdown_with_a_highlighted_code_block() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "How do I print in Rust?");
    clock.at(
        &mut app,
        10,
        agent(AgentEvent::MessageStart {
            message: Message::Assistant(AssistantMessage::default()),
        }),
    );
    let reply = "# Printing\n\nUse the **`println!`** macro; it *formats* like [format!](https://doc.rust-lang.org/std/macro.format.html).\n\n```rust\nfn main() {\n    let name = \"world\";\n    println!(\"hello {name}\");\n}\n```\n\n| macro | target |\n|---|---|\n| `print!` | stdout |\n| `eprintln!` | stderr |\n\n> Tip: `dbg!` prints the expression too.\n\n1. write it\n2. run `cargo run`\n\nThe output goes to standard out";
    for (i, chunk) in reply.as_bytes().chunks(7).enumerate() {
        let delta = MessageDelta::Text {
            index: 0,
            text: String::from_utf8_lossy(chunk).into_owned(),
        };
        clock.at(
            &mut app,
            20 + i as u64,
            agent(AgentEvent::MessageUpdate { delta }),
        );
    }
    assert_eq!(app.state_word(), "streaming");
    let terminal = draw(&mut app);
    insta::assert_snapshot!("streaming_markdown", terminal.backend());
    // The code block is highlighted: its line has several colours.
    let buffer = terminal.backend().buffer();
    let row = (0..buffer.area.height)
        .find(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, *y)].symbol())
                .collect::<String>()
                .contains("let name")
        })
        .unwrap();
    let colours: std::collections::HashSet<_> = (0..72).map(|x| buffer[(x, row)].fg).collect();
    assert!(
        colours.len() >= 3,
        "highlighted code has several colours: {colours:?}"
    );
}

#[test]
fn a_running_exec_with_live_output() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "run the tests");
    answer(
        &clock,
        &mut app,
        100,
        vec![
            text("Running the test suite."),
            call("c1", "exec", json!({"command": "cargo test --all"})),
        ],
        StopReason::ToolUse,
    );
    start(
        &clock,
        &mut app,
        200,
        "c1",
        "exec",
        json!({"command": "cargo test --all"}),
    );
    for (ms, out) in [
        (400, "running 12 tests\ntest parse::empty ... ok\n"),
        (900, "test parse::nested ... ok\ntest wrap::long ... ok\n"),
        (1400, "test wrap::wide ... ok\n"),
    ] {
        let event = AgentEvent::ToolExecutionUpdate {
            tool_call_id: "c1".into(),
            tool_name: "exec".into(),
            partial: json!({"stdout": out}),
        };
        clock.at(&mut app, ms, agent(event));
    }
    clock.at(&mut app, 2700, Msg::Tick);
    assert_eq!(app.state_word(), "running tools");
    insta::assert_snapshot!("running_exec", draw(&mut app).backend());
}

#[test]
fn skipped_calls_after_a_steer() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "tidy up the repo");
    let calls = vec![
        text("I'll look around first."),
        call("a", "list_dir", json!({"path": "."})),
        call("b", "read_file", json!({"path": "Cargo.toml"})),
        call("c", "exec", json!({"command": "rm -rf target"})),
    ];
    answer(&clock, &mut app, 100, calls, StopReason::ToolUse);
    start(&clock, &mut app, 150, "a", "list_dir", json!({"path": "."}));
    let queue = AgentEvent::QueueUpdate {
        steering: vec!["don't delete anything".into()],
        follow_up: vec!["then summarise".into()],
    };
    clock.at(&mut app, 200, agent(queue));
    end(
        &clock,
        &mut app,
        420,
        "a",
        "list_dir",
        "Cargo.toml\nsrc/\ntarget/",
        false,
    );
    for (id, name, args) in [
        ("b", "read_file", json!({"path": "Cargo.toml"})),
        ("c", "exec", json!({"command": "rm -rf target"})),
    ] {
        start(&clock, &mut app, 430, id, name, args);
        end(&clock, &mut app, 430, id, name, SKIPPED_FOR_STEERING, true);
    }
    insta::assert_snapshot!("skipped_after_steer_queued", draw(&mut app).backend());
    clock.at(
        &mut app,
        500,
        agent(AgentEvent::QueueUpdate {
            steering: vec![],
            follow_up: vec!["then summarise".into()],
        }),
    );
    clock.at(&mut app, 500, agent(AgentEvent::TurnStart { turn: 2 }));
    for e in user("don't delete anything") {
        clock.at(&mut app, 500, agent(e));
    }
    insta::assert_snapshot!("skipped_after_steer_delivered", draw(&mut app).backend());
}

#[test]
fn nested_subagent_calls() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "count the lines in the background");
    answer(
        &clock,
        &mut app,
        50,
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
        60,
        "s1",
        "spawn",
        json!({"task": "count lines of src", "label": "count lines"}),
    );
    let nested = |event: AgentEvent| {
        Msg::Subagents(subagents::Msg::Event {
            subagent_id: "subagent-1".into(),
            parent_call_id: "s1".into(),
            event,
        })
    };
    let sub_start = |id: &str, name: &str, args: Value| AgentEvent::ToolExecutionStart {
        tool_call_id: id.into(),
        tool_name: name.into(),
        args,
    };
    clock.at(
        &mut app,
        100,
        nested(sub_start("n1", "list_dir", json!({"path": "src"}))),
    );
    let done = ToolResult::text("main.rs\nlib.rs");
    clock.at(
        &mut app,
        180,
        nested(AgentEvent::ToolExecutionEnd {
            tool_call_id: "n1".into(),
            tool_name: "list_dir".into(),
            result: done,
            is_error: false,
        }),
    );
    clock.at(
        &mut app,
        200,
        nested(sub_start(
            "n2",
            "exec",
            json!({"command": "wc -l src/*.rs"}),
        )),
    );
    let partial = json!({"stdout": "  120 src/main.rs\n", "stderr": "wc: warning: odd file\n"});
    clock.at(
        &mut app,
        300,
        nested(AgentEvent::ToolExecutionUpdate {
            tool_call_id: "n2".into(),
            tool_name: "exec".into(),
            partial,
        }),
    );
    clock.at(&mut app, 1300, Msg::Tick);
    insta::assert_snapshot!("nested_subagent", draw(&mut app).backend());
}

#[test]
fn the_dashboard_with_jobs() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    let mut done = subagent("sa-2");
    done.status = claw_tui::runtime::SubagentStatus::Done;
    done.label = "summarise logs".into();
    done.elapsed = Duration::from_secs(75);
    done.current_tool = None;
    clock.at(
        &mut app,
        0,
        Msg::Subagents(subagents::Msg::List(vec![subagent("sa-1"), done])),
    );
    let mut tomorrow = cron("job-3", false);
    tomorrow.next_fire = Some(epoch() + Duration::from_secs(86_400 + 3_600));
    tomorrow.last_status = claw_tui::tui::CronRunStatus::Never;
    clock.at(
        &mut app,
        0,
        Msg::CronJobs(vec![cron("job-1", false), cron("job-2", true), tomorrow]),
    );
    clock.at(&mut app, 0, Msg::PendingNotifications(2));
    for _ in 0..3 {
        clock.at(&mut app, 0, key(KeyCode::Tab));
    }
    clock.at(&mut app, 0, key(KeyCode::Down));
    insta::assert_snapshot!("dashboard_with_jobs", draw(&mut app).backend());
}

#[test]
fn narrow_layout_and_too_small() {
    let mut app = sized(80, 24);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "list files");
    answer(
        &clock,
        &mut app,
        20,
        vec![
            text("Sure, calling `list_dir` for that."),
            call("a", "list_dir", json!({"path": "."})),
        ],
        StopReason::ToolUse,
    );
    start(&clock, &mut app, 30, "a", "list_dir", json!({"path": "."}));
    end(
        &clock,
        &mut app,
        75,
        "a",
        "list_dir",
        "README.md\nsrc/",
        false,
    );
    insta::assert_snapshot!("narrow_chat", draw(&mut app).backend());
    clock.at(&mut app, 80, key(KeyCode::Tab));
    clock.at(&mut app, 80, key(KeyCode::Tab));
    insta::assert_snapshot!("narrow_tools", draw(&mut app).backend());
    let mut tiny = sized(39, 12);
    insta::assert_snapshot!("too_small", draw(&mut tiny).backend());
    // Narrower than the sentence: it wraps, the minimum stays readable.
    let mut tinier = sized(30, 8);
    let screen = draw(&mut tinier).backend().to_string();
    assert!(
        screen.contains("(min") && screen.contains("40×10)"),
        "{screen}"
    );
    insta::assert_snapshot!("too_small_30x8", screen);
}

#[test]
fn help_and_approval_overlays() {
    let mut app = app();
    app.update(key(KeyCode::F(1)));
    insta::assert_snapshot!("help_overlay", draw(&mut app).backend());
    app.update(key(KeyCode::Esc));
    app.update(Msg::Approval(request("c9", "git push --force origin main")));
    app.update(Msg::Approval(request("c10", "make release")));
    insta::assert_snapshot!("approval_overlay", draw(&mut app).backend());
}

#[test]
fn tool_detail_overlay() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "read the manifest");
    answer(
        &clock,
        &mut app,
        20,
        vec![call(
            "r",
            "read_file",
            json!({"path": "Cargo.toml", "offset": 1, "limit": 40}),
        )],
        StopReason::ToolUse,
    );
    start(
        &clock,
        &mut app,
        30,
        "r",
        "read_file",
        json!({"path": "Cargo.toml", "offset": 1, "limit": 40}),
    );
    end(
        &clock,
        &mut app,
        42,
        "r",
        "read_file",
        "[package]\nname = \"claw-tui\"\nversion = \"0.1.0\"",
        false,
    );
    clock.at(&mut app, 50, key(KeyCode::Tab));
    clock.at(&mut app, 50, key(KeyCode::Tab));
    clock.at(&mut app, 50, key(KeyCode::Enter));
    insta::assert_snapshot!("detail_overlay", draw(&mut app).backend());
}

#[test]
fn notices_cards_errors_retries_and_new_messages_below() {
    let mut app = sized(100, 30);
    let clock = Clock::new(&mut app);
    for i in 0..12 {
        for e in user(&format!("earlier message {i}")) {
            clock.at(&mut app, 0, agent(e));
        }
    }
    run_start(&clock, &mut app, "remind me");
    let retry = AgentEvent::AutoRetryStart {
        attempt: 1,
        max_attempts: 3,
        delay_ms: 2000,
        reason: "HTTP 529 overloaded: the server is busy".into(),
    };
    clock.at(&mut app, 10, agent(retry));
    assert_eq!(app.state_word(), "retrying");
    clock.at(
        &mut app,
        2010,
        agent(AgentEvent::AutoRetryEnd { attempt: 1 }),
    );
    answer(
        &clock,
        &mut app,
        2100,
        vec![
            Block::Thinking {
                thinking: "The user wants a reminder.\nI will send one.".into(),
                signature: None,
            },
            text("Sending a reminder now."),
        ],
        StopReason::Stop,
    );
    clock.at(
        &mut app,
        2200,
        Msg::Outbound(OutboundMessage {
            channel: "cli".into(),
            chat_id: "direct".into(),
            content: "Stand-up in 5 minutes!".into(),
        }),
    );
    let notification = Message::Notification(claw_tui::agent::NotificationMessage {
        source: "cron".into(),
        content: "job-1 fired: check the build".into(),
        timestamp: 0,
    });
    clock.at(
        &mut app,
        2300,
        agent(AgentEvent::MessageEnd {
            message: notification,
        }),
    );
    let mut failed = assistant(vec![text("Checking")], StopReason::Error);
    failed.error_message = Some(
        "The server closed the connection. Check your network and send the message again.".into(),
    );
    clock.at(
        &mut app,
        2400,
        agent(AgentEvent::MessageStart {
            message: Message::Assistant(AssistantMessage::default()),
        }),
    );
    clock.at(
        &mut app,
        2400,
        agent(AgentEvent::MessageEnd {
            message: Message::Assistant(failed),
        }),
    );
    clock.at(
        &mut app,
        2500,
        agent(AgentEvent::AgentEnd { messages: vec![] }),
    );
    insta::assert_snapshot!("notices_and_cards", draw(&mut app).backend());
    // Scrolled up, new content shows a marker instead of moving the view.
    clock.at(&mut app, 2600, key(KeyCode::PageUp));
    for e in user("another message arrives") {
        clock.at(&mut app, 2700, agent(e));
    }
    insta::assert_snapshot!("new_messages_below", draw(&mut app).backend());
}
