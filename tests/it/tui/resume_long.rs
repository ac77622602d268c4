//! Resuming a long session in the client: the newest messages show at once while the
//! older ones are laid out only as the view comes near them (PageUp, Home, find), and
//! every message, card and row is still reached, in order, without the view jumping.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{Message, StopReason, ToolResultMessage};
use claw_tui::tui::sessions::{self, LoadedSession};
use claw_tui::tui::{App, Effect, Msg};
use crossterm::event::KeyCode;
use serde_json::json;
use std::collections::BTreeSet;

/// Groups of four (as a working session has them): a question, a tool call, its
/// result, a markdown answer with code.
fn long_history(groups: usize) -> Vec<Message> {
    let mut messages = Vec::new();
    for g in 0..groups {
        messages.push(Message::user(format!(
            "Question {g}: what is in module {g}?"
        )));
        messages.push(Message::Assistant(assistant(
            vec![
                text(&format!("Let me look ({g}).")),
                call(
                    &format!("call-{g}"),
                    "list_dir",
                    json!({"path": format!("src/m{g}")}),
                ),
            ],
            StopReason::ToolUse,
        )));
        messages.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: format!("call-{g}"),
            tool_name: "list_dir".into(),
            content: (0..8).map(|j| format!("file_{j}.rs\n")).collect(),
            images: Vec::new(),
            details: json!(null),
            is_error: false,
            timestamp: 0,
        }));
        messages.push(Message::Assistant(assistant(
            vec![text(&format!(
                "## Answer {g}\n\nModule {g} holds eight files; the loop reads the queue \
                 before each call.\n\n```rust\nfn step_{g}() -> u32 {{ {g} }}\n```\n"
            ))],
            StopReason::Stop,
        )));
    }
    messages
}

fn resumed(groups: usize) -> App {
    let mut app = app();
    let effects = app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some("feedc0ffee123456".into()),
            messages: long_history(groups).into(),
            resumed: true,
            ..LoadedSession::default()
        },
    ))));
    assert_eq!(effects, [Effect::Sessions(sessions::Effect::Ready)]);
    app
}

/// The question numbers on screen.
fn questions(app: &mut App) -> Vec<usize> {
    screen(app)
        .iter()
        .filter_map(|row| {
            let at = row.find("Question ")?;
            let digits: String = row[at + 9..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect()
}

#[test]
fn a_resumed_long_session_shows_its_newest_messages_at_once() {
    let mut app = resumed(500);
    let terminal = draw(&mut app);
    let shown = format!("{}", terminal.backend());
    assert!(
        shown.contains("Resumed session feedc0ff: 2000 messages."),
        "{shown}"
    );
    assert!(shown.contains("Answer 499"), "{shown}");
    let transcript = app.chat().transcript();
    let laid = transcript.len() - transcript.deferred();
    assert!(
        laid < 150,
        "only the last screens are laid out, not {laid} of {} entries",
        transcript.len()
    );
    insta::assert_snapshot!("resumed_long_session_120x40", terminal.backend());
}

#[test]
fn paging_up_a_resumed_session_reaches_the_first_message_without_skipping_any() {
    let mut app = resumed(120);
    draw(&mut app);
    let mut seen = BTreeSet::new();
    let mut lowest = usize::MAX;
    // A failure bound only: 120 groups take a few hundred pages.
    for _ in 0..5_000 {
        let on_screen = questions(&mut app);
        if let Some(&max) = on_screen.iter().max() {
            assert!(
                max <= lowest.saturating_add(1),
                "the view jumped down: {on_screen:?} after {lowest}"
            );
        }
        lowest = lowest.min(on_screen.iter().copied().min().unwrap_or(lowest));
        seen.extend(on_screen);
        if lowest == 0 {
            break;
        }
        app.update(key(KeyCode::PageUp));
    }
    assert_eq!(lowest, 0, "the first message was reached");
    assert_eq!(
        seen,
        (0..120).collect::<BTreeSet<_>>(),
        "no question skipped"
    );
    assert_eq!(app.chat().transcript().deferred(), 0);
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("✓ list_dir"), "the oldest cards: {shown}");
}

#[test]
fn home_in_a_resumed_session_shows_the_first_message_and_end_the_last() {
    let mut app = resumed(300);
    draw(&mut app);
    app.update(key(KeyCode::Tab));
    app.update(key(KeyCode::Home));
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("Question 0: what is in module 0?"),
        "{shown}"
    );
    assert!(shown.contains("✓ list_dir"), "{shown}");
    assert_eq!(app.chat().transcript().deferred(), 0);
    app.update(key(KeyCode::End));
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("Resumed session feedc0ff"), "{shown}");
}

#[test]
fn find_in_a_resumed_session_searches_the_part_not_laid_out_yet() {
    let mut app = resumed(300);
    draw(&mut app);
    app.update(ctrl('f'));
    typed(&mut app, "module 0?");
    draw(&mut app);
    let find = app.chat().find().unwrap().clone();
    assert_eq!(find.matches().len(), 1, "{find:?}");
    app.update(key(KeyCode::Enter));
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("Question 0: what is in module 0?"),
        "{shown}"
    );
}
