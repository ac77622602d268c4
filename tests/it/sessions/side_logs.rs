//! The logs beside a session file (`<session>.requests.jsonl`, `<session>.events.jsonl`)
//! survive what the session file survives, through the real binary: a torn last line is
//! cut aside (and said) so the next record starts a line of its own; a full disk for a
//! turn holds their lines in memory and writes them, in order, once there is room; and
//! `inspect` and `replay` say what they cannot rebuild (an empty event log, turns or
//! requests missing) instead of showing less without a word.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::Sandbox;
use crate::support::fake_llm::FakeLlm;
use crate::support::fake_llm::anthropic::sonnet_cached_reply;
use crate::support::rpc::{Rpc, is_type};
use crate::support::tmpfs::Tmpfs;
use claw_tui::inspect::requests_path;
use claw_tui::replay::log::{LogLine, LogText};
use claw_tui::session::events_path;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;

fn config(server: &FakeLlm) -> String {
    format!(
        "provider = \"claude\"\n[providers.claude]\napi = \"anthropic\"\nbase_url = \"{}\"\n\
         model = \"claude-sonnet-4-5\"\napi_key = \"sk-ant-side-logs\"\n",
        server.url()
    )
}

/// A server with `count` answers, each with its own usage.
async fn server(count: u64) -> FakeLlm {
    FakeLlm::start(
        (0..count)
            .map(|i| sonnet_cached_reply(100 + i, 0, 0))
            .collect(),
    )
    .await
}

/// Sends each prompt and waits for its run to end.
fn prompts(rpc: &mut Rpc, texts: &[&str]) {
    for text in texts {
        rpc.send(&format!(r#"{{"type":"prompt","content":"{text}"}}"#));
        rpc.until_all(&[&|l| is_type(l, "agent_end"), &|l| is_type(l, "response")]);
    }
}

/// Closes the RPC session and checks it ended well; its stderr.
fn finish(rpc: Rpc) -> String {
    let exited = rpc.close_and_wait_all();
    assert_eq!(exited.code, 0, "{}", exited.stderr);
    exited.stderr
}

fn command(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox.command().args(args).output().unwrap()
}

/// Cuts the last `bytes` bytes off `path`: what a process stopped mid-write leaves.
fn tear(path: &Path, bytes: u64) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let len = file.metadata().unwrap().len();
    file.set_len(len - bytes).unwrap();
}

/// Every request the server received is rebuilt byte for byte by `inspect --raw`.
fn every_request_rebuilt(sandbox: &Sandbox, server: &FakeLlm) {
    let received = server.requests();
    for (n, request) in received.iter().enumerate() {
        let k = (n + 1).to_string();
        let out = command(sandbox, &["inspect", "--raw", "--request", &k]);
        assert!(
            out.status.success(),
            "request {k}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, request.raw.to_vec(), "request {k}");
    }
    let listed = command(sandbox, &["inspect", "--list"]);
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert_eq!(stdout.lines().count(), received.len() + 1, "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_torn_request_log_loses_only_its_torn_line() {
    let server = server(5).await;
    let config = config(&server);
    let sandbox = tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_with(0, &config);
        prompts(&mut rpc, &["one", "two", "three"]);
        let sandbox = rpc.sandbox.clone();
        finish(rpc);
        // The last line (request 3's response) loses its end.
        tear(&requests_path(&sandbox.only_session()), 10);
        let mut rpc = Rpc::start_in(sandbox.clone(), 0, &["-c"]);
        prompts(&mut rpc, &["four", "five"]);
        let stderr = finish(rpc);
        assert!(
            stderr.contains("requests.jsonl") && stderr.contains("cut off"),
            "the cut is said: {stderr}"
        );
        sandbox
    })
    .await
    .unwrap();
    every_request_rebuilt(&sandbox, &server);
    let session = sandbox.only_session();
    let damaged = std::fs::read_to_string(session.with_extension("requests.damaged")).unwrap();
    assert!(damaged.contains("\"response\""), "{damaged}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_for_a_turn_holds_the_side_logs_lines_until_there_is_room() {
    let server = server(4).await;
    let sandbox = Sandbox::new();
    let Some(disk) = Tmpfs::mount(&sandbox.dir.path().join("data"), 512 * 1024) else {
        return;
    };
    sandbox.write_config(&config(&server));
    let sandbox = tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_in(sandbox, 0, &[]);
        prompts(&mut rpc, &["one"]);
        disk.fill();
        // Larger than what a file's last page may still hold on the full disk.
        let two = format!("two {}", "x".repeat(20_000));
        rpc.send(&serde_json::json!({"type": "prompt", "content": two}).to_string());
        // The run ends, and both logs held their lines back (the event log's are
        // written at the turn's end) before there is room again.
        let both_held = |l: &serde_json::Value| {
            l["source"] == "side_log"
                && l["logs"].as_object().is_some_and(|logs| {
                    logs.keys().any(|k| k.ends_with(".events.jsonl"))
                        && logs.keys().any(|k| k.ends_with(".requests.jsonl"))
                })
        };
        rpc.until_all(&[
            &|l| is_type(l, "agent_end"),
            &|l| is_type(l, "response"),
            &both_held,
        ]);
        disk.free();
        prompts(&mut rpc, &["three", "four"]);
        let sandbox = rpc.sandbox.clone();
        let stderr = finish(rpc);
        for log in ["events.jsonl", "requests.jsonl"] {
            assert!(
                stderr.contains(&format!("{log} (No space left on device")),
                "the trouble of {log} is said: {stderr}"
            );
        }
        assert!(stderr.contains("written again"), "{stderr}");
        (sandbox, disk)
    })
    .await
    .unwrap();
    let (sandbox, disk) = sandbox;
    every_request_rebuilt(&sandbox, &server);
    let replayed = command(&sandbox, &["replay", "--mode", "json"]);
    assert!(replayed.status.success());
    let stdout = String::from_utf8_lossy(&replayed.stdout);
    let ends = stdout
        .lines()
        .filter(|l| l.contains("\"type\":\"agent_end\""))
        .count();
    assert_eq!(ends, 4, "every turn replays: {stdout}");
    let stderr = String::from_utf8_lossy(&replayed.stderr);
    assert!(!stderr.contains("damaged"), "{stderr}");
    drop(disk);
}

