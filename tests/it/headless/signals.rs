//! SIGTERM and SIGINT to each headless mode (the real binary, mid-stream): the partial
//! answer is saved as aborted, the session flushed, and the exit code is 143 / 130.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::DEADLINE;
use crate::support::bin::{Sandbox, session_lines, session_messages};
use crate::support::rpc::Rpc;
use claw_tui::session::streaming_path;
use nix::sys::signal::Signal;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Instant;

/// Waits (bounded) until the session's answer is streaming: deltas in its side file.
fn wait_mid_stream(sb: &Sandbox) -> PathBuf {
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < DEADLINE,
            "the answer never started streaming"
        );
        if let Some(file) = sb.session_files().into_iter().next()
            && std::fs::read_to_string(streaming_path(&file)).is_ok_and(|s| s.contains("deltas"))
        {
            return file;
        }
        std::thread::yield_now();
    }
}

fn spawn(sb: &Sandbox, args: &[&str]) -> Child {
    let mut cmd = sb.command();
    cmd.args(args)
        .env("CLAW_TUI_DEMO_PACE_MS", "50")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

fn kill(child: &Child, signal: Signal) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, signal).unwrap();
}

/// The last recorded message: the aborted answer, with what had streamed.
fn assert_saved_as_aborted(file: &std::path::Path) {
    let messages = session_messages(file);
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "assistant", "{messages:#?}");
    assert_eq!(last["stop_reason"], "aborted");
    let text = last["content"][0]["text"].as_str().unwrap_or_default();
    assert!(!text.is_empty(), "what had streamed is kept: {last}");
    assert!(
        !streaming_path(file).exists(),
        "the run ended properly: no side file is left"
    );
}

#[test]
fn sigterm_stops_print_mode_saves_the_partial_answer_and_exits_143() {
    let sb = Sandbox::new();
    let child = spawn(&sb, &["-p", "hello"]);
    let file = wait_mid_stream(&sb);
    kill(&child, Signal::SIGTERM);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("SIGTERM"), "{stderr}");
    assert_saved_as_aborted(&file);
}

#[test]
fn sigint_stops_json_mode_after_printing_the_abort_and_exits_130() {
    let sb = Sandbox::new();
    let child = spawn(&sb, &["--mode", "json", "-p", "hello"]);
    let file = wait_mid_stream(&sb);
    kill(&child, Signal::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = events.last().unwrap();
    assert_eq!(last["type"], "agent_end", "the run's end is printed");
    let end = events
        .iter()
        .rfind(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(end["message"]["stop_reason"], "aborted");
    assert_saved_as_aborted(&file);
}

#[test]
fn sigterm_stops_rpc_mode_keeps_the_queue_in_the_session_and_exits_143() {
    let mut rpc = Rpc::start_in(Sandbox::new(), 50, &[]);
    rpc.send(r#"{"type":"prompt","content":"hello"}"#);
    rpc.until(|l| l["type"] == "message_update");
    rpc.send(r#"{"type":"prompt","content":"and later this"}"#);
    assert_eq!(rpc.response("prompt")["queued"], "follow_up");
    let file = wait_mid_stream(&rpc.sandbox);
    rpc.signal(Signal::SIGTERM);
    // Stdin stays open: the signal alone ends the process.
    let exited = rpc.wait();
    assert_eq!(exited.code, 143, "{}", exited.stderr);
    assert!(
        exited.stderr.contains("SIGTERM") && exited.stderr.contains("1 queued message stay"),
        "{}",
        exited.stderr
    );
    assert!(
        exited.rest.iter().any(|l| l["type"] == "agent_end"),
        "the aborted run's end is printed"
    );
    assert_saved_as_aborted(&file);
    let queue = session_lines(&file)
        .into_iter()
        .rfind(|l| l["type"] == "queue")
        .unwrap();
    assert_eq!(
        queue["follow_up"],
        serde_json::json!(["and later this"]),
        "the queued prompt waits for the next resume"
    );
}

#[test]
fn sighup_stops_print_mode_saves_the_partial_answer_and_exits_129() {
    let sb = Sandbox::new();
    let child = spawn(&sb, &["-p", "hello"]);
    let file = wait_mid_stream(&sb);
    kill(&child, Signal::SIGHUP);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(129), "{stderr}");
    assert!(stderr.contains("SIGHUP"), "{stderr}");
    assert_saved_as_aborted(&file);
}

#[test]
fn sighup_stops_json_mode_after_printing_the_abort_and_exits_129() {
    let sb = Sandbox::new();
    let child = spawn(&sb, &["--mode", "json", "-p", "hello"]);
    let file = wait_mid_stream(&sb);
    kill(&child, Signal::SIGHUP);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(129),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "agent_end", "the run's end is printed");
    assert_saved_as_aborted(&file);
}

#[test]
fn sighup_stops_rpc_mode_and_exits_129() {
    let mut rpc = Rpc::start_in(Sandbox::new(), 50, &[]);
    rpc.send(r#"{"type":"prompt","content":"hello"}"#);
    rpc.until(|l| l["type"] == "message_update");
    let file = wait_mid_stream(&rpc.sandbox);
    rpc.signal(Signal::SIGHUP);
    let exited = rpc.wait();
    assert_eq!(exited.code, 129, "{}", exited.stderr);
    assert!(exited.stderr.contains("SIGHUP"), "{}", exited.stderr);
    assert_saved_as_aborted(&file);
}

/// Every other signal whose default action ends the process: each stops the run the
/// same way, with 128 + its number.
#[test]
fn every_other_ending_signal_stops_print_mode_the_same_way() {
    for signal in [
        Signal::SIGQUIT,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
        Signal::SIGALRM,
        Signal::SIGVTALRM,
        Signal::SIGXCPU,
        Signal::SIGPWR,
    ] {
        let sb = Sandbox::new();
        let child = spawn(&sb, &["-p", "hello"]);
        let file = wait_mid_stream(&sb);
        kill(&child, signal);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(128 + signal as i32),
            "{signal}: {stderr}"
        );
        assert!(stderr.contains(signal.as_str()), "{signal}: {stderr}");
        assert_saved_as_aborted(&file);
    }
}
