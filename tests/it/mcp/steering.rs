//! A steering message queued while an MCP call runs skips the calls after it, as for
//! the built-in tools: the server never sees them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::mcp::{is_ready, log_lines, stdio_table, wait_for_server};
use crate::support::runtime::settings;
use crate::support::{Reply, ScriptedProvider, tool_results, until_agent_end};
use claw_tui::agent::Agent;
use claw_tui::agent::SKIPPED_FOR_STEERING;
use claw_tui::setup::start_runtime_with;
use claw_tui::tools::exec::{ApprovalDecision, Approver};
use claw_tui::tools::message::MessageSender;
use serde_json::json;
use std::sync::{Arc, OnceLock};

#[tokio::test(flavor = "multi_thread")]
async fn steering_skips_the_mcp_calls_after_the_running_one() {
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("fixture.log");
    let config = format!(
        "[agent]\ntool_execution = \"sequential\"\n\n{}",
        stdio_table("fixture", &log, "approval = \"ask\"")
    );
    let (_home, settings) = settings(&config);
    // The user steers while the first call waits for approval, then lets it run.
    let agent: Arc<OnceLock<Agent>> = Arc::default();
    let steer_from = agent.clone();
    let approver = Approver::Ask(Arc::new(move |_request| {
        if let Some(agent) = steer_from.get() {
            agent.steer("stop, do something else");
        }
        Box::pin(async { ApprovalDecision::Allow })
    }));
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[
            ("e1", "mcp__fixture__echo", json!({"text": "first"})),
            ("e2", "mcp__fixture__echo", json!({"text": "second"})),
        ]),
        Reply::text(&["changed course"]),
    ]);
    let outbound: MessageSender = Arc::new(|_| {});
    let mut main = start_runtime_with(&settings, provider.clone(), outbound, approver).unwrap();
    agent.set(main.agent.clone()).ok().unwrap();
    wait_for_server(&mut main.events, "fixture", is_ready).await;

    let mut rx = main.agent.subscribe(None);
    main.supervisor.submit("echo twice".to_owned());
    let events = until_agent_end(&mut rx).await;
    let results = tool_results(&events);
    assert_eq!(results[0].content, "first");
    assert!(results[1].is_error);
    assert_eq!(results[1].content, SKIPPED_FOR_STEERING);
    let calls: Vec<String> = log_lines(&log)
        .into_iter()
        .filter(|l| l.starts_with("call "))
        .collect();
    assert_eq!(
        calls.len(),
        1,
        "the skipped call never reached the server: {calls:?}"
    );
    // The steering message reached the model with the results.
    let last = provider.requests().pop().unwrap();
    assert!(format!("{:?}", last.messages).contains("stop, do something else"));

    main.supervisor.stop().await;
    main.mcp.shutdown().await;
}
