//! The approval dialog cannot be spoofed: a command of `cargo test`, 80 newlines and
//! `touch x` says how many lines it has, keeps the keys on screen, and its hidden last
//! line is reached by scrolling; control characters are shown as text.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::tui::scene::draw;
use crate::support::tui::{app, key, request, sized};
use claw_tui::tools::exec::ApprovalDecision;
use claw_tui::tui::{Effect, Msg};
use crossterm::event::KeyCode;

/// `cargo test`, then 80 newlines and the line that would run unseen.
fn spoofing_command() -> String {
    format!("cargo test{}touch x", "\n".repeat(80))
}

#[test]
fn a_command_taller_than_the_screen_says_its_lines_and_scrolls_to_the_hidden_one() {
    let mut app = app();
    app.update(Msg::Approval(request("approval-1", &spoofing_command())));
    let top = draw(&mut app).backend().to_string();
    assert!(top.contains("The agent wants to run 81 lines:"), "{top}");
    assert!(top.contains(" 1 │ cargo test"), "{top}");
    assert!(!top.contains("touch x"), "{top}");
    assert!(top.contains("more below"), "{top}");
    assert!(top.contains("allow once") && top.contains("deny"), "{top}");
    insta::assert_snapshot!("approval_long_command_top", draw(&mut app).backend());

    // Page by page down to the end: the keys stay, the last line shows.
    app.update(key(KeyCode::PageDown));
    let paged = draw(&mut app).backend().to_string();
    assert!(!paged.contains(" 1 │ cargo test"), "{paged}");
    assert!(paged.contains("allow once"), "{paged}");
    app.update(key(KeyCode::End));
    let end = draw(&mut app).backend().to_string();
    assert!(end.contains("81 │ touch x"), "{end}");
    assert!(end.contains("timeout (s): 30"), "{end}");
    assert!(end.contains("allow once"), "{end}");
    assert!(!end.contains("more below"), "{end}");
    insta::assert_snapshot!("approval_long_command_end", draw(&mut app).backend());

    // Up right after the end moves at once: the scroll is kept within the text.
    app.update(key(KeyCode::Up));
    let up = draw(&mut app).backend().to_string();
    assert!(up.contains("80 │"), "{up}");
    assert!(!up.contains("timeout (s): 30"), "{up}");
    assert!(up.contains("more below"), "{up}");

    // Scrolling answered nothing; y answers this request, and the next starts at its top.
    app.update(Msg::Approval(request("approval-2", &spoofing_command())));
    assert_eq!(
        app.update(key(KeyCode::Char('y'))),
        [Effect::Approve {
            id: "approval-1".into(),
            decision: ApprovalDecision::Allow,
        }]
    );
    let next = draw(&mut app).backend().to_string();
    assert!(next.contains(" 1 │ cargo test"), "{next}");
}

#[test]
fn control_characters_in_a_command_are_shown_as_text() {
    let mut app = sized(100, 30);
    // A carriage return and an erase-line would hide `rm -rf ~` behind `ls` on a terminal.
    app.update(Msg::Approval(request(
        "approval-1",
        "rm -rf ~\r\u{1b}[2Kls\u{9b}2J",
    )));
    let screen = draw(&mut app).backend().to_string();
    assert!(screen.contains("$ rm -rf ~^M^[[2Kls^[[2J"), "{screen}");
    assert!(screen.contains("The agent wants to run:"), "{screen}");
}

#[test]
fn a_tiny_screen_still_shows_the_keys_and_a_row_of_the_command() {
    let mut app = sized(60, 12);
    app.update(Msg::Approval(request("approval-1", &spoofing_command())));
    let screen = draw(&mut app).backend().to_string();
    assert!(screen.contains("allow once"), "{screen}");
    assert!(screen.contains("cargo test"), "{screen}");
    app.update(key(KeyCode::End));
    let end = draw(&mut app).backend().to_string();
    assert!(end.contains("touch x"), "{end}");
}
