//! The fixture server through the real runtime, over stdio and over streamable HTTP:
//! calls and their results, progress, abort (the server sees `notifications/cancelled`),
//! `list_changed`, and a crash with its restart.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::setup::{McpEnv, Via, offered};
use crate::support::mcp::{HttpFixture, MCP_DEADLINE, is_ready, wait_for_log, wait_for_server};
use crate::support::{Reply, sent_results, tool_results, until};
use claw_tui::agent::AgentEvent;
use claw_tui::mcp::McpServerState;
use serde_json::json;

async fn calls_and_results(via: Via) {
    let env = McpEnv::start(
        via,
        "",
        "",
        vec![
            Reply::tool_calls(&[
                (
                    "c1",
                    "mcp__fixture__echo",
                    json!({"text": "hello over MCP"}),
                ),
                ("c2", "mcp__fixture__add", json!({"a": 2, "b": 3})),
                ("c3", "mcp__fixture__fail", json!({})),
                ("c4", "mcp__fixture__image", json!({})),
                ("c5", "mcp__fixture__progress", json!({"steps": 3})),
            ]),
            Reply::text(&["All done."]),
        ],
    )
    .await;
    let events = env.run("use the fixture").await;
    let requests = env.provider.requests();
    let tools = offered(&requests[0]);
    for name in [
        "mcp__fixture__echo",
        "mcp__fixture__slow",
        "mcp__fixture__toggle",
    ] {
        assert!(tools.contains(&name.to_owned()), "{name} not in {tools:?}");
    }
    let echo = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "mcp__fixture__echo")
        .unwrap();
    assert_eq!(echo.description, "Returns the text it is given.");
    assert_eq!(echo.parameters["required"], json!(["text"]));
    let results = sent_results(&requests[1]);
    assert_eq!(results.len(), 5);
    assert_eq!(results[0].content, "hello over MCP");
    assert!(!results[0].is_error);
    // The text part, then the structured value it does not already carry.
    assert_eq!(results[1].content, "5\n{\n  \"sum\": 5.0\n}");
    assert!(results[2].is_error);
    assert_eq!(results[2].content, "it failed on purpose");
    // The image goes to the model as an image block, named by a line of text.
    assert_eq!(results[3].content, "[image image-1: image/png, 1×1, 70 B]");
    assert_eq!(results[3].images.len(), 1);
    let image = &results[3].images[0];
    assert_eq!(
        (image.mime.as_str(), image.width, image.height),
        ("image/png", 1, 1)
    );
    assert!(image.is_loaded(), "the request carries the bytes");
    assert_eq!(results[4].content, "done after 3 steps");
    let progress: Vec<serde_json::Value> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial,
                ..
            } if tool_call_id == "c5" => Some(partial.clone()),
            _ => None,
        })
        .collect();
    // Every step, in order, although the server sends them right before its result.
    let expected: Vec<serde_json::Value> = (1..=3)
        .map(|step| {
            json!({"progress": f64::from(step), "total": 3.0, "message": format!("step {step} of 3")})
        })
        .collect();
    assert_eq!(progress, expected);
    let details = &tool_results(&events)[3].details;
    assert_eq!(details["binary"][0]["mime_type"], "image/png");
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_results_and_progress_over_stdio() {
    calls_and_results(Via::Stdio).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_results_and_progress_over_http() {
    calls_and_results(Via::Http).await;
}

async fn abort_cancels_the_call_on_the_server(via: Via) {
    let env = McpEnv::start(
        via,
        "",
        "",
        vec![Reply::tool_calls(&[(
            "slow-1",
            "mcp__fixture__slow",
            json!({}),
        )])],
    )
    .await;
    let mut rx = env.main.agent.subscribe(None);
    env.main.supervisor.submit("run the slow tool".to_owned());
    until(&mut rx, |e| {
        matches!(e, AgentEvent::ToolExecutionStart { .. })
    })
    .await;
    // The server has the request before the abort, so the cancellation has a target.
    wait_for_log(&env.log(), "call slow").await;
    env.main.supervisor.abort();
    let events = until(&mut rx, |e| matches!(e, AgentEvent::AgentEnd { .. })).await;
    let result = tool_results(&events)
        .into_iter()
        .find(|r| r.tool_call_id == "slow-1")
        .unwrap();
    assert!(result.is_error);
    assert!(result.content.starts_with("Aborted"), "{}", result.content);
    let lines = wait_for_log(&env.log(), "cancelled").await;
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("cancelled") && l.contains("cancelled by the user")),
        "{lines:?}"
    );
    wait_for_log(&env.log(), "stopped by cancellation").await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_sends_cancelled_over_stdio() {
    abort_cancels_the_call_on_the_server(Via::Stdio).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_sends_cancelled_over_http() {
    abort_cancels_the_call_on_the_server(Via::Http).await;
}

async fn list_changed_refreshes_the_tools(via: Via) {
    let mut env = McpEnv::start(
        via,
        "",
        "",
        vec![
            Reply::tool_calls(&[("t1", "mcp__fixture__toggle", json!({}))]),
            Reply::text(&["Toggled."]),
            Reply::tool_calls(&[("e1", "mcp__fixture__extra", json!({}))]),
            Reply::text(&["Ran it."]),
        ],
    )
    .await;
    env.run("toggle").await;
    let server = wait_for_server(&mut env.main.events, "fixture", |s| {
        s.tools.iter().any(|t| t.name == "mcp__fixture__extra")
    })
    .await;
    assert_eq!(server.state, McpServerState::Ready);
    let events = env.run("now use extra").await;
    let requests = env.provider.requests();
    assert!(!offered(&requests[0]).contains(&"mcp__fixture__extra".to_owned()));
    assert!(offered(&requests[2]).contains(&"mcp__fixture__extra".to_owned()));
    assert_eq!(tool_results(&events)[0].content, "extra ran");
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn list_changed_over_stdio() {
    list_changed_refreshes_the_tools(Via::Stdio).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn list_changed_over_http() {
    list_changed_refreshes_the_tools(Via::Http).await;
}

/// The `pid` tool's answer in a run's results.
fn pid_of(events: &[AgentEvent]) -> String {
    tool_results(events)
        .into_iter()
        .find(|r| r.tool_call_id.starts_with("pid"))
        .unwrap()
        .content
}

async fn crash_and_restart(via: Via) {
    let mut env = McpEnv::start(
        via,
        "",
        "",
        vec![
            Reply::tool_calls(&[("pid-1", "mcp__fixture__pid", json!({}))]),
            Reply::text(&["ok"]),
            Reply::tool_calls(&[("crash-1", "mcp__fixture__crash", json!({}))]),
            Reply::text(&["it crashed"]),
            Reply::tool_calls(&[("pid-2", "mcp__fixture__pid", json!({}))]),
            Reply::text(&["back"]),
        ],
    )
    .await;
    let first_pid = pid_of(&env.run("pid").await);
    let events = env.run("crash it").await;
    let crash = tool_results(&events).remove(0);
    assert!(crash.is_error);
    assert!(
        crash
            .content
            .contains("MCP server \"fixture\" stopped during the call to crash"),
        "{}",
        crash.content
    );
    wait_for_server(&mut env.main.events, "fixture", |s| {
        matches!(
            s.state,
            McpServerState::Restarting { .. } | McpServerState::Failed { .. }
        )
    })
    .await;
    let _restarted_http = env.http.as_mut().map(|http| {
        // The HTTP server is its own process: bring it back where it was.
        http.wait_exit();
        HttpFixture::start_at(&http.addr.clone(), &env.logs.path().join("fixture.log"))
    });
    let back = tokio::time::timeout(
        MCP_DEADLINE,
        wait_for_server(&mut env.main.events, "fixture", is_ready),
    )
    .await
    .expect("no restart");
    assert_eq!(back.tools.len(), 10);
    let second_pid = pid_of(&env.run("pid again").await);
    assert_ne!(first_pid, second_pid, "a new server process answers");
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn crash_and_restart_over_stdio() {
    crash_and_restart(Via::Stdio).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn crash_and_restart_over_http() {
    crash_and_restart(Via::Http).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_call_times_out_with_a_clear_error() {
    let env = McpEnv::start(
        Via::Stdio,
        "tool_timeout_secs = 1",
        "",
        vec![
            Reply::tool_calls(&[("slow-1", "mcp__fixture__slow", json!({}))]),
            Reply::text(&["gave up"]),
        ],
    )
    .await;
    let events = env.run("slow").await;
    let result = tool_results(&events).remove(0);
    assert!(result.is_error);
    assert!(
        result
            .content
            .contains("did not answer the call to slow within 1 s"),
        "{}",
        result.content
    );
    let lines = wait_for_log(&env.log(), "reason timeout").await;
    assert!(
        lines.iter().any(|l| l.starts_with("cancelled")),
        "{lines:?}"
    );
    env.stop().await;
}
