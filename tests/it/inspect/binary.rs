//! Through the real binary: `--mode rpc` `get_requests` / `get_request` during the
//! session, then `claw-tui inspect` (`--raw` byte-identical to what the fake server
//! received, the breakdown table, `--list`, `--turn`/`--request` numbering, clear
//! errors), and the key nowhere in the session's files; `record_requests = false`
//! writes no log.

use crate::support::bin::Sandbox;
use crate::support::fake_llm::FakeLlm;
use crate::support::fake_llm::anthropic::sonnet_cached_reply;
use crate::support::rpc::{Rpc, is_type};
use std::process::Output;
use std::sync::Arc;

const SECRET: &str = "sk-ant-SECRET-binary-777";

fn config(server: &FakeLlm, extra: &str) -> String {
    format!(
        "provider = \"claude\"\n[providers.claude]\napi = \"anthropic\"\nbase_url = \"{}\"\n\
         model = \"claude-sonnet-4-5\"\napi_key = \"{SECRET}\"\n{extra}",
        server.url()
    )
}

fn inspect(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox
        .command()
        .arg("inspect")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// Two prompts in RPC mode; returns the sandbox (the process has exited) and what the
/// RPC commands answered.
fn two_prompts(config: String) -> (Arc<Sandbox>, Option<(serde_json::Value, serde_json::Value)>) {
    let mut rpc = Rpc::start_with(0, &config);
    for text in ["one", "two"] {
        rpc.send(&format!(r#"{{"type":"prompt","content":"{text}"}}"#));
        rpc.until_all(&[&|l| is_type(l, "agent_end"), &|l| is_type(l, "response")]);
    }
    rpc.send(r#"{"type":"get_requests"}"#);
    let list = rpc.response("get_requests");
    let answers = if list["ok"] == true {
        rpc.send(r#"{"type":"get_request","index":2}"#);
        Some((list, rpc.response("get_request")))
    } else {
        None
    };
    let exited = rpc.close_and_wait_all();
    assert_eq!(exited.code, 0, "{}", exited.stderr);
    (exited.sandbox, answers)
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_and_the_inspect_command_show_what_was_sent() {
    let server = FakeLlm::start(vec![
        sonnet_cached_reply(100, 0, 5_000),
        sonnet_cached_reply(120, 5_000, 300),
    ])
    .await;
    let config = config(&server, "");
    let (sandbox, answers) = tokio::task::spawn_blocking(move || two_prompts(config))
        .await
        .unwrap();
    let received = server.requests();
    let (list, one) = answers.expect("get_requests answered");

    let rows = list["requests"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["index"], 2);
    assert_eq!(rows[1]["turn"], 2);
    assert_eq!(rows[1]["agent"], "main");
    assert_eq!(rows[1]["cached"], 5_000);
    assert_eq!(rows[1]["status"], "200");
    assert_eq!(
        one["raw"].as_str().unwrap().as_bytes(),
        &received[1].raw[..]
    );
    assert_eq!(one["breakdown"]["tokens"], 120 + 5_000 + 300);
    let headers = one["headers"].to_string();
    assert!(
        headers.contains("[redacted]") && !headers.contains(SECRET),
        "{headers}"
    );

    // --raw: byte for byte; by default the latest; --turn 1 its first; --request K.
    let latest = inspect(&sandbox, &["--raw"]);
    assert_eq!(latest.stdout, received[1].raw.to_vec());
    let first = inspect(&sandbox, &["--raw", "--turn", "1"]);
    assert_eq!(first.stdout, received[0].raw.to_vec());
    let second = inspect(&sandbox, &["--raw", "--request", "2"]);
    assert_eq!(second.stdout, received[1].raw.to_vec());
    let by_id = inspect(
        &sandbox,
        &["--raw", "--request", "1", &session_id(&sandbox)],
    );
    assert_eq!(by_id.stdout, received[0].raw.to_vec());

    let table = stdout(&inspect(&sandbox, &["--request", "2"]));
    assert!(table.contains("request 2 · turn 2 · main"), "{table}");
    assert!(
        table.contains("input: 5420 tokens (as reported)"),
        "{table}"
    );
    assert!(table.contains("system prompt"), "{table}");
    assert!(table.contains("user messages (2)"), "{table}");
    let listed = stdout(&inspect(&sandbox, &["--list"]));
    assert_eq!(listed.lines().count(), 3, "{listed}");

    let missing = inspect(&sandbox, &["--request", "3"]);
    assert_eq!(missing.status.code(), Some(2));
    let error = String::from_utf8_lossy(&missing.stderr);
    assert!(
        error.contains("there is no request 3 (there are 2)"),
        "{error}"
    );
    let no_turn = inspect(&sandbox, &["--turn", "9"]);
    assert!(String::from_utf8_lossy(&no_turn.stderr).contains("turn 9 sent no request"));

    // The key is in no file of the data dir.
    for file in walk(&sandbox.dir.path().join("data")) {
        let bytes = std::fs::read(&file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(SECRET), "the key is in {}", file.display());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn record_requests_false_writes_no_request_log() {
    let server = FakeLlm::start(vec![
        sonnet_cached_reply(100, 0, 0),
        sonnet_cached_reply(120, 0, 0),
    ])
    .await;
    let config = config(&server, "[session]\nrecord_requests = false\n");
    let (sandbox, answers) = tokio::task::spawn_blocking(move || two_prompts(config))
        .await
        .unwrap();
    assert!(answers.is_none(), "get_requests answers an error");
    let session = sandbox.only_session();
    assert!(!claw_tui::inspect::requests_path(&session).exists());
    let output = inspect(&sandbox, &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("has no recorded requests"));
}

fn session_id(sandbox: &Sandbox) -> String {
    let session = sandbox.only_session();
    let stem = session.file_stem().unwrap().to_string_lossy().into_owned();
    stem.rsplit('_').next().unwrap().to_owned()
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
