//! `App::update` for keys: each key in each state gives the right effects and model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::AgentEvent;
use claw_tui::tools::exec::ApprovalDecision;
use claw_tui::tui::layout::Focus;
use claw_tui::tui::msg::QueuedText;
use claw_tui::tui::{Effect, Msg, Overlay};
use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};
use std::time::{Duration, Instant};

#[test]
fn enter_sends_a_prompt_when_idle_and_a_follow_up_while_running() {
    let mut app = app();
    typed(&mut app, "hello");
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [
            Effect::SaveHistory("hello".into()),
            Effect::Prompt("hello".into())
        ]
    );
    assert!(app.composer().is_blank());
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [],
        "an empty composer sends nothing"
    );

    app.update(agent(AgentEvent::AgentStart));
    typed(&mut app, "and then this");
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [
            Effect::SaveHistory("and then this".into()),
            Effect::FollowUp("and then this".into())
        ]
    );
    typed(&mut app, "and then this");
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [Effect::FollowUp("and then this".into())],
        "a repeat is not saved twice"
    );
}

/// Ctrl+U deletes the line up to the cursor, as in a shell (not one typed character,
/// the text area's undo).
#[test]
fn ctrl_u_deletes_to_the_start_of_the_line() {
    let mut app = app();
    typed(&mut app, "first");
    app.update(with(KeyCode::Enter, KeyModifiers::SHIFT));
    typed(&mut app, "abc def");
    app.update(key(KeyCode::Left));
    app.update(ctrl('u'));
    assert_eq!(app.composer().text(), "first\nf");
}

#[test]
fn newline_keys_insert_line_breaks() {
    let mut app = app();
    typed(&mut app, "a");
    assert_eq!(app.update(with(KeyCode::Enter, KeyModifiers::SHIFT)), []);
    typed(&mut app, "b");
    assert_eq!(app.update(with(KeyCode::Enter, KeyModifiers::ALT)), []);
    typed(&mut app, "c");
    assert_eq!(app.update(ctrl('j')), []);
    typed(&mut app, "d");
    assert_eq!(app.composer().text(), "a\nb\nc\nd");
    assert_eq!(
        app.update(key(KeyCode::Enter)).last(),
        Some(&Effect::Prompt("a\nb\nc\nd".into()))
    );
}

#[test]
fn esc_steers_with_text_and_interrupts_without() {
    let mut app = app();
    app.update(agent(AgentEvent::AgentStart));
    typed(&mut app, "focus on the tests");
    let t0 = Instant::now();
    assert_eq!(
        app.update_at(key(KeyCode::Esc), t0),
        [Effect::Steer("focus on the tests".into())]
    );
    assert!(app.composer().is_blank());
    assert_eq!(
        app.status().hint(),
        Some("steer queued · delivered when this answer ends"),
        "the hint says when the steer goes in"
    );

    // A double press must not turn the steer into an abort.
    assert_eq!(
        app.update_at(key(KeyCode::Esc), t0 + Duration::from_millis(300)),
        []
    );
    assert!(
        app.status()
            .hint()
            .unwrap()
            .contains("Esc again to interrupt")
    );

    // Later, Esc on the empty composer interrupts and asks for the queue back.
    assert_eq!(
        app.update_at(key(KeyCode::Esc), t0 + Duration::from_millis(1200)),
        [Effect::RestoreQueued, Effect::Abort]
    );
    app.update(Msg::QueueRestored(vec![
        QueuedText::steer("first"),
        QueuedText::follow_up("second"),
    ]));
    assert_eq!(
        app.composer().text(),
        "first\n\nsecond",
        "nothing typed is lost, and the messages stay apart"
    );

    // Keys typed between a steer and the next Esc end the double press at once.
    app.update(key(KeyCode::Enter));
    typed(&mut app, "again");
    assert_eq!(
        app.update_at(key(KeyCode::Esc), t0 + Duration::from_millis(1300)),
        [Effect::Steer("again".into())]
    );
    app.update(with(KeyCode::Char('x'), KeyModifiers::NONE));
    app.update(key(KeyCode::Backspace));
    assert_eq!(
        app.update_at(key(KeyCode::Esc), t0 + Duration::from_millis(1400)),
        [Effect::RestoreQueued, Effect::Abort]
    );
}