#[test]
fn a_torn_event_log_is_cut_aside_and_the_next_run_starts_a_line_of_its_own() {
    let mut rpc = Rpc::start(0);
    prompts(&mut rpc, &["list files"]);
    let sandbox: Arc<Sandbox> = rpc.sandbox.clone();
    finish(rpc);
    let log = events_path(&sandbox.only_session());
    tear(&log, 5);
    let mut rpc = Rpc::start_in(sandbox.clone(), 0, &["-c"]);
    prompts(&mut rpc, &["hello"]);
    let stderr = finish(rpc);
    assert!(
        stderr.contains("events.jsonl") && stderr.contains("cut off"),
        "{stderr}"
    );

    let text = LogText::read(&log).unwrap().unwrap();
    assert_eq!(text.damaged, 0, "nothing but the cut line is lost");
    let segments = text
        .parsed()
        .filter(|l| matches!(l, LogLine::Start(_)))
        .count();
    assert_eq!(segments, 2, "the second run's first line is whole");
    assert!(log.with_extension("damaged").is_file());
}

#[test]
fn an_empty_event_log_is_said_not_replayed_as_nothing() {
    let mut rpc = Rpc::start(0);
    prompts(&mut rpc, &["hello"]);
    let sandbox = rpc.sandbox.clone();
    finish(rpc);
    let session = sandbox.only_session();
    std::fs::write(events_path(&session), "").unwrap();

    let out = command(&sandbox, &["replay", "--mode", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("events.jsonl") && stderr.contains("is empty"),
        "{stderr}"
    );
    let timeline = claw_tui::replay::Timeline::load(&session).unwrap();
    assert!(
        timeline.notes.iter().any(|n| n.contains("is empty")),
        "{:?}",
        timeline.notes
    );
}

#[test]
fn replay_names_the_turns_its_event_log_lacks() {
    let mut rpc = Rpc::start(0);
    prompts(&mut rpc, &["one", "two", "three"]);
    let sandbox = rpc.sandbox.clone();
    finish(rpc);
    let session = sandbox.only_session();
    // Only the first turn's events stay (as when writing them failed for good).
    let log = events_path(&session);
    let text = std::fs::read_to_string(&log).unwrap();
    let second = text
        .match_indices("\"type\":\"turn_start\"")
        .nth(1)
        .map(|(at, _)| text[..at].rfind('\n').unwrap() + 1)
        .unwrap();
    std::fs::write(&log, &text[..second]).unwrap();

    let out = command(&sandbox, &["replay", "--mode", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("holds 1 of the session's 3 turns")
            && stderr.contains("2 turns could not be rebuilt"),
        "{stderr}"
    );
    let timeline = claw_tui::replay::Timeline::load(&session).unwrap();
    assert!(
        timeline
            .notes
            .iter()
            .any(|n| n.contains("2 turns could not be rebuilt")),
        "{:?}",
        timeline.notes
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn inspect_names_the_requests_and_turns_it_cannot_rebuild() {
    let server = server(2).await;
    let config = config(&server);
    let sandbox = tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_with(0, &config);
        prompts(&mut rpc, &["one", "two"]);
        let sandbox = rpc.sandbox.clone();
        finish(rpc);
        sandbox
    })
    .await
    .unwrap();
    let log = requests_path(&sandbox.only_session());
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Request 1 without its first piece, and nothing of request 2.
    let first_response = lines
        .iter()
        .position(|l| l.starts_with("{\"response\""))
        .unwrap();
    let kept: Vec<&str> = lines[1..=first_response].to_vec();
    std::fs::write(&log, kept.join("\n") + "\n").unwrap();

    let out = command(&sandbox, &["inspect", "--list"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("request 1 cannot be rebuilt"), "{stderr}");
    assert!(
        stderr.contains("the session has 2 turns") && stderr.contains("turn 2"),
        "{stderr}"
    );
}
