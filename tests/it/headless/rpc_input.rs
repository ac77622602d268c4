//! RPC input through the real binary: invalid UTF-8 and oversize lines are bad lines
//! like any other (memory stays bounded), and the end of input finishes everything
//! queued first (or, with `--exit-on-eof`, drops it and says how much).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, session_messages};
use crate::support::rpc::Rpc;
use serde_json::Value;

fn is_type(line: &Value, t: &str) -> bool {
    line["type"] == t
}

fn error_response(rpc: &Rpc) -> String {
    let line = rpc.until(|l| is_type(l, "response")).pop().unwrap();
    assert_eq!(line["ok"], false, "{line}");
    line["error"].as_str().unwrap().to_owned()
}

#[test]
fn invalid_utf8_gets_an_error_response_and_the_process_goes_on() {
    let mut rpc = Rpc::start(0);
    rpc.send_bytes(b"{\"type\":\"prompt\",\"content\":\"caf\xe9\"}\n");
    let error = error_response(&rpc);
    assert!(error.contains("not valid UTF-8"), "{error}");
    assert!(
        error.contains("offset 31"),
        "the bad byte is located: {error}"
    );
    rpc.send(r#"{"type":"get_state"}"#);
    assert_eq!(rpc.response("get_state")["ok"], true);
    let (code, _) = rpc.close_and_wait();
    assert_eq!(code, 0);
}

fn vm_hwm_kb(pid: nix::unistd::Pid) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_200_mb_line_is_refused_without_being_held_in_memory() {
    let mut rpc = Rpc::start(0);
    rpc.send(r#"{"type":"get_state"}"#);
    rpc.response("get_state");
    let chunk = vec![b'a'; 1 << 20];
    rpc.send_bytes(br#"{"type":"prompt","content":""#);
    for _ in 0..200 {
        rpc.send_bytes(&chunk);
    }
    rpc.send_bytes(b"\"}\n");
    let error = error_response(&rpc);
    assert!(
        error.contains("209715230 bytes, longer than the limit of 16777216 bytes"),
        "{error}"
    );
    let peak_mb = vm_hwm_kb(rpc.pid()) / 1024;
    assert!(peak_mb < 100, "peak RSS {peak_mb} MB for a 200 MB line");
    // The next line is read as usual.
    rpc.send(r#"{"type":"get_state"}"#);
    assert_eq!(rpc.response("get_state")["ok"], true);
    let (code, _) = rpc.close_and_wait();
    assert_eq!(code, 0);
}

#[test]
fn the_line_limit_can_be_set_and_a_line_at_the_limit_is_read() {
    let mut rpc = Rpc::start_in(Sandbox::new(), 0, &["--max-line-bytes", "64"]);
    let at_limit = format!(r#"{{"type":"get_state","pad":"{}"}}"#, "x".repeat(35));
    assert_eq!(at_limit.len(), 64);
    rpc.send(&at_limit);
    assert_eq!(rpc.response("get_state")["ok"], true);
    rpc.send(&format!(
        r#"{{"type":"get_state","pad":"{}"}}"#,
        "x".repeat(36)
    ));
    let error = error_response(&rpc);
    assert!(
        error.contains("65 bytes, longer than the limit of 64 bytes"),
        "{error}"
    );
    let (code, _) = rpc.close_and_wait();
    assert_eq!(code, 0);
}

#[test]
fn a_burst_of_1000_prompts_then_eof_answers_every_one_in_order_before_exiting() {
    let mut rpc = Rpc::start(0);
    let mut burst = String::new();
    for i in 0..1000 {
        burst.push_str(&format!(
            "{{\"type\":\"prompt\",\"content\":\"prompt {i}\"}}\n"
        ));
    }
    rpc.send_bytes(burst.as_bytes());
    let exited = rpc.close_and_wait_all();
    assert_eq!(exited.code, 0, "{}", exited.stderr);
    let responses = exited
        .rest
        .iter()
        .filter(|l| is_type(l, "response"))
        .count();
    assert_eq!(responses, 1000);
    let ends: Vec<&Value> = exited
        .rest
        .iter()
        .filter(|l| is_type(l, "message_end"))
        .collect();
    let prompted: Vec<&str> = ends
        .iter()
        .filter(|l| l["message"]["role"] == "user")
        .map(|l| l["message"]["content"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = (0..1000).map(|i| format!("prompt {i}")).collect();
    assert_eq!(prompted, expected, "every prompt ran, in order");
    let answers = ends
        .iter()
        .filter(|l| l["message"]["role"] == "assistant" && l["message"]["stop_reason"] == "stop")
        .count();
    assert_eq!(answers, 1000, "and every one was answered and printed");
    assert!(is_type(exited.rest.last().unwrap(), "agent_end"));
    let recorded = session_messages(&exited.sandbox.only_session());
    assert_eq!(
        recorded.iter().filter(|m| m["role"] == "assistant").count(),
        1000,
        "all of it is in the session"
    );
}

#[test]
fn exit_on_eof_aborts_the_run_and_says_how_many_queued_prompts_it_dropped() {
    let mut rpc = Rpc::start_in(Sandbox::new(), 50, &["--exit-on-eof"]);
    rpc.send(r#"{"type":"prompt","content":"hello"}"#);
    rpc.until(|l| is_type(l, "message_update"));
    for i in 0..3 {
        rpc.send(&format!(r#"{{"type":"prompt","content":"later {i}"}}"#));
        assert_eq!(rpc.response("prompt")["queued"], "follow_up");
    }
    let exited = rpc.close_and_wait_all();
    assert_eq!(exited.code, 0, "{}", exited.stderr);
    assert!(
        exited
            .stderr
            .contains("aborted the running prompt; dropped 3 queued messages"),
        "{}",
        exited.stderr
    );
    let end = exited
        .rest
        .iter()
        .find(|l| is_type(l, "end_of_input"))
        .unwrap();
    assert_eq!(end["dropped"], 3);
    assert_eq!(end["aborted"], true);
    let users = exited
        .rest
        .iter()
        .filter(|l| is_type(l, "message_end") && l["message"]["role"] == "user")
        .count();
    assert_eq!(users, 0, "nothing queued ran");
}

#[test]
fn eof_while_a_tool_call_waits_for_approval_denies_it_and_exits() {
    let sandbox = Sandbox::new();
    sandbox.write_config("[exec]\napproval = \"ask\"\n");
    let mut rpc = Rpc::start_in(sandbox, 0, &[]);
    rpc.send(r#"{"type":"prompt","content":"run echo hi"}"#);
    rpc.until(|l| is_type(l, "approval_request"));
    // Nobody is left to answer: the call is denied and the run finishes.
    let exited = rpc.close_and_wait_all();
    assert_eq!(exited.code, 0, "{}", exited.stderr);
    let end = exited
        .rest
        .iter()
        .find(|l| is_type(l, "tool_execution_end"))
        .unwrap();
    assert_eq!(end["is_error"], true, "{end}");
    assert!(
        end["result"]["content"]
            .as_str()
            .unwrap()
            .contains("denied"),
        "{end}"
    );
    assert!(exited.rest.iter().any(|l| is_type(l, "agent_end")));
}