#[test]
fn esc_when_idle_only_returns_focus_to_the_composer() {
    let mut app = app();
    typed(&mut app, "draft");
    app.update(key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Chat);
    assert_eq!(app.update(key(KeyCode::Esc)), []);
    assert_eq!(app.focus(), Focus::Composer);
    assert_eq!(app.composer().text(), "draft");
}

#[test]
fn overlays_take_esc_first() {
    let mut app = app();
    app.update(agent(AgentEvent::AgentStart));
    typed(&mut app, "keep me");
    app.update(key(KeyCode::F(1)));
    assert_eq!(app.overlay(), Some(&Overlay::Help { scroll: 0 }));
    assert_eq!(
        app.update(key(KeyCode::Esc)),
        [],
        "Esc closes the help, it does not steer"
    );
    assert_eq!(app.overlay(), None);
    assert_eq!(app.composer().text(), "keep me");

    // The approval prompt sits above everything and Esc denies.
    app.update(key(KeyCode::F(1)));
    app.update(Msg::Approval(request("call-1", "rm -rf build")));
    assert_eq!(
        app.update(key(KeyCode::Esc)),
        [Effect::Approve {
            id: "call-1".into(),
            decision: ApprovalDecision::Deny
        }]
    );
    assert_eq!(
        app.overlay(),
        Some(&Overlay::Help { scroll: 0 }),
        "the help is still open under it"
    );
    assert_eq!(app.update(key(KeyCode::Esc)), []);
    assert_eq!(app.overlay(), None);
}

#[test]
fn approval_keys_answer_in_order() {
    let mut app = app();
    app.update(Msg::Approval(request("a", "ls")));
    app.update(Msg::Approval(request("b", "make")));
    app.update(Msg::Approval(request("c", "cargo test")));
    assert_eq!(
        app.update(key(KeyCode::Char('x'))),
        [],
        "other keys do nothing"
    );
    assert_eq!(
        app.update(key(KeyCode::Char('y'))),
        [Effect::Approve {
            id: "a".into(),
            decision: ApprovalDecision::Allow
        }]
    );
    assert_eq!(
        app.update(key(KeyCode::Char('a'))),
        [Effect::Approve {
            id: "b".into(),
            decision: ApprovalDecision::AllowSession
        }]
    );
    assert_eq!(
        app.update(key(KeyCode::Char('n'))),
        [Effect::Approve {
            id: "c".into(),
            decision: ApprovalDecision::Deny
        }]
    );
    assert!(app.approvals().is_empty());
    assert!(
        app.composer().is_blank(),
        "answer keys never reach the composer"
    );
}

#[test]
fn ctrl_c_interrupts_or_clears_and_twice_quits() {
    let mut app = app();
    typed(&mut app, "scratch");
    let t0 = Instant::now();
    assert_eq!(app.update_at(ctrl('c'), t0), []);
    assert!(app.composer().is_blank());
    assert!(
        app.status()
            .hint()
            .unwrap()
            .contains("Ctrl+C again to quit")
    );
    assert_eq!(
        app.update_at(ctrl('c'), t0 + Duration::from_millis(400)),
        [Effect::Quit]
    );

    let mut app = self::app();
    assert_eq!(app.update_at(ctrl('c'), t0), []);
    assert_eq!(
        app.update_at(ctrl('c'), t0 + Duration::from_millis(1500)),
        [],
        "too slow: not a double press"
    );

    let mut app = self::app();
    app.update(agent(AgentEvent::AgentStart));
    assert_eq!(
        app.update_at(ctrl('c'), t0),
        [Effect::RestoreQueued, Effect::Abort]
    );
    assert_eq!(
        app.update_at(ctrl('c'), t0 + Duration::from_millis(200)),
        [Effect::Quit]
    );
}

