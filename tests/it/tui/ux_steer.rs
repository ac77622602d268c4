//! Steering and interrupting with honest feedback (issue 18, items 10-11): the hint
//! says when a steer goes in and names the key that delivers it now; queued texts come
//! back in order, apart and marked until edited, and go back as they were.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{AgentEvent, StopReason};
use claw_tui::tui::msg::QueuedText;
use claw_tui::tui::{App, Effect, Msg};
use crossterm::event::KeyCode;
use serde_json::json;

/// A run whose `exec sleep 12` is running.
fn sleeping(width: u16, height: u16) -> (App, Clock) {
    let mut app = sized(width, height);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "wait a bit");
    answer(
        &clock,
        &mut app,
        10,
        vec![call("c1", "exec", json!({"command": "sleep 12"}))],
        StopReason::ToolUse,
    );
    start(
        &clock,
        &mut app,
        20,
        "c1",
        "exec",
        json!({"command": "sleep 12"}),
    );
    (app, clock)
}

#[test]
fn a_steer_during_a_command_says_when_it_goes_in_and_how_to_send_it_now() {
    let (mut app, clock) = sleeping(120, 40);
    typed(&mut app, "actually, skip the wait");
    let effects = app.update_at(key(KeyCode::Esc), clock.t0);
    assert_eq!(effects, [Effect::Steer("actually, skip the wait".into())]);
    assert_eq!(
        app.status().hint(),
        Some("steer queued · delivered when exec finishes · Ctrl+X: stop exec, deliver now")
    );
    app.update_at(
        agent(AgentEvent::QueueUpdate {
            steering: vec!["actually, skip the wait".into()],
            follow_up: vec![],
        }),
        clock.t0,
    );
    insta::assert_snapshot!("steer_queued_120x40", draw(&mut app).backend());
    resize(&mut app, 80, 24);
    insta::assert_snapshot!("steer_queued_80x24", draw(&mut app).backend());

    // The key it names stops the command; the queued steer then goes in at once.
    assert_eq!(app.update(ctrl('x')), [Effect::InterruptTools]);
    assert_eq!(
        app.status().hint(),
        Some("stopping exec · the steer goes in now")
    );
}

#[test]
fn the_stop_key_with_nothing_running_says_so() {
    let mut app = app();
    assert_eq!(app.update(ctrl('x')), []);
    assert_eq!(app.status().hint(), Some("nothing is running"));
    app.update(agent(AgentEvent::AgentStart));
    assert_eq!(app.update(ctrl('x')), []);
    assert_eq!(app.status().hint(), Some("no tool is running"));
    typed(&mut app, "shorter please");
    assert_eq!(
        app.update(ctrl('x')),
        [Effect::Steer("shorter please".into())]
    );
    assert_eq!(
        app.status().hint(),
        Some("steer queued · no tool is running: delivered when this answer ends")
    );
}

#[test]
fn restored_queue_texts_come_back_apart_marked_and_go_back_as_they_were() {
    let (mut app, clock) = sleeping(120, 40);
    app.update(key(KeyCode::Esc));
    run_end(&clock, &mut app, 100);
    app.update(Msg::QueueRestored(vec![
        QueuedText::steer("don't touch the lock file"),
        QueuedText::follow_up("then run the tests"),
        QueuedText::follow_up("and summarise"),
    ]));
    assert_eq!(
        app.composer().text(),
        "don't touch the lock file\n\nthen run the tests\n\nand summarise"
    );
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains(" steer ") && shown.matches(" follow-up ").count() >= 2,
        "{shown}"
    );
    insta::assert_snapshot!("restored_120x40", draw(&mut app).backend());
    resize(&mut app, 80, 24);
    insta::assert_snapshot!("restored_80x24", draw(&mut app).backend());

    // Unedited, Enter sends them as they were: a prompt, then each by its queue.
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [
            Effect::Prompt("don't touch the lock file".into()),
            Effect::FollowUp("then run the tests".into()),
            Effect::FollowUp("and summarise".into()),
        ]
    );
}

#[test]
fn edited_restored_texts_lose_their_marks_and_go_as_one_message() {
    let mut app = app();
    app.update(Msg::QueueRestored(vec![
        QueuedText::steer("one"),
        QueuedText::follow_up("two"),
    ]));
    assert!(app.composer().restored().is_some());
    typed(&mut app, "!");
    assert!(app.composer().restored().is_none(), "edited: no marks");
    let shown = screen(&mut app).join("\n");
    assert!(!shown.contains(" steer "), "{shown}");
    let effects = app.update(key(KeyCode::Enter));
    assert_eq!(effects.last(), Some(&Effect::Prompt("one\n\ntwo!".into())));
}

/// An interrupt with nothing queued says it interrupted, and nothing of queued messages.
#[test]
fn an_interrupt_with_nothing_queued_does_not_speak_of_a_queue() {
    let (mut app, clock) = sleeping(120, 40);
    app.update(key(KeyCode::Esc));
    run_end(&clock, &mut app, 100);
    app.update(Msg::QueueRestored(Vec::new()));
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("│ interrupted │"), "{shown}");
    assert!(!shown.contains("queued"), "{shown}");
    assert_eq!(app.composer().text(), "");
}
