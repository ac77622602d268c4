//! Two and more clients on one `serve`d session: the same lines in the same order,
//! prompts and steering from either, approvals answered once, joining mid-stream.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::attach::{Served, streamed_text};
use crate::support::bin::Sandbox;
use serde_json::Value;

fn served(pace_ms: u64, config: &str) -> Served {
    let sandbox = Sandbox::new();
    sandbox.write_config(config);
    std::fs::write(sandbox.workspace().join("notes.txt"), "alpha\nbeta\n").unwrap();
    Served::start(sandbox, pace_ms, &["--provider", "demo"])
}

fn is(line: &Value, t: &str) -> bool {
    line["type"] == t
}

#[test]
fn both_clients_prompt_and_see_the_same_lines_in_the_same_order() {
    let served = served(2, "");
    let a = served.attach("first");
    let b = served.attach("second");
    // A learns that B came; from there on both get every line.
    a.until(|l| is(l, "client_attached") && l["client"]["name"] == "second");
    a.send(r#"{"type":"prompt","content":"hello from a"}"#);
    // B's prompt arrives while A's run streams: it waits as a follow-up.
    let mut seen_b = b.until(|l| is(l, "message_update"));
    b.send(r#"{"type":"prompt","content":"hello from b"}"#);
    // The run to its end (B's follow-up is delivered in it), on both clients.
    let both_runs = |client: &crate::support::attach::Client, mut seen: Vec<Value>| {
        if !seen.iter().any(|l| is(l, "agent_end")) {
            seen.extend(client.until(|l| is(l, "agent_end")));
        }
        seen
    };
    let seen_a = both_runs(&a, Vec::new());
    seen_b = both_runs(&b, seen_b);
    let queued = seen_b
        .iter()
        .find(|l| is(l, "response") && l["command"] == "prompt")
        .unwrap();
    assert_eq!(queued["queued"], "follow_up", "{queued}");
    // Responses go to the one who asked; everything else is common.
    let common = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| !is(l, "response"))
            .cloned()
            .collect()
    };
    let (ca, cb) = (common(&seen_a), common(&seen_b));
    assert_eq!(ca, cb, "the two clients saw different lines");
    let users: Vec<&str> = ca
        .iter()
        .filter(|l| is(l, "message_end") && l["message"]["role"] == "user")
        .filter_map(|l| l["message"]["content"].as_str())
        .collect();
    assert_eq!(users, ["hello from a", "hello from b"]);
}

