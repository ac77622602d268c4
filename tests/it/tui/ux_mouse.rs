//! Selecting and copying chat text with the mouse (the client issue's item 3): the
//! mouse stays captured for the wheel, and a press, drag and release in the chat select
//! the cells covered, shade them and copy their text (OSC 52) — any line, not only a
//! code block; dragging past the edge scrolls; a key clears the selection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::StopReason;
use claw_tui::tui::{App, Effect, Msg};
use crossterm::event::{Event, KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

fn mouse(kind: MouseEventKind, column: u16, row: u16) -> Msg {
    Msg::Term(Event::Mouse(MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }))
}

/// Presses at (x0, y0), drags to (x1, y1), releases there; the effects of the release.
fn drag(app: &mut App, (x0, y0): (u16, u16), (x1, y1): (u16, u16)) -> Vec<Effect> {
    app.update(mouse(MouseEventKind::Down(MouseButton::Left), x0, y0));
    app.update(mouse(MouseEventKind::Drag(MouseButton::Left), x1, y1));
    app.update(mouse(MouseEventKind::Up(MouseButton::Left), x1, y1))
}

fn copied(effects: &[Effect]) -> Option<&str> {
    effects.iter().find_map(|e| match e {
        Effect::Copy(text) => Some(text.as_str()),
        _ => None,
    })
}

/// An app with one exchange whose answer names a path and an error.
fn with_answer() -> App {
    let mut app = sized(120, 30);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "what failed?");
    let answer_text =
        "The build failed in src/parser/lexer.rs:118\n\nerror[E0308]: mismatched types";
    answer(
        &clock,
        &mut app,
        10,
        vec![text(answer_text)],
        StopReason::Stop,
    );
    run_end(&clock, &mut app, 20);
    app
}

/// The screen row that shows `needle`, and the column where it starts.
fn find(app: &mut App, needle: &str) -> (u16, u16) {
    let rows = screen(app);
    let (y, row) = rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.contains(needle))
        .unwrap_or_else(|| panic!("{needle} not on screen:\n{}", rows.join("\n")));
    let column = claw_tui::tui::wrap::str_width(&row[..row.find(needle).unwrap()]);
    (column as u16, y as u16)
}

#[test]
fn dragging_over_a_path_copies_it_and_shows_the_selection() {
    let mut app = with_answer();
    let (x, y) = find(&mut app, "src/parser/lexer.rs:118");
    let effects = drag(&mut app, (x, y), (x + 22, y));
    assert_eq!(copied(&effects), Some("src/parser/lexer.rs:118"));
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("23 characters sent to the clipboard (OSC 52)"),
        "{shown}"
    );
    let terminal = draw(&mut app);
    let cell = terminal.backend().buffer()[(x + 3, y)].clone();
    assert_eq!(
        cell.bg,
        claw_tui::theme::Theme::fallback().selection().bg.unwrap(),
        "the selected cells are shaded"
    );
    // A key ends the selection.
    app.update(key(KeyCode::Char('a')));
    let terminal = draw(&mut app);
    assert_ne!(
        terminal.backend().buffer()[(x + 3, y)].bg,
        claw_tui::theme::Theme::fallback().selection().bg.unwrap()
    );
}

#[test]
fn a_drag_over_two_rows_copies_both_lines_whichever_way_it_went() {
    let mut app = with_answer();
    let (x0, y0) = find(&mut app, "The build failed");
    let (_, y1) = find(&mut app, "error[E0308]");
    // Upwards, from the end of the second line to the start of the first.
    let effects = drag(&mut app, (x0 + 60, y1), (x0, y0));
    assert_eq!(
        copied(&effects),
        Some("The build failed in src/parser/lexer.rs:118\n\nerror[E0308]: mismatched types")
    );
}

#[test]
fn a_click_copies_nothing_and_outside_the_chat_nothing_starts() {
    let mut app = with_answer();
    let (x, y) = find(&mut app, "error[E0308]");
    let effects = drag(&mut app, (x, y), (x, y));
    assert_eq!(copied(&effects), None);
    // The status bar is not the chat.
    let effects = drag(&mut app, (2, 29), (40, 29));
    assert_eq!(copied(&effects), None);
}

#[test]
fn dragging_past_the_top_scrolls_and_keeps_selecting() {
    let mut app = sized(120, 20);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "count");
    let lines: Vec<String> = (1..=40).map(|i| format!("line {i}")).collect();
    answer(
        &clock,
        &mut app,
        10,
        vec![text(&lines.join("\n"))],
        StopReason::Stop,
    );
    run_end(&clock, &mut app, 20);
    let (x, y) = find(&mut app, "line 40");
    // From the last character of "line 40" up past the top of the pane.
    app.update(mouse(MouseEventKind::Down(MouseButton::Left), x + 6, y));
    for _ in 0..5 {
        app.update(mouse(MouseEventKind::Drag(MouseButton::Left), x, 0));
    }
    let effects = app.update(mouse(MouseEventKind::Up(MouseButton::Left), x, 0));
    let text = copied(&effects).unwrap();
    assert!(text.ends_with("line 40"), "{text}");
    assert!(!app.chat().following(), "the view scrolled up");
    let first = text.lines().next().unwrap();
    let rows_on_screen = 12;
    assert!(
        text.lines().count() > rows_on_screen,
        "more rows than the view holds ({first}): {text}"
    );
}
