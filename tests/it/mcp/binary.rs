//! The MCP client through the real binary: `-p` against a fake OpenAI server calling an
//! MCP tool (the first request waits for the servers), `approval = "ask"` refused in
//! `-p`, the `.mcp.json` trust flow, `claw-tui mcp list`, and RPC `get_state`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text_reply, tool};
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::mcp::server_line;
use crate::support::mcp::{fixture_bin, log_lines, stdio_table};
use crate::support::rpc::Rpc;
use serde_json::{Value, json};
use std::path::Path;

/// A config using the fake server as an OpenAI-compatible provider, plus `rest`.
pub(super) fn config(server: &FakeLlm, rest: &str) -> String {
    format!(
        "provider = \"fake\"\n[providers.fake]\napi = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n\n{rest}",
        server.url()
    )
}

/// A reply calling `name` with `args`.
pub(super) fn call(name: &str, args: &str) -> Scripted {
    Scripted::sse([
        chunk(json!({"role": "assistant", "content": ""}), None),
        tool(Some(0), Some("call_1"), Some(name), args),
        finish("tool_calls"),
        done_marker(),
    ])
}

/// The tool message the model got back in `body`.
fn tool_message(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

pub(super) fn calls_logged(log: &Path) -> Vec<String> {
    log_lines(log)
        .into_iter()
        .filter(|l| l.starts_with("call "))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_waits_for_the_server_and_calls_its_tool() {
    let server = FakeLlm::start(vec![
        call("mcp__fixture__echo", r#"{"text": "from the binary"}"#),
        Scripted::sse(text_reply(&["The server said it."])),
    ])
    .await;
    let sb = Sandbox::new();
    let log = sb.dir.path().join("fixture.log");
    sb.write_config(&config(&server, &stdio_table("fixture", &log, "")));
    let mut cmd = sb.command();
    cmd.args(["-p", "echo via MCP"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(stdout.trim(), "The server said it.");
    assert!(stderr.contains("✓ mcp__fixture__echo"), "{stderr}");
    let requests = server.requests();
    // The first request already offers the server's tools: it waited for the server.
    assert!(
        requests[0]
            .tools_offered()
            .contains(&"mcp__fixture__echo".to_owned())
    );
    assert_eq!(tool_message(&requests[1].body), "from the binary");
    assert_eq!(calls_logged(&log).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_refuses_a_tool_that_needs_approval() {
    let server = FakeLlm::start(vec![
        call("mcp__fixture__echo", r#"{"text": "should not arrive"}"#),
        Scripted::sse(text_reply(&["It was refused."])),
    ])
    .await;
    let sb = Sandbox::new();
    let log = sb.dir.path().join("fixture.log");
    sb.write_config(&config(
        &server,
        &stdio_table("fixture", &log, "approval = \"ask\""),
    ));
    let mut cmd = sb.command();
    cmd.args(["-p", "echo via MCP"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(stderr.contains("✗ mcp__fixture__echo"), "{stderr}");
    let refusal = tool_message(&server.requests()[1].body);
    assert!(refusal.contains("needs the user's approval"), "{refusal}");
    assert_eq!(
        calls_logged(&log),
        Vec::<String>::new(),
        "the server never saw the call"
    );
}

/// A sandbox whose workspace has a `.mcp.json` naming the fixture as `proj`.
fn project_sandbox(server: &FakeLlm) -> (Sandbox, std::path::PathBuf) {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("project.log");
    sb.write_config(&config(server, ""));
    let project = json!({"mcpServers": {"proj": {
        "command": fixture_bin(),
        "args": ["--log", log],
    }}});
    std::fs::write(sb.workspace().join(".mcp.json"), project.to_string()).unwrap();
    (sb, log)
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_skips_untrusted_project_servers_and_says_how_to_start_them() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["No tools."]))]).await;
    let (sb, log) = project_sandbox(&server);
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "stderr: {stderr}");
    let warning = stderr
        .lines()
        .find(|l| l.contains("skipped MCP server \"proj\""))
        .unwrap_or_else(|| panic!("no warning naming the server: {stderr}"));
    assert!(warning.contains("--trust-project-mcp"), "{warning}");
    assert!(warning.contains(".mcp.json"), "{warning}");
    assert!(
        !server.requests()[0]
            .tools_offered()
            .iter()
            .any(|t| t.starts_with("mcp__"))
    );
    // The program the file names never ran.
    assert!(log_lines(&log).is_empty(), "{:?}", log_lines(&log));
}

#[tokio::test(flavor = "multi_thread")]
async fn trust_project_mcp_starts_them() {
    let server = FakeLlm::start(vec![
        call("mcp__proj__pid", "{}"),
        Scripted::sse(text_reply(&["Got its pid."])),
    ])
    .await;
    let (sb, log) = project_sandbox(&server);
    let mut cmd = sb.command();
    cmd.args(["--trust-project-mcp", "-p", "pid?"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(stdout.trim(), "Got its pid.");
    assert!(!stderr.contains("skipped MCP server"), "{stderr}");
    assert!(
        server.requests()[0]
            .tools_offered()
            .contains(&"mcp__proj__pid".to_owned())
    );
    assert!(log_lines(&log).iter().any(|l| l.starts_with("call pid")));
}

/// How a Node server that throws at start ends its stderr.
const CRASH: &str = "echo 'Error: missing DATABASE_URL' >&2; \
                     echo '    at Object.<anonymous> (/srv/index.js:12:11)' >&2; \
                     echo >&2; echo 'Node.js v22.3.0' >&2; exit 1";

#[test]
fn mcp_list_connects_and_prints_states_and_tools() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("fixture.log");
    sb.write_config(&format!(
        "{}\n[mcp.servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n\n[mcp.servers.off]\ncommand = \"x\"\nenabled = false\n\
         [mcp.servers.gone]\nurl = \"http://127.0.0.1:1/mcp\"\n\
         [mcp.servers.crashes]\ncommand = \"sh\"\nargs = [\"-c\", \"{CRASH}\"]\n",
        stdio_table("fixture", &log, "disabled_tools = [\"crash\"]")
    ));
    let mut cmd = sb.command();
    cmd.args(["mcp", "list"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(
        code, 1,
        "a failed server makes the exit code 1; stderr: {stderr}"
    );
    let line = |name: &str| server_line(&stdout, name);
    assert!(line("fixture").contains("ready · 9 tools"), "{stdout}");
    assert!(line("fixture").contains("mcp-fixture 1.0.0"), "{stdout}");
    assert!(
        line("broken").contains("failed: cannot start `/nonexistent/mcp-server`"),
        "{stdout}"
    );
    assert!(line("off").contains("disabled"), "{stdout}");
    // rmcp's words name its Rust types; ours name the cause.
    assert!(line("gone").contains("failed: "), "{stdout}");
    assert!(line("gone").contains("while trying to"), "{stdout}");
    assert!(!line("gone").contains("rmcp::"), "{stdout}");
    assert!(!line("gone").contains("Transport ["), "{stdout}");
    // A crash is quoted by its error line, not the runtime's banner after it.
    assert!(
        line("crashes").contains("its last words: Error: missing DATABASE_URL"),
        "{stdout}"
    );
    assert!(stdout.contains("  mcp__fixture__echo  (~"), "{stdout}");
    assert!(!stdout.contains("mcp__fixture__crash"), "{stdout}");
    // The listing stops what it started.
    assert!(log_lines(&log).iter().any(|l| l.starts_with("start ")));
}

#[test]
fn config_errors_name_the_file_line_and_key() {
    let sb = Sandbox::new();
    sb.write_config("[mcp.servers.a]\ncommand = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n");
    let mut cmd = sb.command();
    cmd.args(["mcp", "list"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains("config.toml, line 1"), "{stderr}");
    assert!(stderr.contains("not both"), "{stderr}");
    sb.write_config("[mcp.servers.\"bad name\"]\ncommand = \"x\"\n");
    let mut cmd = sb.command();
    cmd.args(["mcp", "list"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains("may only use letters"), "{stderr}");
}

#[test]
fn rpc_get_state_lists_the_servers() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fixture.log");
    let mut rpc = Rpc::start_with(0, &stdio_table("fixture", &log, ""));
    rpc.until(|l| l["type"] == "mcp_server_update" && l["server"]["state"]["state"] == "ready");
    rpc.send(r#"{"type": "get_state"}"#);
    let state = rpc.response("get_state");
    let servers = state["state"]["mcp_servers"].as_array().unwrap().clone();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0]["name"], "fixture");
    assert_eq!(servers[0]["state"]["state"], "ready");
    assert_eq!(servers[0]["tools"].as_array().unwrap().len(), 10);
    let (code, _) = rpc.close_and_wait();
    assert_eq!(code, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_server_gets_no_secrets_unless_its_config_names_them() {
    let call_three = Scripted::sse([
        chunk(json!({"role": "assistant", "content": ""}), None),
        tool(
            Some(0),
            Some("call_1"),
            Some("mcp__fixture__getenv"),
            r#"{"name": "MY_SERVICE_TOKEN"}"#,
        ),
        tool(
            Some(1),
            Some("call_2"),
            Some("mcp__fixture__getenv"),
            r#"{"name": "PLAIN_SETTING"}"#,
        ),
        tool(
            Some(2),
            Some("call_3"),
            Some("mcp__fixture__getenv"),
            r#"{"name": "GIVEN_TOKEN"}"#,
        ),
        finish("tool_calls"),
        done_marker(),
    ]);
    let server = FakeLlm::start(vec![call_three, Scripted::sse(text_reply(&["Checked."]))]).await;
    let sb = Sandbox::new();
    let log = sb.dir.path().join("fixture.log");
    sb.write_config(&config(
        &server,
        &stdio_table(
            "fixture",
            &log,
            "env = { GIVEN_TOKEN = \"${MY_SERVICE_TOKEN}\" }",
        ),
    ));
    let mut cmd = sb.command();
    cmd.args(["-p", "what does the server see?"])
        .env("MY_SERVICE_TOKEN", "s3cret-value")
        .env("PLAIN_SETTING", "visible");
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "stderr: {stderr}");
    let body = &server.requests()[1].body;
    let results: Vec<String> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(results, ["(unset)", "visible", "s3cret-value"]);
}
