//! End to end (the real binary in a pseudo-terminal, on the demo model): a command's
//! card shows its output live and then its exit code; Ctrl+X stops only the running
//! command and the steer goes in at once; `!command` runs through the exec policy (and
//! not at all when exec is disabled); find; a subagent's calls come back after `-c`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::Sandbox;
use crate::support::pty::{Answers, Tui, status_line};

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

#[test]
fn a_command_card_shows_live_lines_with_a_timer_then_the_exit_code() {
    let sandbox = Sandbox::new();
    let tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    let mut tui = tui;
    tui.send("run for i in 1 2 3 4 5 6 7; do echo line $i; sleep 0.3; done\r");
    // While it runs, the card in the chat shows the newest lines (not only the tree).
    let running = tui.wait_for("live lines in the chat card", |s| {
        let text = s.contents();
        status_line(s).contains("running tools")
            && text.lines().any(|l| l.starts_with("│    │ line 2"))
    });
    // The chat has the whole width (the panes are tabs at 120 columns).
    let chat_part: String = running
        .lines()
        .find(|l| l.contains("exec for i in"))
        .unwrap()
        .to_owned();
    let header = chat_part.clone();
    assert!(
        chat_part.trim_end_matches('│').trim_end().ends_with('s') && chat_part.contains(" · "),
        "the header ends with a timer: {header}"
    );
    let done = tui.wait_for("the finished card", |s| {
        s.contents().contains("exit 0 · 7 lines, 2 above") && idle(s)
    });
    assert!(
        done.contains("│    │ line 7") && !done.contains("│    │ line 2 "),
        "{done}"
    );
    // Ctrl+O shows the whole output in place.
    tui.send("\x0f");
    tui.wait_for("the expanded card", |s| {
        s.contents().contains("│    │ line 1") && s.contents().contains("Ctrl+O: collapse")
    });
    tui.quit();
}

#[test]
fn ctrl_x_stops_only_the_running_command_and_the_steer_goes_in_at_once() {
    let sandbox = Sandbox::new();
    let tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    let mut tui = tui;
    tui.send("run sleep 30\r");
    tui.wait_for("the command running", |s| {
        status_line(s).contains("running tools")
    });
    // Esc with text: the hint says it waits for the command, and how to send it now.
    tui.send("list files");
    tui.wait_text("list files");
    tui.send("\x1b");
    tui.wait_for("the honest steer hint", |s| {
        s.contents().contains("delivered when exec finishes")
    });
    tui.send("\x18");
    let screen = tui.wait_for("the steer delivered and the run going on", |s| {
        let text = s.contents();
        text.contains("› list files") && text.contains("interrupted") && idle(s)
    });
    assert!(
        screen
            .lines()
            .any(|l| l.contains("■ exec sleep 30") && l.contains("interrupted")),
        "the call reads interrupted, not failed:\n{screen}"
    );
    assert!(
        screen.contains("list_dir"),
        "the turn went on with the steer (the demo listed the files):\n{screen}"
    );
    assert!(
        !screen
            .lines()
            .any(|l| l.trim_start_matches('│').starts_with("■ interrupted")),
        "the run itself was not interrupted:\n{screen}"
    );
    tui.quit();
}

#[test]
fn a_shell_command_runs_in_the_workspace_and_its_output_goes_with_the_next_message() {
    let sandbox = Sandbox::new();
    let tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    let mut tui = tui;
    tui.send("!echo made by the shell > made.txt; cat made.txt\r");
    let screen = tui.wait_for("the shell card", |s| {
        s.contents().contains("exit 0 · 1 line")
    });
    assert!(screen.contains("│ made by the shell"), "{screen}");
    assert!(
        screen.contains("its output goes with your next message"),
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.workspace().join("made.txt")).unwrap(),
        "made by the shell\n",
        "it ran in the workspace"
    );
    tui.send("hello\r");
    tui.wait_for("the next message with the output folded", |s| {
        s.contents()
            .contains("› $ echo made by the shell > made.txt; cat made.txt")
            && s.contents().contains("output sent")
            && idle(s)
    });
    tui.quit();
}

#[test]
fn with_exec_disabled_a_shell_command_does_not_run() {
    let sandbox = Sandbox::new();
    sandbox.write_config("[tools]\ndisabled = [\"exec\"]\n");
    let tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    let mut tui = tui;
    tui.send("!touch pwned.txt\r");
    tui.wait_text("exec is disabled in this configuration");
    assert!(
        !sandbox.workspace().join("pwned.txt").exists(),
        "the policy refused it: nothing ran"
    );
    tui.quit();
}