#[test]
fn an_approval_goes_to_every_client_and_the_first_answer_wins() {
    let served = served(0, "[exec]\napproval = \"ask\"\n");
    let a = served.attach("first");
    let b = served.attach("second");
    a.until(|l| is(l, "client_attached"));
    a.send(r#"{"type":"prompt","content":"run touch approved-marker"}"#);
    let asked_a = a.until(|l| is(l, "approval_request")).pop().unwrap();
    let asked_b = b.until(|l| is(l, "approval_request")).pop().unwrap();
    assert_eq!(asked_a, asked_b);
    let id = asked_a["id"].as_str().unwrap().to_owned();
    b.send(&format!(
        r#"{{"type":"approve","id":"{id}","decision":"allow"}}"#
    ));
    assert_eq!(b.response("approve")["ok"], true);
    a.send(&format!(
        r#"{{"type":"approve","id":"{id}","decision":"deny"}}"#
    ));
    let mut lines = a.until(|l| is(l, "response") && l["command"] == "approve");
    let late = lines.pop().unwrap();
    assert_eq!(late["ok"], false, "{late}");
    assert!(
        late["error"].as_str().unwrap().contains("another client"),
        "{late}"
    );
    if !lines.iter().any(|l| is(l, "approval_resolved")) {
        lines = a.until(|l| is(l, "approval_resolved"));
    }
    let resolved = lines
        .into_iter()
        .find(|l| is(l, "approval_resolved"))
        .unwrap();
    assert_eq!(resolved["id"], id.as_str());
    assert_eq!(resolved["decision"], "allow");
    assert_eq!(resolved["by"]["name"], "second", "{resolved}");
    a.until(|l| is(l, "agent_end"));
    let marker = served.sandbox.workspace().join("approved-marker");
    assert!(marker.exists(), "the approved command did not run");
}

#[test]
fn an_approval_waiting_when_a_client_joins_is_in_its_snapshot() {
    let served = served(0, "[exec]\napproval = \"ask\"\n");
    let a = served.attach("first");
    a.send(r#"{"type":"prompt","content":"run touch late-marker"}"#);
    let asked = a.until(|l| is(l, "approval_request")).pop().unwrap();
    let late = crate::support::attach::Client::connect(&served.socket);
    assert_eq!(late.hello["state"], "waiting", "{}", late.hello);
    late.send(r#"{"type":"attach","name":"late"}"#);
    let snapshot = late.until(|l| is(l, "snapshot")).pop().unwrap();
    assert_eq!(snapshot["pending_approvals"][0]["id"], asked["id"]);
    late.send(&format!(
        r#"{{"type":"approve","id":"{}","decision":"allow"}}"#,
        asked["id"].as_str().unwrap()
    ));
    assert_eq!(late.response("approve")["ok"], true);
    a.until(|l| is(l, "agent_end"));
    assert!(served.sandbox.workspace().join("late-marker").exists());
}

#[test]
fn a_steer_from_the_second_client_reaches_the_run_at_the_next_tool_boundary() {
    let served = served(0, "");
    let a = served.attach("first");
    let b = served.attach("second");
    a.send(r#"{"type":"prompt","content":"run sleep 1"}"#);
    b.until(|l| is(l, "tool_execution_start"));
    b.send(r#"{"type":"steer","content":"read notes.txt"}"#);
    assert_eq!(b.response("steer")["queued"], "steering");
    let lines = a.until(|l| is(l, "agent_end"));
    let ended = lines
        .iter()
        .position(|l| is(l, "tool_execution_end"))
        .unwrap();
    let steered = lines
        .iter()
        .position(|l| is(l, "message_end") && l["message"]["content"] == "read notes.txt")
        .expect("the steering message was not delivered");
    assert!(steered > ended, "steering came before the tool ended");
    // And the steer was answered: notes.txt was read.
    assert!(
        lines
            .iter()
            .any(|l| is(l, "tool_execution_start") && l["tool_name"] == "read_file"),
        "{lines:#?}"
    );
}

#[test]
fn joining_mid_stream_shows_the_partial_answer_then_the_rest_once() {
    let served = served(15, "");
    let a = served.attach("first");
    a.send(r#"{"type":"prompt","content":"hello"}"#);
    a.until(|l| is(l, "message_update"));
    for round in 0..2 {
        // Join mid-stream (twice: the second after detaching the first time).
        let b = crate::support::attach::Client::connect(&served.socket);
        b.send(r#"{"type":"attach","name":"late"}"#);
        let snapshot = b.until(|l| is(l, "snapshot")).pop().unwrap();
        if round == 0 {
            assert_eq!(snapshot["state"]["is_streaming"], true);
        }
        let partial: String = snapshot["streaming_message"]["content"]
            .as_array()
            .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect())
            .unwrap_or_default();
        let rest = b.until(|l| is(l, "message_end") && l["message"]["role"] == "assistant");
        let answer = rest.last().unwrap()["message"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(
            format!("{partial}{}", streamed_text(&rest)),
            answer,
            "round {round}: the partial answer and the lines after it do not make the answer"
        );
        if round == 0 {
            b.close();
            a.send(r#"{"type":"prompt","content":"again"}"#);
            a.until(|l| is(l, "message_update"));
        }
    }
}

#[test]
fn the_session_stays_for_the_second_client_when_the_first_leaves() {
    let served = served(0, "");
    let a = served.attach("first");
    let b = served.attach("second");
    a.send(r#"{"type":"detach"}"#);
    assert_eq!(a.response("detach")["ok"], true);
    let gone = b.until(|l| is(l, "client_detached")).pop().unwrap();
    assert_eq!(gone["client"]["name"], "first");
    b.send(r#"{"type":"get_clients"}"#);
    let clients = b.response("get_clients");
    assert_eq!(clients["clients"].as_array().unwrap().len(), 1, "{clients}");
    b.send(r#"{"type":"prompt","content":"read notes.txt"}"#);
    let lines = b.until(|l| is(l, "agent_end"));
    assert!(lines.iter().any(|l| is(l, "tool_execution_end")));
    assert_eq!(served.stop(), 143);
}

#[test]
fn attach_lists_the_live_sessions_and_joins_one_by_prefix_for_a_script() {
    let served = served(0, "");
    let a = served.attach("first");
    a.send(r#"{"type":"prompt","content":"hello"}"#);
    a.until(|l| is(l, "agent_end"));
    let mut list = served.sandbox.command();
    list.arg("attach");
    let (code, stdout, stderr) = crate::support::bin::run(list);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(&served.id), "{stdout}");
    assert!(stdout.contains("1 attached"), "{stdout}");
    assert!(stdout.contains("hello"), "{stdout}");
    // A script joins by prefix with --mode rpc and prompts through stdin.
    let mut join = served.sandbox.command();
    join.args(["attach", &served.id[..8], "--mode", "rpc"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = join.spawn().unwrap();
    {
        use std::io::Write;
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(stdin, r#"{{"type":"get_state"}}"#).unwrap();
    }
    let response = a.until(|l| is(l, "client_attached")).pop().unwrap();
    assert_eq!(response["client"]["name"], "claw-tui attach --mode rpc");
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().next().unwrap().contains("\"hello\""), "{text}");
    assert!(text.contains("\"snapshot\""), "{text}");
    assert!(text.contains("\"command\":\"get_state\""), "{text}");
}

#[test]
fn a_served_session_stops_after_its_idle_timeout_once_nobody_is_attached() {
    let sandbox = Sandbox::new();
    let served = Served::start_with(
        sandbox,
        0,
        &["--provider", "demo"],
        &["--idle-timeout", "1"],
    );
    let a = served.attach("brief");
    a.send(r#"{"type":"prompt","content":"hello"}"#);
    a.until(|l| is(l, "agent_end"));
    a.close();
    let socket = served.socket.clone();
    assert_eq!(served.wait(), 0);
    assert!(!socket.exists(), "the socket outlived its server");
}

#[test]
fn the_cron_jobs_reach_every_client_and_a_late_one_in_its_snapshot() {
    let served = served(0, "");
    let a = served.attach("first");
    a.send(r#"{"type":"prompt","content":"every 3600 seconds check the build"}"#);
    // The job list is published by the scheduler, beside the run's events, so its line
    // may come before or after `agent_end`: wait for both, in either order.
    let (mut jobs, mut ended) = (None, false);
    while jobs.is_none() || !ended {
        let line = a
            .until(|l| is(l, "agent_end") || is(l, "cron_jobs"))
            .pop()
            .unwrap();
        if is(&line, "agent_end") {
            ended = true;
        } else if !line["jobs"].as_array().unwrap().is_empty() {
            jobs = Some(line["jobs"].clone());
        }
    }
    let jobs = jobs.unwrap();
    assert_eq!(jobs.as_array().unwrap().len(), 1, "{jobs}");
    let late = crate::support::attach::Client::connect(&served.socket);
    late.send(r#"{"type":"attach"}"#);
    let snapshot = late.until(|l| is(l, "snapshot")).pop().unwrap();
    assert_eq!(snapshot["cron_jobs"], jobs);
}
