//! `--mode rpc` through the real binary on the offline demo model.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::rpc::{Rpc, is_type};
use serde_json::{Value, json};

#[test]
fn prompt_runs_and_events_are_printed_bare() {
    let mut rpc = Rpc::start(0);
    rpc.send(r#"{"type":"prompt","content":"hello"}"#);
    // The response and the run's events come from different tasks, in either order.
    let lines = rpc.until_all(&[&|l| is_type(l, "agent_end"), &|l| is_type(l, "response")]);
    assert!(
        lines
            .iter()
            .any(|l| l == &json!({"type":"response","command":"prompt","ok":true}))
    );
    assert!(lines.iter().any(|l| is_type(l, "agent_start")));
    assert!(
        lines
            .iter()
            .any(|l| is_type(l, "message_update") && l["delta"]["kind"] == "text")
    );
    let (code, _) = rpc.close_and_wait();
    assert_eq!(code, 0);
}

#[test]
fn bad_lines_get_an_error_response_and_the_process_keeps_running() {
    let mut rpc = Rpc::start(0);
    rpc.send("this is not json");
    let bad = rpc.until(|l| is_type(l, "response")).pop().unwrap();
    assert_eq!(bad["ok"], false);
    assert!(bad["error"].as_str().unwrap().contains("invalid JSON"));
    rpc.send(r#"{"type":"frobnicate"}"#);
    let unknown = rpc.response("frobnicate");
    assert_eq!(unknown["ok"], false);
    assert!(
        unknown["error"]
            .as_str()
            .unwrap()
            .contains("unknown command type \"frobnicate\"")
    );
    rpc.send(r#"{"type":"prompt"}"#);
    let missing = rpc.response("prompt");
    assert_eq!(missing["ok"], false);
    assert!(
        missing["error"].as_str().unwrap().contains("content"),
        "{missing}"
    );
    rpc.send(r#"{"type":"get_state"}"#);
    let state = rpc.response("get_state");
    assert_eq!(state["ok"], true);
    assert_eq!(state["state"]["model"], "demo (offline)");
    assert_eq!(state["state"]["is_streaming"], false);
    let (code, _) = rpc.close_and_wait();
    assert_eq!(code, 0);
}

#[test]
fn steering_sent_while_idle_starts_a_run_with_it() {
    let mut rpc = Rpc::start(0);
    rpc.send(r#"{"type":"steer","content":"read notes.txt"}"#);
    let lines = rpc.until_all(&[&|l| is_type(l, "agent_end"), &|l| is_type(l, "response")]);
    let response = lines.iter().find(|l| is_type(l, "response")).unwrap();
    assert_eq!(response["ok"], true);
    let call = lines
        .iter()
        .find(|l| is_type(l, "tool_execution_start"))
        .expect("a tool call");
    assert_eq!(call["tool_name"], "read_file");
    assert_eq!(call["args"]["path"], "notes.txt");
    let result = lines
        .iter()
        .find(|l| is_type(l, "tool_execution_end"))
        .unwrap();
    assert_eq!(result["result"]["content"], "alpha\nbeta");
    rpc.close_and_wait();
}

#[test]
fn spawn_runs_a_subagent_whose_events_and_result_come_back() {
    let mut rpc = Rpc::start(0);
    rpc.send(r#"{"type":"prompt","content":"spawn list files"}"#);
    let mut lines = rpc.until(|l| {
        is_type(l, "message_end")
            && l["message"]["role"] == "notification"
            && l["message"]["content"]
                .as_str()
                .unwrap_or("")
                .contains("completed")
    });
    let note = lines.last().unwrap()["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    // Runtime events travel on their own channel: they may print after the notification.
    let nested_call =
        |l: &Value| is_type(l, "subagent_event") && l["event"]["type"] == "tool_execution_start";
    if !lines.iter().any(nested_call) {
        lines.extend(rpc.until(nested_call));
    }
    let nested = lines
        .iter()
        .find(|l| is_type(l, "subagent_event") && l["event"]["type"] == "tool_execution_start")
        .expect("the subagent's own tool call is reported, wrapped");
    assert_eq!(nested["event"]["tool_name"], "list_dir");
    assert_eq!(nested["subagent_id"], "subagent-1");
    let spawn_call = lines
        .iter()
        .find(|l| is_type(l, "tool_execution_start"))
        .unwrap();
    assert_eq!(spawn_call["tool_name"], "spawn");
    assert_eq!(nested["parent_tool_call_id"], spawn_call["tool_call_id"]);
    assert!(
        note.contains("[Subagent \"Task 1\" (subagent-1) completed]"),
        "{note}"
    );
    assert!(
        note.contains("notes.txt"),
        "the subagent's answer quotes list_dir: {note}"
    );
    rpc.close_and_wait();
}

#[test]
fn follow_up_is_delivered_when_the_run_would_stop_and_queue_updates_show_it() {
    let mut rpc = Rpc::start(0);
    rpc.send(r#"{"type":"follow_up","content":"second question"}"#);
    let lines = rpc.until(|l| is_type(l, "queue_update"));
    assert_eq!(
        lines.last().unwrap()["follow_up"],
        json!(["second question"])
    );
    rpc.send(r#"{"type":"prompt","content":"first question"}"#);
    let lines = rpc.until(|l| is_type(l, "agent_end"));
    let turns = lines.iter().filter(|l| is_type(l, "turn_start")).count();
    assert_eq!(turns, 2, "the follow-up gets its own turn in the same run");
    let end = lines.last().unwrap();
    let users: Vec<&str> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["first question", "second question"]);
    rpc.close_and_wait();
}

#[test]
fn prompt_while_busy_is_queued_as_follow_up_and_abort_stops_the_stream() {
    // A slow stream keeps the run busy until it is aborted.
    let mut rpc = Rpc::start(50);
    rpc.send(r#"{"type":"prompt","content":"hello"}"#);
    rpc.until(|l| is_type(l, "message_update"));
    rpc.send(r#"{"type":"prompt","content":"and then?"}"#);
    let queued = rpc.response("prompt");
    assert_eq!(queued["ok"], true);
    assert_eq!(queued["queued"], "follow_up");
    rpc.send(r#"{"type":"abort"}"#);
    let lines = rpc.until(|l| is_type(l, "agent_end"));
    let end = lines
        .iter()
        .find(|l| is_type(l, "message_end") && l["message"]["role"] == "assistant")
        .expect("the assistant message ends");
    assert_eq!(end["message"]["stop_reason"], "aborted");
    // The aborted run does not deliver the follow-up; it stays queued.
    rpc.send(r#"{"type":"get_state"}"#);
    let state = rpc.response("get_state");
    assert_eq!(state["state"]["follow_up"], json!(["and then?"]));
    assert_eq!(state["state"]["is_streaming"], false);
    rpc.close_and_wait();
}

#[test]
fn eof_waits_for_the_running_prompt_to_finish() {
    let mut rpc = Rpc::start(1);
    rpc.send(r#"{"type":"prompt","content":"hello"}"#);
    let (code, rest) = rpc.close_and_wait();
    assert_eq!(code, 0);
    assert!(
        rest.iter().any(|l| is_type(l, "agent_end")),
        "the run finished before exit"
    );
}

#[test]
fn set_queue_mode_is_acknowledged_and_validated() {
    let mut rpc = Rpc::start(0);
    rpc.send(r#"{"type":"set_queue_mode","queue":"steering","mode":"all"}"#);
    assert_eq!(rpc.response("set_queue_mode")["ok"], true);
    rpc.send(r#"{"type":"set_queue_mode","queue":"steering","mode":"sometimes"}"#);
    let bad = rpc.response("set_queue_mode");
    assert_eq!(bad["ok"], false);
    rpc.close_and_wait();
}

#[test]
fn a_cron_job_added_by_the_model_fires_into_the_main_agent() {
    let mut rpc = Rpc::start(0);
    rpc.send(r#"{"type":"prompt","content":"every 1 seconds check the build"}"#);
    let lines = rpc.until(|l| {
        is_type(l, "message_end")
            && l["message"]["role"] == "notification"
            && l["message"]["content"]
                .as_str()
                .unwrap_or("")
                .contains("fired]")
    });
    let added = lines
        .iter()
        .find(|l| is_type(l, "tool_execution_end") && l["tool_name"] == "cron")
        .expect("the cron tool ran");
    assert_eq!(added["is_error"], false, "{added}");
    let note = lines.last().unwrap()["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(note.contains("check the build"), "{note}");
    rpc.close_and_wait();
}
