//! Status and numbers that tell the truth (issue 18, items 6-9): `ctx N%` always shows,
//! an unknown price reads `cost n/a`, a narrow bar drops whole parts (never the state
//! word, the context or the cost), and turns are numbered one way everywhere.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{AgentEvent, AssistantMessage, Message, StopReason, Usage};
use claw_tui::tui::tool_tree::TreeRow;
use claw_tui::tui::{App, AppConfig, Msg, sessions};
use crossterm::event::{Event, KeyCode};
use serde_json::json;

fn bar(app: &mut App) -> String {
    screen(app).last().unwrap().trim_end().to_owned()
}

fn with_config(config: AppConfig, width: u16, height: u16) -> App {
    let mut app = App::new(config);
    app.set_clock(std::time::Instant::now(), epoch());
    app.update(Msg::Term(Event::Resize(width, height)));
    app
}

fn answered(app: &mut App, usage: Usage) {
    let message = Message::Assistant(AssistantMessage {
        content: vec![text("done")],
        stop_reason: StopReason::Stop,
        usage,
        model: "m".into(),
        ..AssistantMessage::default()
    });
    app.update(agent(AgentEvent::MessageStart {
        message: Message::Assistant(AssistantMessage::default()),
    }));
    app.update(agent(AgentEvent::MessageEnd { message }));
}

fn usage(input: u64, output: u64, cost: f64) -> Usage {
    Usage {
        input,
        output,
        cost,
        ..Usage::default()
    }
}

#[test]
fn the_context_meter_shows_a_percentage_without_a_configured_window() {
    // No window configured: the built-in table's for the model (gpt-4: 8,192 tokens).
    let model = || AppConfig {
        context_window: None,
        ..AppConfig::new("openai", "gpt-4-0613")
    };
    let mut app = with_config(model(), 120, 40);
    answered(&mut app, usage(3000, 500, 0.0));
    assert!(bar(&mut app).contains("│ ctx 42% │"), "{}", bar(&mut app));
    // The agent core's count after the turn replaces the latest call's size.
    let end = AgentEvent::TurnEnd {
        message: Message::Assistant(AssistantMessage::default()),
        tool_results: Vec::new(),
        context_usage: claw_tui::agent::ContextUsage {
            tokens: 4096,
            ..Default::default()
        },
    };
    app.update(agent(end));
    assert!(bar(&mut app).contains("│ ctx 50% │"), "{}", bar(&mut app));
    insta::assert_snapshot!("status_ctx_counted_120x40", bar(&mut app));

    // A configured window wins over the table.
    let mut configured = with_config(
        AppConfig {
            context_window: Some(10_000),
            ..model()
        },
        120,
        40,
    );
    answered(&mut configured, usage(3000, 500, 0.0));
    assert!(
        bar(&mut configured).contains("│ ctx 35% │"),
        "{}",
        bar(&mut configured)
    );
}

#[test]
fn an_unknown_price_reads_cost_n_a_and_a_known_one_dollars() {
    let mut unknown = app();
    answered(&mut unknown, usage(1200, 300, 0.0));
    let text = bar(&mut unknown);
    assert!(text.contains("↑1.2k ↓300 │ ctx 0% │ cost n/a"), "{text}");
    assert!(!text.contains('$'), "{text}");

    let mut priced = with_config(AppConfig::new("openai", "gpt-4o"), 120, 40);
    answered(&mut priced, usage(1200, 300, 0.0));
    assert!(bar(&mut priced).contains("$0.0000"), "{}", bar(&mut priced));

    let mut offline = with_config(
        AppConfig {
            offline: true,
            ..config()
        },
        120,
        40,
    );
    answered(&mut offline, usage(10, 10, 0.0));
    assert!(bar(&mut offline).contains("$0.0000"), "the demo is free");

    let mut configured = with_config(
        AppConfig {
            priced_models: vec!["demo (offline)".into()],
            ..config()
        },
        120,
        40,
    );
    answered(&mut configured, usage(10, 10, 0.0));
    assert!(bar(&mut configured).contains("$0.0000"));
}

#[test]
fn a_narrow_bar_drops_whole_parts_and_keeps_state_context_and_cost() {
    let mut app = sized(40, 12);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "list");
    start(&clock, &mut app, 10, "c1", "exec", json!({"command": "ls"}));
    clock.at(&mut app, 100, Msg::Tick);
    let text = bar(&mut app);
    assert!(text.contains("running tools") && text.contains("ctx 0%") && text.contains("cost n/a"));
    assert!(!text.contains("turn 1 │ ↑"), "no part is cut: {text}");
    for part in text.trim().split(" │ ") {
        assert!(
            ["running tools", "ctx 0%", "cost n/a"]
                .iter()
                .any(|p| part.ends_with(p))
                || part.starts_with("turn "),
            "only whole parts: {part:?} in {text}"
        );
    }
    insta::assert_snapshot!("status_40x12", draw(&mut app).backend());

    // A hint finds no room here: it goes, the three that matter stay.
    typed(&mut app, "stop after this");
    clock.at(&mut app, 200, key(KeyCode::Esc));
    let text = bar(&mut app);
    assert!(
        text.contains("running tools") && text.contains("ctx 0%") && text.contains("cost n/a"),
        "{text}"
    );
    assert!(!text.contains("steer"), "{text}");
}

