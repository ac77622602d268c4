#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! No process a command starts outlives the claw-tui process that ran it: the real
//! binary runs `claw-tui -p "run ..."` on the demo model with a command that escapes
//! by every usual route (`setsid`, a double fork, `nohup`, ignoring SIGTERM), is killed
//! with SIGKILL or SIGTERM while the command runs, and every one of those processes must
//! be gone. With the pid namespace, without it (subreaper and Landlock), and with the
//! sandbox off.

use crate::support::bin::Sandbox;
use crate::support::exec::{assert_all_exit, escapers, exits, marker, wait_for_sleepers};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::process::Stdio;

async fn kill_claw_tui_during_a_command(signal: Signal, config: &str) {
    let sb = Sandbox::new();
    sb.write_config(config);
    let (escape, mut markers) = escapers();
    let foreground = marker();
    markers.push(foreground.clone());
    let mut claw = sb.command();
    claw.args([
        "--provider",
        "demo",
        "--no-session",
        "-p",
        &format!("run {escape} sleep {foreground}"),
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let mut claw = claw.spawn().unwrap();
    let pids = wait_for_sleepers(&markers).await;
    kill(Pid::from_raw(claw.id() as i32), signal).unwrap();
    assert!(exits(claw.id()).await, "claw-tui did not die of {signal}");
    let _ = claw.wait();
    assert_all_exit(&pids, &format!("after claw-tui got {signal} ({config:?})")).await;
}

#[tokio::test]
async fn sigkill_of_claw_tui_kills_the_command_and_all_it_started() {
    kill_claw_tui_during_a_command(Signal::SIGKILL, "").await;
}

#[tokio::test]
async fn sigterm_of_claw_tui_kills_the_command_and_all_it_started() {
    kill_claw_tui_during_a_command(Signal::SIGTERM, "").await;
}

#[tokio::test]
async fn without_a_pid_namespace_the_subreaper_still_kills_everything() {
    kill_claw_tui_during_a_command(Signal::SIGKILL, "[exec]\npid_namespace = false\n").await;
}

#[tokio::test]
async fn with_the_sandbox_off_processes_are_still_contained() {
    kill_claw_tui_during_a_command(Signal::SIGKILL, "[exec]\nsandbox = \"off\"\n").await;
}
