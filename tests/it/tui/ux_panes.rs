//! The side panes (the client issue's item 2): with `panes = "auto"` the tool calls and
//! the dashboard show only when they have something to show, beside the chat on a wide
//! terminal and as tabs on a narrower one; a key (F4) hides and shows them, and the
//! keys line and the help say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::StopReason;
use claw_tui::tui::layout::{Focus, PaneMode};
use claw_tui::tui::{App, AppConfig, Msg};
use crossterm::event::{KeyCode, KeyModifiers};
use serde_json::json;

/// An app with `panes = "auto"` of the given size.
fn auto(width: u16, height: u16) -> App {
    let mut app = App::new(AppConfig {
        panes: PaneMode::Auto,
        ..config()
    });
    app.set_clock(std::time::Instant::now(), epoch());
    app.update(Msg::Term(crossterm::event::Event::Resize(width, height)));
    app
}

/// A run that lists the files: one call, its result, the answer.
fn one_call(app: &mut App) {
    let clock = Clock::new(app);
    run_start(&clock, app, "list the files");
    let announce = vec![call("c1", "list_dir", json!({"path": "."}))];
    answer(&clock, app, 5, announce, StopReason::ToolUse);
    start(&clock, app, 10, "c1", "list_dir", json!({"path": "."}));
    end(&clock, app, 20, "c1", "list_dir", "a.txt\nb.txt", false);
    answer(&clock, app, 30, vec![text("Two files.")], StopReason::Stop);
    run_end(&clock, app, 40);
}

#[test]
fn auto_panes_stay_away_until_a_call_and_then_sit_beside_a_wide_chat() {
    let mut app = auto(160, 30);
    let empty = screen(&mut app).join("\n");
    assert!(!empty.contains("No tool calls yet"), "{empty}");
    assert!(!empty.contains("Subagents"), "{empty}");
    assert_eq!(app.areas().chat.unwrap().width, 160, "the chat has it all");
    insta::assert_snapshot!("auto_empty_160x30", draw(&mut app).backend());

    one_call(&mut app);
    let busy = screen(&mut app).join("\n");
    assert!(busy.contains(" Tools "), "{busy}");
    assert!(app.areas().tree.is_some() && app.areas().dashboard.is_some());
    assert_eq!(app.areas().chat.unwrap().width, 96, "60 % beside the panes");
    insta::assert_snapshot!("auto_after_a_call_160x30", draw(&mut app).backend());
}

#[test]
fn auto_panes_are_tabs_below_140_columns_so_the_chat_keeps_its_width() {
    let mut app = auto(120, 30);
    assert!(app.areas().tabs.is_none());
    one_call(&mut app);
    let areas = app.areas();
    assert!(areas.tabs.is_some() && areas.tree.is_none());
    assert_eq!(areas.chat.unwrap().width, 120);
    insta::assert_snapshot!("auto_after_a_call_120x30", draw(&mut app).backend());
    // Tab reaches the tools as a tab.
    app.update(key(KeyCode::Tab));
    app.update(key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Tree);
    assert!(screen(&mut app).join("\n").contains("list_dir"));
}

#[test]
fn the_panes_key_hides_and_shows_them_and_tab_skips_what_is_hidden() {
    let mut app = sized(120, 40);
    let keys_line = screen(&mut app).join("\n");
    assert!(keys_line.contains("F4: hide panes"), "{keys_line}");

    app.update(key(KeyCode::F(4)));
    let hidden = screen(&mut app).join("\n");
    assert!(
        hidden.contains("tool calls and dashboard hidden · F4 shows them"),
        "{hidden}"
    );
    assert!(!hidden.contains("No tool calls yet"), "{hidden}");
    assert_eq!(app.areas().chat.unwrap().width, 120);
    // Tab goes between the composer and the chat only.
    app.update(key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Chat);
    app.update(key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Composer);
    insta::assert_snapshot!("panes_hidden_120x40", draw(&mut app).backend());

    app.update(key(KeyCode::F(4)));
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("No tool calls yet"), "{shown}");
    assert!(
        shown.contains("tool calls and dashboard shown · F4 hides them"),
        "{shown}"
    );
}

#[test]
fn hiding_the_panes_takes_the_focus_from_them() {
    let mut app = sized(120, 40);
    app.update(key(KeyCode::Tab));
    app.update(key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Tree);
    app.update(key(KeyCode::F(4)));
    assert_eq!(app.focus(), Focus::Composer);
    typed(&mut app, "hi");
    assert_eq!(app.composer().text(), "hi", "keys reach the composer");
}

#[test]
fn the_help_names_the_panes_key() {
    let mut app = sized(120, 40);
    app.update(key(KeyCode::F(1)));
    let help = screen(&mut app).join("\n");
    assert!(
        help.contains("F4") && help.contains("show/hide the tool calls and dashboard panes"),
        "{help}"
    );
}

/// Where the terminal cannot tell Shift+Enter from Enter (tmux by default, xterm, most
/// terminals without the kitty keyboard protocol) the keys line offers Alt+Enter instead
/// of promising a key that would send the message.
#[test]
fn the_keys_line_promises_shift_enter_only_where_the_terminal_sends_it() {
    let mut app = sized(120, 40);
    assert!(screen(&mut app).join("\n").contains("Shift+Enter: newline"));
    let mut app = App::new(AppConfig {
        shift_enter: false,
        ..config()
    });
    app.update(Msg::Term(crossterm::event::Event::Resize(120, 40)));
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("Alt+Enter: newline"), "{shown}");
    assert!(!shown.contains("Shift+Enter"), "{shown}");
    // A Shift+Enter that arrives as one (modifyOtherKeys through tmux) shows the
    // terminal tells them apart after all; a plain Enter shows nothing.
    app.update(key(KeyCode::Enter));
    assert!(!screen(&mut app).join("\n").contains("Shift+Enter"));
    app.update(with(KeyCode::Enter, KeyModifiers::SHIFT));
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("Shift+Enter: newline"), "{shown}");
}
