//! `[keys]` from a config file: remapped keys change what `App::update` does, the help
//! overlay shows the bindings in use, and the real binary refuses a bad binding before it
//! touches the terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::{Sandbox, run};
use crate::support::pty::Tui;
use crate::support::tui::scene::screen_text;
use crate::support::tui::{agent, ctrl, key, typed, with};
use claw_tui::agent::AgentEvent;
use claw_tui::config::parse_file;
use claw_tui::keymap::KeyMap;
use claw_tui::tui::{App, Effect, Msg, Overlay, view};
use crossterm::event::{Event, KeyCode, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::cell::Cell;
use std::path::Path;
use vt100::MouseProtocolMode;

/// The real binary on the demo model in a 120×40 pseudo-terminal, with `config`.
fn spawn(sandbox: &Sandbox, config: &str) -> Tui {
    sandbox.write_config(config);
    Tui::in_sandbox(sandbox.dir.path(), &["--provider", "demo"], &[], (120, 40))
}

/// The mouse reporting mode once the welcome screen is up.
fn mouse_mode_at_start(tui: &Tui) -> MouseProtocolMode {
    let mode = Cell::new(MouseProtocolMode::None);
    tui.wait_for("the welcome screen", |s| {
        mode.set(s.mouse_protocol_mode());
        s.contents().contains("Welcome to claw-tui")
    });
    mode.get()
}

/// An app at 120×40 whose keys come from the `[keys]` of `config` as a file would give them.
fn app_with(config: &str) -> App {
    let file = parse_file(Path::new("config.toml"), config).unwrap();
    let mut app_config = crate::support::tui::config();
    app_config.keymap = KeyMap::from_table(&file.keys).unwrap();
    let mut app = App::new(app_config);
    app.set_clock(std::time::Instant::now(), crate::support::tui::epoch());
    app.update(Msg::Term(Event::Resize(120, 40)));
    app
}

fn screen(app: &mut App) -> String {
    app.update(Msg::Frame);
    let mut terminal =
        Terminal::new(TestBackend::new(app.size().width, app.size().height)).unwrap();
    terminal.draw(|frame| view(app, frame)).unwrap();
    screen_text(&terminal)
}

#[test]
fn a_remapped_submit_sends_and_enter_becomes_a_newline() {
    let mut app = app_with("[keys]\nsubmit = \"ctrl+s\"\nnewline = \"enter\"\n");
    typed(&mut app, "one");
    assert_eq!(app.update(key(KeyCode::Enter)), [], "Enter no longer sends");
    typed(&mut app, "two");
    assert_eq!(app.composer().text(), "one\ntwo");
    assert_eq!(
        app.update(ctrl('s')),
        [
            Effect::SaveHistory("one\ntwo".into()),
            Effect::Prompt("one\ntwo".into())
        ]
    );
    assert!(app.composer().is_blank());
}

#[test]
fn a_remapped_interrupt_steers_and_esc_no_longer_does() {
    let mut app = app_with("[keys]\ninterrupt = \"ctrl+q\"\n");
    app.update(agent(AgentEvent::AgentStart));
    typed(&mut app, "look elsewhere");
    assert_eq!(app.update(key(KeyCode::Esc)), []);
    assert_eq!(
        app.composer().text(),
        "look elsewhere",
        "Esc is an ordinary key now"
    );
    assert_eq!(
        app.update(ctrl('q')),
        [Effect::Steer("look elsewhere".into())]
    );
    assert_eq!(
        app.update(ctrl('q')),
        [],
        "a second press right after a steer does not interrupt"
    );
}

#[test]
fn the_help_overlay_opens_with_its_new_key_and_lists_the_configured_bindings() {
    let mut app =
        app_with("[keys]\nhelp = \"f2\"\nsubmit = [\"ctrl+s\", \"alt+s\"]\nnewline = \"enter\"\n");
    app.update(key(KeyCode::F(1)));
    assert_eq!(app.overlay(), None, "F1 is no longer bound");
    app.update(key(KeyCode::F(2)));
    assert_eq!(app.overlay(), Some(&Overlay::Help { scroll: 0 }));
    let shown = screen(&mut app);
    let line = |what: &str| {
        shown
            .lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no line with {what:?} in:\n{shown}"))
            .to_owned()
    };
    assert!(
        line("send; while the agent works").contains("Ctrl+S, Alt+S"),
        "{shown}"
    );
    assert!(line("new line in the message").contains("Enter"), "{shown}");
    assert!(line("this help").contains("F2"), "{shown}");
    assert!(!line("this help").contains("F1"), "{shown}");
    // The help closes with its own key too.
    app.update(with(KeyCode::F(2), KeyModifiers::NONE));
    assert_eq!(app.overlay(), None);
}

#[test]
fn the_binary_refuses_a_bad_binding_before_taking_the_terminal() {
    let sandbox = Sandbox::new();
    sandbox.write_config("provider = \"demo\"\n\n[keys]\nhelp = \"f2\"\nsubmit = \"ctrl+bogus\"\n");
    let (code, stdout, stderr) = run(sandbox.command());
    assert_eq!(code, 2, "stderr: {stderr}");
    assert!(
        stderr.contains("`submit`") && stderr.contains("bogus") && stderr.contains("line 5"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("terminal"),
        "it stops before trying the terminal: {stderr}"
    );
    assert!(stdout.is_empty(), "nothing is drawn: {stdout:?}");
}

#[test]
fn the_binary_uses_the_files_keys_and_mouse_setting() {
    let sandbox = Sandbox::new();
    let mut tui = spawn(&sandbox, "[ui]\nmouse = false\n\n[keys]\nhelp = \"f2\"\n");
    assert_eq!(mouse_mode_at_start(&tui), MouseProtocolMode::None);
    tui.send("\x1bOQ"); // F2
    let help = tui.wait_text("this help");
    let line = help.lines().find(|l| l.contains("this help")).unwrap();
    assert!(line.contains("F2") && !line.contains("F1"), "{help}");
    tui.send("\x1b"); // Esc closes the overlay
    tui.wait_for("the help closed", |s| !s.contents().contains("this help"));
    tui.send("\x04"); // Ctrl+D quits
    assert_eq!(tui.wait_exit().0, 0);

    // Without [ui] mouse the mouse is captured, so the check above can tell.
    let sandbox = Sandbox::new();
    let tui = spawn(&sandbox, "");
    assert_ne!(mouse_mode_at_start(&tui), MouseProtocolMode::None);
}