#[test]
fn a_long_hint_at_120_columns_never_pushes_out_the_state_context_or_cost() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "build");
    answer(
        &clock,
        &mut app,
        5,
        vec![call(
            "c1",
            "exec",
            json!({"command": "cargo build --release"}),
        )],
        StopReason::ToolUse,
    );
    start(
        &clock,
        &mut app,
        10,
        "c1",
        "exec",
        json!({"command": "cargo build --release"}),
    );
    typed(&mut app, "use the dev profile instead");
    clock.at(&mut app, 20, key(KeyCode::Esc));
    let text = bar(&mut app);
    assert!(
        text.contains(
            "steer queued · delivered when exec finishes · Ctrl+X: stop exec, deliver now"
        ),
        "{text}"
    );
    for part in ["running tools", "ctx 0%", "cost n/a"] {
        assert!(text.contains(part), "{part} stays: {text}");
    }
    insta::assert_snapshot!("status_hint_120x40", text);
    resize(&mut app, 80, 24);
    let text = bar(&mut app);
    for part in ["running tools", "ctx 0%", "cost n/a", "steer queued"] {
        assert!(text.contains(part), "{part} stays at 80: {text}");
    }
    insta::assert_snapshot!("status_hint_80x24", text);
}

#[test]
fn turns_are_numbered_through_the_session_in_the_tree_and_the_bar() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    let mut ms = 0;
    for (run, turns) in [(1, 2), (2, 1), (3, 2)] {
        clock.at(&mut app, ms, agent(AgentEvent::AgentStart));
        for t in 1..=turns {
            ms += 10;
            // The core numbers turns within its run; the client counts the session's.
            clock.at(&mut app, ms, agent(AgentEvent::TurnStart { turn: t }));
            let id = format!("r{run}t{t}");
            answer(
                &clock,
                &mut app,
                ms,
                vec![call(&id, "read_file", json!({"path": "a"}))],
                StopReason::ToolUse,
            );
            start(&clock, &mut app, ms, &id, "read_file", json!({"path": "a"}));
            end(&clock, &mut app, ms + 5, &id, "read_file", "x", false);
        }
        run_end(&clock, &mut app, ms + 6);
    }
    app.update(Msg::Frame);
    let turns: Vec<u32> = app
        .tools()
        .calls()
        .rows()
        .iter()
        .filter_map(|r| match r {
            TreeRow::Turn(n) => Some(*n),
            _ => None,
        })
        .collect();
    assert_eq!(turns, [1, 2, 3, 4, 5]);
    assert_eq!(app.status().turn(), 5);
    assert!(bar(&mut app).contains("│ turn 5 │"), "{}", bar(&mut app));
    insta::assert_snapshot!("turns_120x40", draw(&mut app).backend());
}

#[test]
fn a_session_that_is_not_saved_stays_on_a_narrow_bar_in_short() {
    let mut app = sized(40, 12);
    app.update(Msg::Sessions(sessions::Msg::Save(Some(
        "cannot write session file /data/s.jsonl: No space left on device".into(),
    ))));
    let text = bar(&mut app);
    assert!(
        text.contains("idle │ ⚠ not saved │ ctx 0% │ cost n/a"),
        "{text}"
    );
    resize(&mut app, 120, 40);
    let text = bar(&mut app);
    assert!(
        text.contains("idle │ ⚠ session not saved │ turn 0"),
        "{text}"
    );
}

/// Ctrl+C's "again to quit" holds only while a second press quits: typing or pasting
/// after it takes it back, and the next Ctrl+C clears again instead of quitting.
#[test]
fn typing_or_pasting_after_ctrl_c_takes_back_the_quit_promise() {
    let mut app = sized(120, 40);
    for text in ["typed", "pasted"] {
        app.update(ctrl('c'));
        assert!(
            bar(&mut app).contains("Ctrl+C again to quit"),
            "{}",
            bar(&mut app)
        );
        if text == "typed" {
            app.update(key(KeyCode::Char('x')));
        } else {
            app.update(Msg::Term(Event::Paste("new text".into())));
        }
        let shown = bar(&mut app);
        assert!(!shown.contains("again to quit"), "{text}: {shown}");
        // The next Ctrl+C within the second clears the composer again: no quit.
        let effects = app.update(ctrl('c'));
        assert!(
            !effects.contains(&claw_tui::tui::Effect::Quit),
            "{text}: {effects:?}"
        );
        assert_eq!(app.composer().text(), "", "{text}");
        // And a second press right after that one quits.
        assert!(app.update(ctrl('c')).contains(&claw_tui::tui::Effect::Quit));
        app = sized(120, 40);
    }
}
