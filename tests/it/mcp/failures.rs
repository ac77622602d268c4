//! MCP failures `-p` must not keep to itself, through the real binary and a server
//! written by hand (the fixture's `--raw` modes): a server that never answers
//! `initialize`, refuses it or exits during it is named on stderr (and with
//! `--require-mcp` the run does not start); a reply the transport cannot decode (bytes
//! that are not UTF-8, a line over the 16 MiB limit) fails its call at once with the
//! reason, and the server's next call still works. The client refuses `--require-mcp`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::binary::{call, config};
use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::text_reply;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::mcp::raw_table;
use serde_json::Value;

/// Runs `-p hello` (with `flags`) with the raw server `mode` as `raw`; returns the exit
/// code, stderr and how many requests reached the model.
async fn print_with(mode: &str, extra: &str, flags: &[&str]) -> (i32, String, usize) {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["Hi."]))]).await;
    let sb = Sandbox::new();
    sb.write_config(&config(&server, &raw_table("raw", mode, extra)));
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]).args(flags);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    (code, stderr, server.requests().len())
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_names_each_server_that_did_not_start_on_stderr() {
    for (mode, extra, why) in [
        (
            "silent-init",
            "startup_timeout_secs = 2",
            "not ready within 2 s (startup_timeout_secs)",
        ),
        ("error-init", "", "the fixture refuses to start"),
        ("exit-init", "", "fixture: giving up during the handshake"),
    ] {
        let (code, stderr, requests) = print_with(mode, extra, &[]).await;
        assert_eq!(code, 0, "{mode}: {stderr}");
        assert_eq!(requests, 1, "{mode}: the run went on without the server");
        let said = "claw-tui: warning: MCP server raw did not start: ";
        let line = stderr
            .lines()
            .find(|l| l.starts_with(said))
            .unwrap_or_else(|| panic!("{mode}: nothing said on stderr: {stderr}"));
        assert!(line.contains(why), "{mode}: {line}");
        assert!(line.ends_with("its tools are not in this run"), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn require_mcp_ends_the_run_before_it_starts_when_a_server_failed() {
    let (code, stderr, requests) = print_with("error-init", "", &["--require-mcp"]).await;
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        requests, 0,
        "the model was asked without the server's tools"
    );
    let line = stderr
        .lines()
        .find(|l| l.starts_with("claw-tui: error: MCP server raw did not start (--require-mcp): "))
        .unwrap_or_else(|| panic!("nothing said: {stderr}"));
    assert!(line.contains("the fixture refuses to start"), "{line}");
}

#[tokio::test(flavor = "multi_thread")]
async fn require_mcp_with_every_server_up_runs_as_usual() {
    let (code, stderr, requests) = print_with("bad-replies", "", &["--require-mcp"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(requests, 1);
    assert!(!stderr.contains("MCP server"), "{stderr}");
}

/// The tool message of the `n`th request (the answer to the call before it).
fn tool_message(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_the_transport_cannot_decode_fails_its_call_with_the_reason() {
    let server = FakeLlm::start(vec![
        call("mcp__raw__bad_utf8", "{}"),
        call("mcp__raw__huge", r#"{"mb": 20}"#),
        call("mcp__raw__echo", r#"{"text": "still here"}"#),
        Scripted::sse(text_reply(&["Done."])),
    ])
    .await;
    let sb = Sandbox::new();
    // A call that waited for its timeout would say it did not answer: one hour of it.
    sb.write_config(&config(
        &server,
        &raw_table("raw", "bad-replies", "tool_timeout_secs = 3600"),
    ));
    let mut cmd = sb.command();
    cmd.args(["-p", "call them"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done.");
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{stderr}");
    let bad = tool_message(&requests[1].body);
    assert!(
        bad.contains("its reply could not be read: it is not valid UTF-8"),
        "{bad}"
    );
    let huge = tool_message(&requests[2].body);
    assert!(
        huge.contains("its reply could not be read: it is longer than the 16 MiB"),
        "{huge}"
    );
    assert_eq!(tool_message(&requests[3].body), "still here");
}

#[test]
fn require_mcp_in_the_client_is_refused_with_where_it_applies() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.arg("--require-mcp");
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--require-mcp is for -p, --mode json and --mode rpc"),
        "{stderr}"
    );
}
