//! Arguments to MCP tools go through our JSON Schema step like every tool's: a call
//! that breaks the server's schema never reaches the server; a schema the validator
//! cannot compile reaches the model as the server wrote it, its calls go through
//! unvalidated, and the log file says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::binary::{call, calls_logged, config};
use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::text_reply;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::mcp::fixture_bin;
use serde_json::Value;

/// The tool messages the model got back in `body`, in order.
fn tool_messages(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn server_schemas_are_checked_unless_they_do_not_compile() {
    let server = FakeLlm::start(vec![
        call("mcp__fixture__echo", r#"{"txt": "no text field"}"#),
        call("mcp__fixture__add", r#"{"a": "two", "b": 2}"#),
        Scripted::sse(text_reply(&["Done."])),
    ])
    .await;
    let sb = Sandbox::new();
    let log = sb.dir.path().join("fixture.log");
    let table = format!(
        "[mcp.servers.fixture]\ncommand = {:?}\nargs = [\"--loose-schema\", \"--log\", {:?}]\n",
        fixture_bin().display().to_string(),
        log.display().to_string()
    );
    sb.write_config(&config(&server, &table));
    let mut cmd = sb.command();
    cmd.args(["-p", "call them"]);
    let (code, _stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "stderr: {stderr}");

    let requests = server.requests();
    let offered = requests[0].body["tools"].as_array().unwrap();
    let add = offered
        .iter()
        .find(|t| t["function"]["name"] == "mcp__fixture__add")
        .expect("add offered");
    assert_eq!(
        add["function"]["parameters"]["properties"]["a"]["type"], "numbr",
        "the model gets the schema as the server wrote it"
    );
    let answers = tool_messages(&requests[2].body);
    assert!(
        answers[0].contains("text"),
        "names what is wrong: {}",
        answers[0]
    );
    assert!(
        answers[1].starts_with("2\n"),
        "the unvalidated call reached the server: {}",
        answers[1]
    );
    let calls = calls_logged(&log);
    assert_eq!(calls.len(), 1, "only add reached the server: {calls:?}");
    assert!(calls[0].starts_with("call add "), "{calls:?}");

    let log_file = sb.dir.path().join("state/claw-tui/claw-tui.log");
    let logged = std::fs::read_to_string(&log_file).unwrap();
    assert!(
        logged.contains("mcp__fixture__add") && logged.contains("the schema does not compile"),
        "{logged}"
    );
}
