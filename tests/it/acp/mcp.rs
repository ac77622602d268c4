//! The MCP servers an editor passes with a session join the user's own: stdio and HTTP
//! servers start (the client's responsibility: no trust question), their tools go to
//! the model under the same policy (a user's server with `approval = "ask"` still asks),
//! and a server whose name the rules refuse is skipped with a warning.

use super::sandbox_for;
use crate::support::acp::drive;
use crate::support::fake_llm::anthropic::{reply, text_reply, tool_block};
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::mcp::{HttpFixture, fixture_bin, log_lines, stdio_table};
use agent_client_protocol::v1::schema::{
    McpServer, McpServerHttp, McpServerStdio, NewSessionRequest, StopReason,
};

fn call(id: &str, tool: &str, args: &str) -> Scripted {
    Scripted::sse(reply(vec![tool_block(0, id, tool, &[args])], "tool_use"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_editors_mcp_servers_join_the_users_under_the_same_policy() {
    let server = FakeLlm::start(vec![
        call("t1", "mcp__mine__echo", r#"{"text": "from mine"}"#),
        call("t2", "mcp__editor__echo", r#"{"text": "from the editor"}"#),
        call("t3", "mcp__web__add", r#"{"a": 2, "b": 3}"#),
        Scripted::sse(text_reply(&["done"])),
    ])
    .await;
    let logs = tempfile::tempdir().unwrap();
    let (mine_log, editor_log) = (logs.path().join("mine.log"), logs.path().join("editor.log"));
    let web = HttpFixture::start(&logs.path().join("web.log"));
    let sandbox = sandbox_for(
        &server,
        &stdio_table("mine", &mine_log, "approval = \"ask\""),
    );
    let ws = sandbox.workspace();
    let servers = vec![
        McpServer::Stdio(
            McpServerStdio::new("editor", fixture_bin())
                .args(vec!["--log".into(), editor_log.display().to_string()]),
        ),
        McpServer::Http(McpServerHttp::new("web", web.url.clone())),
        McpServer::Stdio(McpServerStdio::new("bad name", fixture_bin())),
    ];
    let done = drive(&sandbox, &[], &["allow-once"], async |s| {
        s.initialize().await;
        let new =
            s.cx.send_request(NewSessionRequest::new(ws.clone()).mcp_servers(servers))
                .block_task()
                .await
                .unwrap();
        let id = new.session_id.0.to_string();
        let answer = s.prompt(&id, "use the servers").await.unwrap();
        (
            answer.stop_reason,
            s.seen.permissions.lock().unwrap().clone(),
        )
    })
    .await;
    let (stop, asked) = done.value;
    assert_eq!(stop, StopReason::EndTurn, "{}", done.stderr);
    let requests = server.requests();
    let offered: Vec<String> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    for tool in ["mcp__mine__echo", "mcp__editor__echo", "mcp__web__add"] {
        assert!(offered.contains(&tool.to_owned()), "{tool}: {offered:?}");
    }
    assert!(!offered.iter().any(|t| t.contains("bad")), "{offered:?}");
    assert!(done.stderr.contains("bad name"), "{}", done.stderr);
    // The user's server asks; the editor's are the editor's responsibility.
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert!(
        asked[0]
            .tool_call
            .fields
            .title
            .as_deref()
            .unwrap()
            .starts_with("mine: echo"),
        "{asked:#?}"
    );
    assert!(
        log_lines(&mine_log)
            .iter()
            .any(|l| l.starts_with("call echo"))
    );
    assert!(
        log_lines(&editor_log)
            .iter()
            .any(|l| l.starts_with("call echo"))
    );
    let last = requests[3].body["messages"].to_string();
    for result in ["from mine", "from the editor", "5"] {
        assert!(last.contains(result), "{result}: {last}");
    }
    assert_eq!(done.code, 0, "{}", done.stderr);
}
