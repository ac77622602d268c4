//! Signals from outside to the real client in a pseudo-terminal (`kill -INT`, `timeout
//! -s INT`, ...): each ends it the way SIGTERM does, mid-answer: the terminal given
//! back as it was (main screen, cursor shown, no mouse reporting, no raw mode), what
//! had streamed saved as aborted, and 128 + the signal's number as the exit code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::{Sandbox, session_messages};
use crate::support::pty::{LeftModes, Tui};
use nix::sys::signal::Signal;

/// Starts an answer on the slow demo model, signals the client mid-stream, and checks
/// how it ended.
fn stopped_mid_answer(signal: Signal) {
    let sandbox = Sandbox::new();
    let mut tui = Tui::demo(sandbox.dir.path(), "20", &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.send("hello there\r");
    tui.wait_text("offline demo model");
    // The probe sees the modes the client takes (so their absence later means something).
    assert_eq!(
        tui.modes_left(),
        LeftModes {
            raw: true,
            mouse: true,
            bracketed_paste: true,
            modify_other_keys: true,
        }
    );
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(tui.pid()), signal).unwrap();

    let (code, alternate, cursor_hidden) = tui.wait_exit();
    assert_eq!(
        (code, alternate, cursor_hidden),
        (128 + signal as u32, false, false),
        "{signal}: exit code, alternate screen, hidden cursor"
    );
    assert_eq!(
        tui.modes_left(),
        LeftModes {
            raw: false,
            mouse: false,
            bracketed_paste: false,
            modify_other_keys: false,
        },
        "{signal}: the terminal's modes are given back"
    );
    let messages = session_messages(&sandbox.only_session());
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "assistant", "{signal}: {messages:#?}");
    assert_eq!(last["stop_reason"], "aborted", "{signal}: {last}");
    let text = last["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("offline demo model"),
        "{signal}: what had streamed is kept: {text}"
    );
}

#[test]
fn sigint_from_outside_restores_the_terminal_saves_the_answer_and_exits_130() {
    stopped_mid_answer(Signal::SIGINT);
}

#[test]
fn sigquit_and_sigusr1_from_outside_end_the_client_as_sigterm_does() {
    stopped_mid_answer(Signal::SIGQUIT);
    stopped_mid_answer(Signal::SIGUSR1);
}

/// `kill -HUP` while the terminal is still there: it is given back too.
#[test]
fn sighup_with_the_terminal_still_open_gives_it_back_and_exits_129() {
    stopped_mid_answer(Signal::SIGHUP);
}
