//! The client's side of session reliability: a session that cannot be saved is said in
//! the chat and marked in the status bar until saving works again (or another session
//! is shown), and an answer cut short by a crash says why it was interrupted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::{assistant, draw, text as text_block};
use crate::support::tui::*;
use claw_tui::agent::{ABORTED_MESSAGE, AssistantMessage, Message, StopReason};
use claw_tui::session::STOPPED_WHILE_STREAMING;
use claw_tui::tui::sessions::{self, LoadedSession};
use claw_tui::tui::{App, Msg};

const UNSAVED: &str = "⚠ session not saved";
const FULL: &str = "cannot write session file /data/s.jsonl: No space left on device";

/// The status bar as drawn (the last row of the screen).
fn status_bar(app: &mut App) -> String {
    let terminal = draw(app);
    let buffer = terminal.backend().buffer();
    let y = buffer.area.height - 1;
    (0..buffer.area.width)
        .map(|x| buffer[(x, y)].symbol())
        .collect()
}

#[test]
fn a_failing_save_is_told_and_marked_until_it_works_again() {
    let mut app = app();
    app.update(Msg::Frame);
    assert!(!app.needs_draw());
    app.update(Msg::Sessions(sessions::Msg::Save(Some(FULL.into()))));
    assert!(app.needs_draw());
    assert_eq!(app.status().unsaved(), Some(FULL));
    assert_eq!(
        app.status_parts()[1..3],
        ["idle".to_owned(), UNSAVED.into()]
    );
    assert!(status_bar(&mut app).contains(UNSAVED));
    let rows = chat_rows(&app).join("\n");
    assert!(
        rows.contains("No space left on device") && rows.contains("retried at the end"),
        "{rows}"
    );

    app.update(Msg::Sessions(sessions::Msg::Save(None)));
    assert_eq!(app.status().unsaved(), None);
    assert!(!app.status_parts().contains(&UNSAVED.to_owned()));
    assert!(!status_bar(&mut app).contains(UNSAVED));
    let rows = chat_rows(&app).join("\n");
    assert!(rows.contains("saved again"), "{rows}");
}

#[test]
fn another_session_shown_forgets_the_old_ones_saving_trouble() {
    let mut app = app();
    app.update(Msg::Sessions(sessions::Msg::Save(Some(FULL.into()))));
    app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some("0123456789abcdef".into()),
            ..LoadedSession::default()
        },
    ))));
    assert_eq!(app.status().unsaved(), None);
    assert!(!status_bar(&mut app).contains(UNSAVED));
}

#[test]
fn an_answer_cut_short_by_a_crash_says_why_and_one_the_user_stopped_does_not() {
    let aborted = |text: &str, why: &str| {
        Message::Assistant(AssistantMessage {
            error_message: Some(why.into()),
            ..assistant(vec![text_block(text)], StopReason::Aborted)
        })
    };
    let mut app = app();
    app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some("0123456789abcdef".into()),
            messages: vec![
                Message::user("first"),
                aborted("stopped by Esc", ABORTED_MESSAGE),
                Message::user("second"),
                aborted("The answer starts", STOPPED_WHILE_STREAMING),
            ]
            .into(),
            resumed: true,
            ..LoadedSession::default()
        },
    ))));
    app.update(Msg::Frame);
    let rows = chat_rows(&app);
    let interrupted: Vec<&String> = rows
        .iter()
        .filter(|r| r.contains("■ interrupted"))
        .collect();
    assert_eq!(interrupted.len(), 2, "{rows:#?}");
    assert_eq!(interrupted[0].trim(), "■ interrupted");
    let crash = rows.join(" ");
    assert!(
        crash.contains("■ interrupted: claw-tui stopped while this answer was streaming"),
        "{rows:#?}"
    );
}
