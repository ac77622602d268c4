//! Navigation and discoverability (issue 18, items 12-15): a key that jumps to the
//! bottom from anywhere (the marker names it), the slash popup with descriptions and
//! argument completions, a help overlay that says there is more and scrolls, a keys
//! line that follows the focused pane, and find in the transcript.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{AgentEvent, AssistantMessage, Message, MessageDelta, StopReason};
use claw_tui::tui::layout::Focus;
use claw_tui::tui::{App, Effect, Msg, Overlay, sessions};
use crossterm::event::{KeyCode, KeyModifiers};

/// A chat with `n` answers, scrolled up, and one more arriving below.
fn scrolled_up(width: u16, height: u16, n: usize) -> App {
    let mut app = sized(width, height);
    let clock = Clock::new(&mut app);
    for i in 0..n {
        for e in user(&format!("question {i}")) {
            clock.at(&mut app, 0, agent(e));
        }
        answer(
            &clock,
            &mut app,
            0,
            vec![text(&format!("answer {i}: needle {i}"))],
            StopReason::Stop,
        );
    }
    draw(&mut app);
    clock.at(&mut app, 10, key(KeyCode::PageUp));
    for e in user("one more") {
        clock.at(&mut app, 20, agent(e));
    }
    app
}

#[test]
fn the_new_messages_marker_names_the_jump_key_which_works_from_the_composer() {
    let mut app = scrolled_up(120, 40, 20);
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("↓ new messages below (Ctrl+End)"), "{shown}");
    insta::assert_snapshot!("jump_marker_120x40", draw(&mut app).backend());
    assert_eq!(app.focus(), Focus::Composer);
    typed(&mut app, "half a message");
    app.update(Msg::Term(crossterm::event::Event::Key(
        crossterm::event::KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL),
    )));
    assert!(
        app.chat().following(),
        "Ctrl+End jumps with text in the composer"
    );
    assert_eq!(
        app.composer().text(),
        "half a message",
        "nothing typed is lost"
    );

    let mut narrow = scrolled_up(80, 24, 20);
    insta::assert_snapshot!("jump_marker_80x24", draw(&mut narrow).backend());
    narrow.update(key(KeyCode::End));
    assert!(
        narrow.chat().following(),
        "End with an empty composer jumps too"
    );
}

/// Empties the composer key by key.
fn clear(app: &mut App) {
    while !app.composer().text().is_empty() {
        app.update(key(KeyCode::Backspace));
    }
}

/// A popup longer than the room above the composer scrolls with the selection: the
/// last entry, reached with Up from the first, is on screen, and the title counts.
#[test]
fn the_slash_popup_scrolls_to_the_selection() {
    let mut app = app();
    resize(&mut app, 80, 24);
    typed(&mut app, "/");
    let popup = app.composer().completion().unwrap().clone();
    let last = popup.items.last().unwrap().clone();
    let count = popup.items.len();
    let screen = format!("{:?}", draw(&mut app).backend());
    assert!(!screen.contains(&format!("{last} ")), "{screen}");
    app.update(key(KeyCode::Up));
    let screen = format!("{:?}", draw(&mut app).backend());
    assert!(screen.contains(&format!(" {last}")), "{screen}");
    assert!(screen.contains(&format!("{count}/{count}")), "{screen}");
}

#[test]
fn the_slash_popup_describes_commands_and_completes_arguments() {
    let mut app = app();
    typed(&mut app, "/");
    let popup = app.composer().completion().unwrap().clone();
    assert_eq!(popup.items.len(), claw_tui::tui::slash::COMMANDS.len());
    assert_eq!(popup.details[1], "use another model from the next run on");
    insta::assert_snapshot!("slash_popup_120x40", draw(&mut app).backend());
    // At 80 columns every description is whole.
    resize(&mut app, 80, 24);
    let screen = format!("{:?}", draw(&mut app).backend());
    let diff_row = screen.lines().find(|l| l.contains("/diff")).unwrap();
    assert!(
        diff_row.contains("files changed this session, each against its old content"),
        "{diff_row}"
    );
    assert!(!screen.contains('…'), "{screen}");
    // Narrower, a description too long for the popup is cut with a sign that it was.
    resize(&mut app, 60, 24);
    let screen = format!("{:?}", draw(&mut app).backend());
    let copy_row = screen.lines().find(|l| l.contains("/copy")).unwrap();
    assert!(copy_row.contains('…'), "{copy_row}");
    resize(&mut app, 120, 40);

    app.update(key(KeyCode::Backspace));
    typed(&mut app, "/thinking ");
    let popup = app.composer().completion().unwrap().clone();
    assert_eq!(popup.items[..3], ["off", "minimal", "low"]);
    assert_eq!(popup.details[0], "no thinking");
    resize(&mut app, 80, 24);
    insta::assert_snapshot!("slash_thinking_80x24", draw(&mut app).backend());
    clear(&mut app);

    typed(&mut app, "/theme ");
    let popup = app.composer().completion().unwrap().clone();
    assert_eq!(popup.items, ["dark", "light", "high-contrast"]);
    assert_eq!(popup.details[0], "built-in");
    clear(&mut app);

    typed(&mut app, "/model ");
    let popup = app.composer().completion().unwrap().clone();
    assert_eq!(popup.items, ["demo (offline)"]);
    assert_eq!(popup.details, ["current"]);
    clear(&mut app);

    // /sessions asks for the list once, and completes ids with what each session is.
    let mut effects = Vec::new();
    for c in "/sessions ".chars() {
        effects.extend(app.update(key(KeyCode::Char(c))));
    }
    assert_eq!(effects, [Effect::Sessions(sessions::Effect::ListChoices)]);
    app.update(Msg::Sessions(sessions::Msg::Choices(vec![
        (
            "3c3b1f2a".into(),
            "5 min ago · 2 waiting · check the build".into(),
        ),
        ("a1b2c3d4".into(), "2 h ago · fix the parser".into()),
    ])));
    let popup = app.composer().completion().unwrap().clone();
    assert_eq!(popup.items, ["3c3b1f2a", "a1b2c3d4"]);
    assert_eq!(popup.details[0], "5 min ago · 2 waiting · check the build");
    insta::assert_snapshot!("slash_sessions_80x24", draw(&mut app).backend());
    let effects = app.update(key(KeyCode::Enter));
    assert_eq!(
        effects.last(),
        Some(&Effect::Sessions(sessions::Effect::OpenById(
            "3c3b1f2a".into()
        )))
    );
}