#[test]
fn ctrl_d_quits_only_on_an_empty_composer() {
    let mut app = app();
    typed(&mut app, "ab");
    app.update(key(KeyCode::Left));
    assert_eq!(app.update(ctrl('d')), []);
    assert_eq!(
        app.composer().text(),
        "a",
        "Ctrl+D deletes the character under the cursor"
    );
    app.update(key(KeyCode::Backspace));
    assert_eq!(app.update(ctrl('d')), [Effect::Quit]);
}

#[test]
fn global_keys() {
    let mut app = app();
    assert_eq!(
        app.update(with(KeyCode::Up, KeyModifiers::ALT)),
        [Effect::RestoreQueued]
    );
    assert_eq!(app.update(ctrl('z')), [Effect::Suspend]);
    typed(&mut app, "edit me");
    assert_eq!(
        app.update(ctrl('g')),
        [Effect::OpenEditor("edit me".into())]
    );
    app.update(Msg::EditorDone(Ok("edited\n".into())));
    assert_eq!(app.composer().text(), "edited");
    app.update(Msg::EditorDone(Err(
        claw_tui::tui::msg::EditorError::Failed {
            editor: "nano".into(),
            status: std::os::unix::process::ExitStatusExt::from_raw(1 << 8),
        },
    )));
    assert_eq!(
        app.composer().text(),
        "edited",
        "a failed edit keeps the text"
    );
    assert!(!app.chat().thinking_expanded());
    app.update(ctrl('t'));
    assert!(app.chat().thinking_expanded());
    assert_eq!(
        app.update(key(KeyCode::F(12))),
        [Effect::SetMouseCapture(false)]
    );
    assert_eq!(
        app.update(key(KeyCode::F(12))),
        [Effect::SetMouseCapture(true)]
    );
}

