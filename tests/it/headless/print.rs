//! `-p` and `--mode json` through the real binary on the offline demo model.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run};
use serde_json::Value;
use std::io::Write;
use std::process::Stdio;

#[test]
fn print_mode_prints_the_final_answer_and_exits_0() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["-p", "hello there"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(stdout.contains("offline demo model"), "{stdout}");
    assert!(stdout.contains("list files"), "{stdout}");
    assert!(
        stdout.contains(&sb.config_path().display().to_string()),
        "{stdout}"
    );
}

#[test]
fn print_mode_reads_the_prompt_from_stdin_with_a_dash() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["-p", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"what can you do?\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("offline demo model"));
}

#[test]
fn print_without_a_prompt_is_a_usage_error() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.arg("-p");
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(stderr.contains("need a prompt"), "{stderr}");
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["--frobnicate", "-p", "x"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn broken_config_file_names_the_file_line_and_key_and_exits_2() {
    let sb = Sandbox::new();
    sb.write_config("provider = \"demo\"\n\n[agent]\nmax_turns = \"fifty\"\n");
    let mut cmd = sb.command();
    cmd.args(["-p", "hi"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains(&sb.config_path().display().to_string()),
        "{stderr}"
    );
    assert!(stderr.contains("line 4"), "{stderr}");
    assert!(stderr.contains("max_turns"), "{stderr}");
}

#[test]
fn misspelled_config_key_is_reported() {
    let sb = Sandbox::new();
    sb.write_config("[agent]\nmax_turn = 5\n");
    let mut cmd = sb.command();
    cmd.args(["-p", "hi"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("max_turn") && stderr.contains("line 2"),
        "{stderr}"
    );
}

#[test]
fn unknown_provider_is_a_usage_error_that_says_what_to_do() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["--provider", "nope", "-p", "hi"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown provider \"nope\""), "{stderr}");
    assert!(stderr.contains("[providers.nope]"), "{stderr}");
}

#[test]
fn json_mode_prints_every_event_as_one_json_line() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["--mode", "json", "-p", "hello"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"agent_start"));
    assert_eq!(types.last(), Some(&"agent_end"));
    assert!(types.contains(&"turn_start") && types.contains(&"turn_end"));
    assert!(types.iter().filter(|t| **t == "message_update").count() > 10);
    let end = events.last().unwrap();
    let roles: Vec<&str> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(end["messages"][1]["model"], "demo (offline)");
}

#[test]
fn print_mode_reports_tool_calls_on_stderr() {
    let sb = Sandbox::new();
    std::fs::write(sb.workspace().join("hello.txt"), "hi from the file\n").unwrap();
    let mut cmd = sb.command();
    cmd.args(["-p", "read hello.txt"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("hi from the file"), "{stdout}");
    assert_eq!(stderr.trim(), "✓ read_file hello.txt");
}

#[test]
fn failing_tool_call_is_one_line_with_the_error() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["-p", "read ../outside.txt"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "the run itself succeeds: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("✗ read_file ../outside.txt — "),
        "{stderr}"
    );
    assert!(stdout.contains("reported an error"), "{stdout}");
}

#[test]
fn hitting_the_turn_limit_exits_1_with_the_reason_on_stderr() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["--max-turns", "1", "-p", "list files"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 1);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("turn limit"), "{stderr}");
}

#[test]
fn print_mode_waits_for_a_spawned_subagent_and_prints_the_final_answer() {
    let sb = Sandbox::new();
    std::fs::write(sb.workspace().join("marker.txt"), "x").unwrap();
    let mut cmd = sb.command();
    cmd.args(["-p", "spawn list files"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    // The demo's answer to the report relays it in one line.
    assert_eq!(
        stdout.trim(),
        "Task 1 (subagent-1) completed: The workspace holds 1 file: marker.txt.",
        "{stdout}"
    );
    assert!(stderr.contains("✓ spawn list files"), "{stderr}");
}
