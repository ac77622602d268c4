//! Cron across processes, with two real `--mode rpc` processes on one data dir and
//! workspace: B started first and fires the workspace's jobs; A has its own session open
//! and adds a job. B sees the new job at its next look at `jobs.json` and parks each fire
//! in A's inbox; A, idle, picks it up and delivers it at once (not at its next resume),
//! and no slot is recorded as missed.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::Sandbox;
use crate::support::rpc::{Rpc, is_notification};
use nix::fcntl::{Flock, FlockArg};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Whether some process holds the scheduler lock (taking it here, if free, for a moment).
fn scheduler_lock_held(dir: &Path) -> bool {
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.join("scheduler.lock"))
    else {
        return false;
    };
    Flock::lock(file, FlockArg::LockExclusiveNonblock).is_err()
}

fn cron_result(lines: &[Value]) -> Option<String> {
    lines.iter().find_map(|l| {
        (l["type"] == "tool_execution_end" && l["tool_name"] == "cron")
            .then(|| l["result"]["content"].as_str().unwrap_or("").to_owned())
    })
}

#[test]
fn fires_of_a_job_from_another_session_reach_it_while_it_is_open() {
    let sandbox = Arc::new(Sandbox::new());
    let mut b = Rpc::start_in(sandbox.clone(), 0, &["--provider", "demo"]);
    b.send(r#"{"type":"get_state"}"#);
    b.until(|l| l["type"] == "response");
    // B's scheduler takes the lock as it starts: wait for that (checked every 10 ms,
    // with a failure bound), so that A is the one on standby.
    crate::support::poll::until(
        "B never took the scheduler lock",
        crate::support::DEADLINE,
        || scheduler_lock_held(&sandbox.cron_dir()).then_some(()),
    );

    let mut a = Rpc::start_in(sandbox.clone(), 0, &["--provider", "demo"]);
    a.send(r#"{"type":"prompt","content":"every 2 seconds ping from A"}"#);
    let lines = a.until(|l| l["type"] == "agent_end");
    let added = cron_result(&lines).expect("A's model called cron");
    assert!(added.starts_with("Added cron job"), "{added}");

    // B fires it (2 s after it was added) and A delivers it: a generous bound for both.
    a.until_within(Duration::from_secs(30), |l| {
        is_notification(l, "ping from A")
    });
    // And the next one: A keeps picking them up while it stays open.
    a.until_within(Duration::from_secs(30), |l| {
        is_notification(l, "ping from A")
    });

    // B delivered nothing to its own session.
    b.send(r#"{"type":"get_state"}"#);
    let state = b.until(|l| l["type"] == "response");
    let b_messages = state.last().unwrap()["state"]["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        b_messages.is_empty(),
        "B's own session stays untouched: {b_messages:#?}"
    );
    assert!(
        state.iter().all(|l| !is_notification(l, "ping from A")),
        "{state:#?}"
    );

    let (code, _) = a.close_and_wait();
    assert_eq!(code, 0);
    b.close_and_wait();
    let jobs: Value = serde_json::from_str(
        &std::fs::read_to_string(sandbox.cron_dir().join("jobs.json")).unwrap(),
    )
    .unwrap();
    let runs = jobs["jobs"][0]["runs"].as_array().unwrap();
    assert!(runs.len() >= 2, "{runs:#?}");
    assert!(
        runs.iter().all(|r| r["status"] == "fired"),
        "no slot missed while B ran: {runs:#?}"
    );
}