#[test]
fn find_jumps_to_matches_in_the_transcript() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.workspace().join("notes.txt"),
        "a needle in the notes",
    )
    .unwrap();
    let tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    let mut tui = tui;
    tui.send("read notes.txt\r");
    tui.wait_for("the answer", |s| {
        s.contents().contains("returned:") && idle(s)
    });
    tui.send("\x06");
    tui.wait_text("Find:");
    tui.send("needle");
    tui.wait_for("the match count", |s| {
        s.contents().contains("Find: needle█  1/1")
    });
    tui.send("\x1b");
    tui.wait_for("find closed", |s| !s.contents().contains("Find:"));
    tui.quit();
}

#[test]
fn a_subagents_calls_come_back_under_its_spawn_after_a_resume() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.workspace().join("notes.txt"), "x").unwrap();
    // The tree beside the chat, so both show at once.
    sandbox.write_config("[ui]\npanes = \"show\"\n");
    let root = sandbox.dir.path();
    let tui = Tui::demo(root, "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    let mut tui = tui;
    tui.send("spawn list files\r");
    // The subagent's list_dir shows nested under the spawn call while it runs.
    tui.wait_for("the subagent's call in the tree", |s| {
        s.contents().lines().any(|l| l.contains("  ✓ list_dir"))
            && s.contents().contains("notification")
            && idle(s)
    });
    tui.quit();

    let tui = Tui::demo(root, "0", &["-c"]);
    let screen = tui.wait_for("the resumed tree", |s| {
        s.contents().contains("Resumed session") && idle(s)
    });
    assert!(screen.contains("✓ spawn"), "{screen}");
    assert!(
        screen.lines().any(|l| l.contains("  ✓ list_dir")),
        "the subagent's call is back under its spawn:\n{screen}"
    );
    tui.quit();
}

/// The background of the status bar's first cell.
fn status_background(tui: &Tui) -> vt100::Color {
    tui.wait_for("the status bar", |s| status_line(s).contains("idle"));
    tui.with_screen(|screen| {
        let last = screen.size().0.get() - 1;
        screen.cell(last, 1).unwrap().bgcolor()
    })
}

/// With no theme set, the client fits the terminal's background: light when
/// `COLORFGBG` or the terminal's answer to the background query (OSC 11) says light,
/// dark when it says dark or does not answer.
#[test]
fn with_no_theme_set_the_terminals_background_picks_light_or_dark() {
    const LIGHT_STATUS: vt100::Color = vt100::Color::Rgb(0xea, 0xec, 0xef);
    const DARK_STATUS: vt100::Color = vt100::Color::Rgb(0x2b, 0x30, 0x3b);
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let start = |env: &[(&str, &str)], background: Option<&str>| {
        let answers = Answers {
            background: background.map(str::to_owned),
            ..Answers::default()
        };
        Tui::in_sandbox_answering(root, &["--provider", "demo"], env, (100, 30), &answers)
    };

    let tui = start(&[("COLORFGBG", "0;15")], None);
    assert_eq!(status_background(&tui), LIGHT_STATUS);
    tui.quit();

    // No COLORFGBG: the client asks, and the terminal answers white (then DA1).
    let tui = start(&[("COLORFGBG", "")], Some("rgb:ffff/ffff/ffff"));
    tui.wait_background_query();
    assert_eq!(status_background(&tui), LIGHT_STATUS);
    tui.quit();

    let tui = start(&[("COLORFGBG", "")], Some("rgb:1c1c/1c1c/1c1c"));
    assert_eq!(status_background(&tui), DARK_STATUS);
    tui.quit();

    // The terminal does not know the question (it answers only DA1): dark.
    let tui = start(&[("COLORFGBG", "")], None);
    tui.wait_background_query();
    assert_eq!(status_background(&tui), DARK_STATUS);
    tui.quit();

    // A theme in the config file is kept whatever the background.
    sandbox.write_config("[ui]\ntheme = \"dark\"\n");
    let tui = start(&[("COLORFGBG", "0;15")], None);
    assert_eq!(status_background(&tui), DARK_STATUS);
    tui.quit();
}

/// The terminal of these tests answers DA1 but not the kitty keyboard protocol's
/// question, as tmux and xterm do: the keys line offers Alt+Enter for a new line, and
/// Alt+Enter makes one.
#[test]
fn without_the_kitty_protocol_the_keys_line_offers_alt_enter() {
    let sandbox = Sandbox::new();
    let tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_text("Alt+Enter: newline");
    assert!(!tui.text().contains("Shift+Enter"), "{}", tui.text());
    makes_a_new_line(tui, "\x1b\r");
}

