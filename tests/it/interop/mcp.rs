//! Interoperability with the official MCP reference servers, which nobody on this
//! project wrote: `@modelcontextprotocol/server-everything` over stdio and streamable
//! HTTP, `@modelcontextprotocol/server-filesystem` and `server-memory` (pinned in
//! tests/interop-node), driven through the real runtime.

use super::reference_server;
use crate::mcp::setup::{McpEnv, offered};
use crate::support::mcp::MCP_DEADLINE;
use crate::support::{Reply, sent_results, tool_results};
use claw_tui::agent::AgentEvent;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

fn stdio_table(
    name: &str,
    node: &std::path::Path,
    script: &std::path::Path,
    args: &[&str],
) -> String {
    let mut all = vec![script.display().to_string()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    format!(
        "[mcp.servers.{name}]\ncommand = {:?}\nargs = {:?}\nstartup_timeout_secs = 30\n",
        node.display().to_string(),
        all
    )
}

/// Calls the everything server's tools: a round trip, a structured sum, an image, a
/// server-side error and a progress-reporting tool.
async fn everything_calls(table: String) {
    let env = McpEnv::with_tables(
        &table,
        &["everything"],
        vec![
            Reply::tool_calls(&[
                (
                    "e1",
                    "mcp__everything__echo",
                    json!({"message": "round trip"}),
                ),
                ("e2", "mcp__everything__get-sum", json!({"a": 19, "b": 23})),
                ("e3", "mcp__everything__get-tiny-image", json!({})),
                (
                    "e4",
                    "mcp__everything__get-resource-reference",
                    json!({"resourceType": "text", "resourceId": -1}),
                ),
                (
                    "e5",
                    "mcp__everything__trigger-long-running-operation",
                    json!({"duration": 0.3, "steps": 3}),
                ),
            ]),
            Reply::text(&["done"]),
        ],
    )
    .await;
    let events = env.run("exercise the everything server").await;
    let requests = env.provider.requests();
    let tools = offered(&requests[0]);
    assert!(
        tools.contains(&"mcp__everything__get-sum".to_owned()),
        "{tools:?}"
    );
    let results = sent_results(&requests[1]);
    assert!(!results[0].is_error);
    assert!(
        results[0].content.contains("round trip"),
        "{}",
        results[0].content
    );
    assert!(results[1].content.contains("42"), "{}", results[1].content);
    assert!(
        results[2]
            .content
            .contains("[image get-tiny-image-1: image/png, 20×20,"),
        "{}",
        results[2].content
    );
    assert_eq!(results[2].images.len(), 1, "an image block for the model");
    assert!(results[2].images[0].is_loaded());
    assert!(results[3].is_error, "{}", results[3].content);
    assert!(
        results[3].content.contains("resourceId"),
        "{}",
        results[3].content
    );
    assert!(!results[4].is_error, "{}", results[4].content);
    assert!(
        results[4]
            .content
            .contains("Long running operation completed"),
        "{}",
        results[4].content
    );
    let progress: Vec<f64> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial,
                ..
            } if tool_call_id == "e5" => partial["progress"].as_f64(),
            _ => None,
        })
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    let image = &tool_results(&events)[2].details["binary"][0];
    assert_eq!(image["mime_type"], "image/png");
    assert!(image["bytes"].as_u64().unwrap() > 0);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "interop: needs node and the MCP reference servers (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
async fn server_everything_over_stdio() {
    let (node, script) = reference_server("server-everything");
    everything_calls(stdio_table("everything", &node, &script, &["stdio"])).await;
}

/// server-everything's HTTP mode, on a port we found free; killed when dropped.
struct NodeHttp(Child);

impl Drop for NodeHttp {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "interop: needs node and the MCP reference servers (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
async fn server_everything_over_streamable_http() {
    let (node, script) = reference_server("server-everything");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(&node)
        .arg(&script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _server = NodeHttp(child);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("listening on port") {
                let _ = ready_tx.send(());
            }
        }
    });
    ready_rx
        .recv_timeout(MCP_DEADLINE)
        .expect("server-everything did not start listening");
    everything_calls(format!(
        "[mcp.servers.everything]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "interop: needs node and the MCP reference servers (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
async fn server_filesystem_reads_inside_and_refuses_outside() {
    let (node, script) = reference_server("server-filesystem");
    let allowed = tempfile::tempdir().unwrap();
    let root = allowed.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "line one\nline two\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().canonicalize().unwrap().join("secret.txt");
    std::fs::write(&secret, "do not read").unwrap();
    let root_arg = root.display().to_string();
    let env = McpEnv::with_tables(
        &stdio_table("fs", &node, &script, &[&root_arg]),
        &["fs"],
        vec![
            Reply::tool_calls(&[
                (
                    "f1",
                    "mcp__fs__read_text_file",
                    json!({"path": root.join("notes.txt")}),
                ),
                ("f2", "mcp__fs__read_text_file", json!({"path": secret})),
            ]),
            Reply::text(&["read"]),
        ],
    )
    .await;
    env.run("read the notes").await;
    let results = sent_results(&env.provider.requests()[1]);
    assert!(!results[0].is_error, "{}", results[0].content);
    assert!(
        results[0].content.starts_with("line one\nline two"),
        "{}",
        results[0].content
    );
    assert!(results[1].is_error);
    assert!(
        !results[1].content.contains("do not read"),
        "{}",
        results[1].content
    );
    assert!(
        results[1].content.contains("denied") || results[1].content.contains("outside"),
        "{}",
        results[1].content
    );
    env.stop().await;
}

/// The memory server answers each call with its result twice: as JSON text and as
/// `structuredContent` under a key. The model gets it once.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "interop: needs node and the MCP reference servers (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
async fn server_memory_results_are_sent_once() {
    let (node, script) = reference_server("server-memory");
    let store = tempfile::tempdir().unwrap();
    let file = store.path().join("memory.jsonl");
    let table = format!(
        "{}env = {{ MEMORY_FILE_PATH = {:?} }}\n",
        stdio_table("memory", &node, &script, &[]),
        file.display().to_string()
    );
    let entities = json!({"entities": [
        {"name": "Ada Lovelace", "entityType": "person", "observations": ["wrote the first program"]}
    ]});
    let env = McpEnv::with_tables(
        &table,
        &["memory"],
        vec![
            Reply::tool_calls(&[("m1", "mcp__memory__create_entities", entities)]),
            Reply::text(&["remembered"]),
        ],
    )
    .await;
    env.run("remember Ada").await;
    let results = sent_results(&env.provider.requests()[1]);
    let content = &results[0].content;
    assert!(!results[0].is_error, "{content}");
    assert_eq!(
        content.matches("wrote the first program").count(),
        1,
        "{content}"
    );
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("Ada Lovelace"),
        "the server stored the entity"
    );
    env.stop().await;
}
