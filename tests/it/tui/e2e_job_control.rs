//! Job control of the real client under a real interactive shell (bash, on a
//! pseudo-terminal, with job control as a user has it): a SIGTSTP from outside gives
//! the terminal back before the client stops, `fg` gives it the terminal again and it
//! redraws; continued in the background, or started there (`claw-tui &`), it stops
//! before it changes the terminal at all, and `fg` brings it up whole.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::Sandbox;
use crate::support::poll;
use crate::support::pty::{DEADLINE, LeftModes, Tui, status_line};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::path::Path;

/// An interactive bash with job control in the sandbox at `root` (laid out as for
/// `Tui::in_sandbox`), no startup files and no line editing (so only the client sets
/// terminal modes), reporting a job's stop as soon as it happens (`set -b`).
fn shell(root: &Path) -> Tui {
    let dir = |name: &str| root.join(name).display().to_string();
    let (data, state, config) = (dir("data"), dir("state"), dir("config"));
    let history = dir("bash_history");
    let mut sh = Tui::spawn_program(
        "bash",
        &["--norc", "--noprofile", "--noediting", "-i"],
        &[
            ("XDG_DATA_HOME", data.as_str()),
            ("XDG_STATE_HOME", state.as_str()),
            ("XDG_CONFIG_HOME", config.as_str()),
            ("HISTFILE", history.as_str()),
            ("EDITOR", "true"),
            ("PS1", "$ "),
            ("CLAW_TUI_DEMO_PACE_MS", "20"),
        ],
        &root.join("ws"),
        (120, 40),
    );
    sh.wait_text("$ ");
    sh.send("set -b\r");
    sh.wait_for("the prompt after set -b", |s| {
        s.contents().matches("$ ").count() == 2
    });
    sh
}

/// The command line that starts the client on the demo model in the sandbox at `root`.
fn client_line(root: &Path) -> String {
    let quoted = |p: &Path| format!("'{}'", p.display());
    format!(
        "{} --provider demo --config {} --workspace {}",
        quoted(Path::new(env!("CARGO_BIN_EXE_claw-tui"))),
        quoted(&root.join("config/config.toml")),
        quoted(&root.join("ws")),
    )
}

/// The shell's child: the client it started.
fn client_of(sh: &Tui) -> Pid {
    let children = format!("/proc/{0}/task/{0}/children", sh.pid());
    poll::until("the shell's child", DEADLINE, || {
        let text = std::fs::read_to_string(&children).ok()?;
        text.split_whitespace()
            .next()?
            .parse()
            .ok()
            .map(Pid::from_raw)
    })
}

/// The process's state letter in `/proc/PID/stat` ('T' when stopped).
fn state(pid: Pid) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 1..];
    after_name.trim_start().chars().next().unwrap()
}

fn wait_stopped(pid: Pid) {
    poll::until("the client stopped", DEADLINE, || {
        (state(pid) == 'T').then_some(())
    });
}

/// The terminal is the shell's, as it was before the client: main screen, cursor
/// shown, no raw mode, no mouse reporting, no bracketed paste.
fn given_back(sh: &Tui, when: &str) {
    sh.wait_for(&format!("the main screen {when}"), |s| {
        !s.alternate_screen() && !s.hide_cursor()
    });
    let none = LeftModes {
        raw: false,
        mouse: false,
        bracketed_paste: false,
        modify_other_keys: false,
    };
    assert_eq!(sh.modes_left(), none, "{when}: {}", sh.text());
}

/// How many times the shell said a job stopped.
fn stops_said(screen: &vt100::Screen) -> usize {
    screen.contents().matches("Stopped").count()
}

/// Brings the client back with `fg` and checks it redraws and takes keys; `typed` is
/// what it is given to show.
fn foreground_again(sh: &mut Tui, typed: &str) {
    sh.send("fg\r");
    sh.wait_for("the client's screen again", |s| {
        s.alternate_screen() && s.hide_cursor() && status_line(s).contains("demo (offline)")
    });
    let all = LeftModes {
        raw: true,
        mouse: true,
        bracketed_paste: true,
        modify_other_keys: true,
    };
    assert_eq!(sh.modes_left(), all, "the client's modes are back");
    sh.send(typed);
    sh.wait_text(typed);
    // Emptied again, so that Ctrl+D quits.
    sh.send(&"\x7f".repeat(typed.chars().count()));
    sh.wait_for("the composer emptied", |s| !s.contents().contains(typed));
}

/// Quits the client with Ctrl+D, checks the shell has a whole terminal again once the
/// client is gone (the screen is given back before raw mode is), and ends the shell.
fn quit_client_then_shell(mut sh: Tui, client: Pid) {
    sh.send("\x04");
    let stat = format!("/proc/{client}/stat");
    poll::until("the client gone", DEADLINE, || {
        (!Path::new(&stat).exists()).then_some(())
    });
    given_back(&sh, "after quitting");
    sh.send("exit\r");
    let (code, alternate, _) = sh.wait_exit();
    assert_eq!((code, alternate), (0, false), "{}", sh.text());
}

#[test]
fn sigtstp_from_outside_gives_the_terminal_back_and_fg_redraws_with_the_run_going_on() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let mut sh = shell(root);
    sh.send(&format!("{}\r", client_line(root)));
    sh.wait_text("Welcome to claw-tui");
    let client = client_of(&sh);
    // An answer streams on the slow demo model while the client is stopped.
    sh.send("hello there\r");
    sh.wait_text("offline demo model");

    kill(client, Signal::SIGTSTP).unwrap();
    wait_stopped(client);
    sh.wait_for("the shell saying the job stopped", |s| stops_said(s) == 1);
    given_back(&sh, "once stopped");

    // Continued in the background (what `bg` does): it stops again at its first try to
    // take the terminal, before changing anything.
    kill(client, Signal::SIGCONT).unwrap();
    sh.wait_for("the job stopped again", |s| stops_said(s) == 2);
    wait_stopped(client);
    sh.send("jobs -l\r");
    sh.wait_text("Stopped (tty output)");
    given_back(&sh, "stopped in the background");

    foreground_again(&mut sh, "typed after fg");
    // The run went on where it was: it finishes.
    sh.wait_for("the answer finished", |s| status_line(s).contains("idle"));
    quit_client_then_shell(sh, client);
}

#[test]
fn a_client_started_in_the_background_stops_before_touching_the_terminal() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let mut sh = shell(root);
    sh.send(&format!("{} &\r", client_line(root)));
    let client = client_of(&sh);
    wait_stopped(client);
    sh.wait_for("the shell saying the job stopped", |s| stops_said(s) == 1);
    sh.send("jobs -l\r");
    sh.wait_text("Stopped (tty output)");
    given_back(&sh, "started in the background");
    assert!(
        !sh.text().contains("Welcome"),
        "nothing drawn: {}",
        sh.text()
    );

    foreground_again(&mut sh, "typed after fg");
    quit_client_then_shell(sh, client);
}