#[test]
fn tab_cycles_focus_and_typing_elsewhere_goes_to_the_composer() {
    let mut app = app();
    let order: Vec<Focus> = (0..4)
        .map(|_| {
            app.update(key(KeyCode::Tab));
            app.focus()
        })
        .collect();
    assert_eq!(
        order,
        [Focus::Chat, Focus::Tree, Focus::Dashboard, Focus::Composer]
    );
    // Shift+Tab goes back from a pane; in the composer it switches plan mode instead.
    app.update(key(KeyCode::Tab));
    app.update(with(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(app.focus(), Focus::Composer);
    let effects = app.update(with(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(app.focus(), Focus::Composer);
    assert_eq!(
        effects,
        [Effect::SetMode(claw_tui::runtime::AgentMode::Plan)]
    );
    app.update(key(KeyCode::Tab));
    app.update(key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Tree);
    app.update(key(KeyCode::Char('h')));
    assert_eq!(
        (app.focus(), app.composer().text().as_str()),
        (Focus::Composer, "h")
    );
}

#[test]
fn question_mark_opens_help_only_on_an_empty_composer() {
    let mut app = app();
    app.update(key(KeyCode::Char('?')));
    assert_eq!(app.overlay(), Some(&Overlay::Help { scroll: 0 }));
    app.update(key(KeyCode::Esc));
    typed(&mut app, "why?");
    assert_eq!(app.overlay(), None);
    assert_eq!(app.composer().text(), "why?");
}

#[test]
fn key_releases_are_ignored() {
    let mut app = app();
    let mut release = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
    release.kind = KeyEventKind::Release;
    assert_eq!(app.update(Msg::Term(Event::Key(release))), []);
    assert!(app.composer().is_blank());
}

#[test]
fn only_what_changes_the_screen_asks_for_a_frame() {
    let mut app = app();
    app.update(Msg::Frame);
    assert!(!app.needs_draw());
    let mut release = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
    release.kind = KeyEventKind::Release;
    app.update(Msg::Term(Event::Key(release)));
    app.update(Msg::Term(Event::FocusLost));
    app.update(Msg::Term(Event::Mouse(MouseEvent {
        kind: MouseEventKind::Moved,
        column: 3,
        row: 3,
        modifiers: KeyModifiers::NONE,
    })));
    app.update(key(KeyCode::Enter));
    assert!(
        !app.needs_draw(),
        "a release, focus, a mouse move, Enter on nothing"
    );
    app.update(key(KeyCode::Tab));
    assert!(app.needs_draw(), "the focus moves");
    app.update(Msg::Frame);
    app.update(key(KeyCode::F(5)));
    assert!(!app.needs_draw(), "a key the chat pane does not use");

    app.update(Msg::Approval(request("a", "ls")));
    assert!(app.needs_draw(), "the approval prompt appears");
    app.update(Msg::Frame);
    app.update(key(KeyCode::Char('x')));
    assert!(!app.needs_draw(), "a key the prompt does not answer to");
    app.update(key(KeyCode::Char('y')));
    assert!(app.needs_draw(), "the prompt closes");

    app.update(Msg::Frame);
    typed(&mut app, "h");
    assert!(
        app.needs_draw() && app.input_changed(),
        "typing is drawn at once"
    );
    app.update(Msg::Frame);
    app.update(agent(AgentEvent::AgentStart));
    assert!(
        app.needs_draw() && !app.input_changed(),
        "the agent's events are drawn at the stream's pace"
    );
}

#[test]
fn history_recalls_with_up_and_down_at_the_edges() {
    let mut app = app();
    app.update(Msg::HistoryLoaded(vec!["old one".into(), "old two".into()]));
    typed(&mut app, "new");
    app.update(key(KeyCode::Up));
    assert_eq!(app.composer().text(), "old two");
    app.update(key(KeyCode::Up));
    assert_eq!(app.composer().text(), "old one");
    app.update(key(KeyCode::Down));
    app.update(key(KeyCode::Down));
    assert_eq!(app.composer().text(), "new");
}

#[test]
fn paste_goes_to_the_composer_with_its_line_breaks() {
    let mut app = app();
    app.update(key(KeyCode::Tab));
    app.update(Msg::Term(Event::Paste("line one\r\nline two".into())));
    assert_eq!(app.focus(), Focus::Composer);
    assert_eq!(app.composer().text(), "line one\nline two");
}

/// A paste longer than the composer shows is one chip with its size; the message goes
/// with the whole paste where the chip stands, and the editor gets it whole too.
#[test]
fn a_long_paste_is_a_chip_and_is_sent_whole() {
    let mut app = sized(120, 40);
    let pasted: String = (1..=200).map(|i| format!("log line {i}\n")).collect();
    typed(&mut app, "why does this fail? ");
    app.update(Msg::Term(Event::Paste(pasted.replace('\n', "\r\n"))));
    typed(&mut app, " thanks");
    let chip = "[paste #1: 200 lines, 2.4 KiB]";
    assert_eq!(
        app.composer().shown(),
        format!("why does this fail? {chip} thanks")
    );
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains(chip), "{shown}");
    assert!(
        shown.contains("a long paste is a chip: sent whole"),
        "{shown}"
    );
    assert!(!shown.contains("log line 200"), "{shown}");
    let whole = format!("why does this fail? {pasted} thanks");
    assert_eq!(
        app.update(ctrl('g')),
        [Effect::OpenEditor(whole.clone())],
        "the editor shows it whole"
    );
    let sent = app.update(key(KeyCode::Enter));
    assert!(
        sent.contains(&Effect::Prompt(whole.trim_end().to_owned())),
        "{sent:?}"
    );
    assert_eq!(app.composer().shown(), "");
    insta::assert_snapshot!("long_paste_chip", {
        let mut app = sized(80, 24);
        app.update(Msg::Term(Event::Paste(pasted.clone())));
        draw(&mut app).backend().to_string()
    });
}