/// xterm, and tmux with `extended-keys on`, send Shift+Enter as modifyOtherKeys'
/// `CSI 27;2;13~` once asked: the client asks, decodes it as a new line, and from then
/// on the keys line offers Shift+Enter (the start could not know the terminal would).
/// Leaving gives the terminal its keys back.
#[test]
fn modify_other_keys_shift_enter_makes_a_new_line_and_is_then_offered() {
    let sandbox = Sandbox::new();
    let mut tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_text("Alt+Enter: newline");
    assert!(
        tui.modes_left().modify_other_keys,
        "modifyOtherKeys was asked for"
    );
    tui.send("first\x1b[27;2;13~second");
    let screen = tui.wait_for("the second line and the key offered", |s| {
        s.contents().contains("second") && s.contents().contains("Shift+Enter: newline")
    });
    assert!(
        screen.lines().any(|l| l.contains("first")) && !screen.contains("› first"),
        "a new line, not a sent message: {screen}"
    );
    // Level 1 leaves Ctrl+letter keys as control bytes: Ctrl+C clears the composer.
    tui.send("\x03");
    tui.wait_for("the empty composer", |s| !s.contents().contains("second"));
    tui.send("\x04");
    let (code, alternate, _) = tui.wait_exit();
    assert_eq!((code, alternate), (0, false));
    assert!(
        !tui.modes_left().modify_other_keys,
        "modifyOtherKeys is switched off"
    );
}

/// The demo in a 120×30 terminal that answers the questions `answers` says.
fn demo_answering(sandbox: &Sandbox, answers: Answers) -> Tui {
    let root = sandbox.dir.path();
    Tui::in_sandbox_answering(root, &["--provider", "demo"], &[], (120, 30), &answers)
}

/// Types `first`, the newline key `newline`, then `second`: both lines stay in the
/// composer (nothing is sent), and the client quits cleanly after.
fn makes_a_new_line(mut tui: Tui, newline: &str) {
    tui.send(&format!("first{newline}second"));
    tui.wait_text("second");
    let text = tui.text();
    assert!(
        text.lines().any(|l| l.contains("first")) && !text.contains("› first"),
        "a new line, not a sent message: {text}"
    );
    // Ctrl+C clears the message, so Ctrl+D quits.
    tui.send("\x03");
    tui.wait_for("the empty composer", |s| !s.contents().contains("second"));
    tui.quit();
}

/// A terminal that speaks the kitty keyboard protocol tells Shift+Enter apart: the keys
/// line promises it, and Shift+Enter (`CSI 13;2u`) makes a new line.
#[test]
fn with_the_kitty_protocol_the_keys_line_offers_shift_enter() {
    let sandbox = Sandbox::new();
    let tui = demo_answering(
        &sandbox,
        Answers {
            kitty: true,
            ..Answers::default()
        },
    );
    tui.wait_text("Shift+Enter: newline");
    makes_a_new_line(tui, "\x1b[13;2u");
}

/// A terminal that answers no question at all (not even DA1) still gets the client,
/// after the probes' bounded waits, with the newline key every terminal sends offered.
#[test]
fn a_terminal_that_answers_nothing_still_starts() {
    let sandbox = Sandbox::new();
    let tui = demo_answering(
        &sandbox,
        Answers {
            da1: false,
            ..Answers::default()
        },
    );
    tui.wait_text("Alt+Enter: newline");
    tui.quit();
}

/// `/theme light`, then `/settings` and `s`: the config file gets `theme = "light"` under
/// `[ui]`, its comments kept, and the next start uses it.
#[test]
fn a_theme_chosen_in_the_client_is_saved_to_the_config_file() {
    let sandbox = Sandbox::new();
    let before = "# my claw-tui settings\n[ui]\nmouse = true   # wheel scrolling\n";
    sandbox.write_config(before);
    let mut tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.send("/theme light\r");
    tui.wait_for("the light theme", |s| {
        let last = s.size().0.get() - 1;
        s.cell(last, 1).map(|c| c.bgcolor()) == Some(vt100::Color::Rgb(0xea, 0xec, 0xef))
    });
    tui.send("/settings\r");
    tui.wait_text("changed here, not saved");
    tui.send("s");
    tui.wait_text("Saved theme to");
    let after = std::fs::read_to_string(sandbox.config_path()).unwrap();
    assert_eq!(
        after,
        "# my claw-tui settings\n[ui]\nmouse = true   # wheel scrolling\ntheme = \"light\"\n"
    );
    tui.send("\x1b");
    tui.wait_for("the settings closed", |s| !s.contents().contains("s saves"));
    tui.quit();
    let tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_for("the light theme again", |s| {
        status_line(s).contains("idle")
            && s.cell(s.size().0.get() - 1, 1).map(|c| c.bgcolor())
                == Some(vt100::Color::Rgb(0xea, 0xec, 0xef))
    });
    tui.quit();
}
