//! `--mode rpc`: the `compact` command (cancelled with `abort`, then done), its events
//! on stdout, and `context_usage` and `compaction` in `get_state`; `--mode json`: the
//! compaction events and `turn_end`'s `context_usage` among the event lines.

use crate::support::bin::Sandbox;
use crate::support::bin::run as run_bin;
use crate::support::compacting::two_big_files_on;
use crate::support::compacting::{call_reply, text_reply};
use crate::support::fake_llm::{FakeLlm, Scripted, Step};
use crate::support::rpc::Rpc;
use serde_json::{Value, json};

fn is(kind: &'static str) -> impl Fn(&Value) -> bool {
    move |line| line["type"] == kind
}

fn response(kind: &'static str) -> impl Fn(&Value) -> bool {
    move |line| line["type"] == "response" && line["command"] == kind
}

#[tokio::test(flavor = "multi_thread")]
async fn compact_over_rpc_can_be_cancelled_and_reports_in_get_state() {
    let server = FakeLlm::start(vec![
        text_reply("noted", 3_400),
        Scripted::sse(Vec::<String>::new()).then(Step::Hang),
        text_reply("## Goal\nRemember the long note (rpc-summary)", 500),
    ])
    .await;
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "provider = \"local\"\n\n[compaction]\nreserve_tokens = 2000\nkeep_recent_tokens = 2500\n\n\
         [providers.local]\napi = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"local-model\"\n\
         context_window = 8000\n",
        server.url()
    ));
    let mut rpc = Rpc::start_in(sandbox, 0, &[]);
    let note = format!("remember this: {}", "n".repeat(12_000));
    rpc.send(&json!({"type": "prompt", "content": note}).to_string());
    rpc.until(is("agent_end"));
    rpc.send(r#"{"type":"get_state"}"#);
    let state = rpc.until(response("get_state")).pop().unwrap()["state"].clone();
    assert_eq!(state["context_usage"]["window"], 8000);
    assert_eq!(state["context_usage"]["threshold"], 6000);
    assert_eq!(state["context_usage"]["tokens"], 3_410);
    assert_eq!(state["context_usage"]["percent"], 42);
    assert!(state["compaction"].is_null());

    rpc.send(r#"{"type":"compact","instructions":"keep the note's first words"}"#);
    // The response and the events are written by different tasks: in either order.
    let mut started = rpc.until(is("compaction_start"));
    assert_eq!(started.last().unwrap()["reason"], "manual");
    if !started.iter().any(response("compact")) {
        started.extend(rpc.until(response("compact")));
    }
    let answer = started.iter().find(|l| response("compact")(l)).unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    // The summary request is at the server (and hangs there) before it is cancelled.
    server.until_requests(2).await;
    rpc.send(r#"{"type":"abort"}"#);
    let ended = rpc.until(is("compaction_end")).pop().unwrap();
    assert_eq!(ended["aborted"], true);
    assert_eq!(ended["outcome"], "aborted");
    rpc.until(is("agent_end"));
    rpc.send(r#"{"type":"get_state"}"#);
    let state = rpc.until(response("get_state")).pop().unwrap()["state"].clone();
    assert!(state["compaction"].is_null());
    assert_eq!(state["message_count"], 2);

    rpc.send(r#"{"type":"compact"}"#);
    let ended = rpc.until(is("compaction_end")).pop().unwrap();
    assert_eq!(ended["aborted"], false);
    assert_eq!(ended["outcome"], "compacted");
    assert_eq!(ended["first_kept_message"], 1);
    assert!(ended["summary"].as_str().unwrap().contains("(rpc-summary)"));
    assert!(ended["tokens_after"].as_u64() < ended["tokens_before"].as_u64());
    rpc.until(is("agent_end"));
    rpc.send(r#"{"type":"get_state"}"#);
    let state = rpc.until(response("get_state")).pop().unwrap()["state"].clone();
    assert_eq!(state["compaction"]["first_kept_message"], 1);
    assert_eq!(
        state["context_usage"]["tokens"], ended["tokens_after"],
        "{state}"
    );
    // The whole history is still there.
    assert_eq!(state["message_count"], 2);
    let requests = server.requests();
    assert!(
        requests[1]
            .body
            .to_string()
            .contains("keep the note's first words")
    );
    let (code, _) = rpc.close_and_wait();
    assert_eq!(code, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn json_mode_writes_the_compaction_events_and_the_context_figure() {
    let server = FakeLlm::start(vec![
        call_reply("c1", "read_file", json!({"path": "a.txt"}), 600),
        call_reply("c2", "read_file", json!({"path": "b.txt"}), 4_500),
        text_reply("## Goal\nCompare a.txt and b.txt (json-summary)", 900),
        text_reply("done", 3_000),
    ])
    .await;
    let sandbox = two_big_files_on(&server);
    let mut cmd = sandbox.command();
    cmd.args(["--mode", "json", "-p", "compare a.txt and b.txt"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run_bin(cmd))
        .await
        .unwrap();
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let start = lines.iter().find(|l| is("compaction_start")(l)).unwrap();
    assert_eq!(start["reason"], "threshold");
    let end = lines.iter().find(|l| is("compaction_end")(l)).unwrap();
    assert_eq!(end["outcome"], "compacted");
    assert_eq!(end["aborted"], false);
    assert_eq!(end["tokens_before"], start["tokens_before"]);
    assert!(end["summary"].as_str().unwrap().contains("(json-summary)"));
    assert!(end["tokens_after"].as_u64() < end["tokens_before"].as_u64());
    let turn_ends: Vec<&Value> = lines.iter().filter(|l| is("turn_end")(l)).collect();
    assert_eq!(turn_ends.len(), 3);
    let last = &turn_ends[2]["context_usage"];
    assert_eq!(
        (last["window"].as_u64(), last["tokens"].as_u64()),
        (Some(8_000), Some(3_010))
    );
}