#[test]
fn the_help_says_when_there_is_more_and_scrolls_with_the_arrows() {
    let mut app = app();
    app.update(key(KeyCode::F(1)));
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("↓ more (PgDn)"), "{shown}");
    assert!(!shown.contains("↑ more"), "{shown}");
    insta::assert_snapshot!("help_more_120x40", draw(&mut app).backend());
    app.update(key(KeyCode::End));
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("↑ more (PgUp)") && !shown.contains("↓ more"),
        "{shown}"
    );
    assert!(shown.contains("/quit"), "the end of the list: {shown}");
    let Some(Overlay::Help { scroll }) = app.overlay().cloned() else {
        panic!("help open")
    };
    app.update(key(KeyCode::Up));
    assert_eq!(
        app.overlay(),
        Some(&Overlay::Help { scroll: scroll - 1 }),
        "Up right after the end moves at once"
    );
    resize(&mut app, 80, 24);
    app.update(key(KeyCode::Home));
    insta::assert_snapshot!("help_more_80x24", draw(&mut app).backend());
}

#[test]
fn the_keys_line_follows_the_focused_pane() {
    let mut app = app();
    let line = |app: &mut App| screen(app)[37].clone();
    assert!(line(&mut app).contains("Enter: send"));
    app.update(key(KeyCode::Tab));
    assert!(
        line(&mut app).contains("[ ]: select card or code"),
        "{}",
        line(&mut app)
    );
    app.update(key(KeyCode::Tab));
    assert!(
        line(&mut app).contains("Enter: open its arguments and result"),
        "{}",
        line(&mut app)
    );
    insta::assert_snapshot!("keys_line_tools_120x40", line(&mut app));
    app.update(key(KeyCode::Tab));
    assert!(
        line(&mut app).contains("Enter: open subagent"),
        "{}",
        line(&mut app)
    );
}

#[test]
fn find_highlights_matches_and_jumps_between_them_while_streaming() {
    let mut app = scrolled_up(120, 40, 12);
    app.update(ctrl('f'));
    typed(&mut app, "needle");
    let find = app.chat().find().unwrap().clone();
    assert_eq!(find.matches().len(), 12);
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("Find: needle"), "{shown}");
    let terminal = draw(&mut app);
    let buffer = terminal.backend().buffer();
    let y = (0..buffer.area.height)
        .find(|y| {
            (0..72)
                .map(|x| buffer[(x, *y)].symbol())
                .collect::<String>()
                .contains("needle 1")
        })
        .unwrap();
    let line: String = (0..72).map(|x| buffer[(x, y)].symbol()).collect();
    let at = line[..line.find("needle").unwrap()].chars().count() as u16;
    assert_ne!(
        (
            buffer[(at, y)].fg,
            buffer[(at, y)].bg,
            buffer[(at, y)].modifier
        ),
        (
            buffer[(at - 2, y)].fg,
            buffer[(at - 2, y)].bg,
            buffer[(at - 2, y)].modifier
        ),
        "a match is highlighted"
    );
    insta::assert_snapshot!("find_120x40", terminal.backend());
    let first = app.chat().find().unwrap().current().unwrap();
    app.update(key(KeyCode::Enter));
    assert_eq!(app.chat().find().unwrap().current(), Some((first + 1) % 12));
    app.update(Msg::Term(crossterm::event::Event::Key(
        crossterm::event::KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT),
    )));
    assert_eq!(app.chat().find().unwrap().current(), Some(first));

    // An answer streams in: its matches join the list at the next frame.
    app.update(agent(AgentEvent::AgentStart));
    app.update(agent(AgentEvent::MessageStart {
        message: Message::Assistant(AssistantMessage::default()),
    }));
    for piece in ["a fresh ", "needle, and ", "another needle\n\n"] {
        app.update(agent(AgentEvent::MessageUpdate {
            delta: MessageDelta::Text {
                index: 0,
                text: piece.into(),
            },
        }));
        app.update(Msg::Frame);
    }
    assert_eq!(app.chat().find().unwrap().matches().len(), 14);
    resize(&mut app, 80, 24);
    insta::assert_snapshot!("find_streaming_80x24", draw(&mut app).backend());
    app.update(key(KeyCode::Esc));
    assert!(
        app.chat().find().is_none(),
        "Esc closes find, it does not interrupt"
    );
    assert!(app.status().running());
}
