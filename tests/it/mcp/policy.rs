//! MCP tools are held to the same tool policy as the built-ins, in the real runtime:
//! `approval = "ask"` with nobody to ask refuses the call before it reaches the server,
//! disabled tools are never offered (and a call to one reaches nothing), and
//! `subagents = false` keeps a server's tools from subagents, and plan mode offers only
//! the tools the server marks read-only, also when they arrive after plan mode went on. Checked on the server's own log of what it
//! received.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::setup::{McpEnv, Via, offered};
use crate::support::mcp::{is_ready, log_lines, stdio_table, wait_for_server};
use crate::support::runtime::{RoutingProvider, until_runtime};
use crate::support::{Reply, ScriptedProvider, sent_results, tool_results, until_agent_end};
use claw_tui::runtime::RuntimeEvent;
use claw_tui::setup::start_runtime_with;
use claw_tui::tools::exec::Approver;
use claw_tui::tools::message::MessageSender;
use claw_tui::tools::policy::{AgentKind, AgentRole};
use serde_json::json;
use std::sync::Arc;

fn calls_logged(log: &std::path::Path) -> Vec<String> {
    log_lines(log)
        .into_iter()
        .filter(|l| l.starts_with("call "))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_with_nobody_to_ask_refuses_before_the_server_sees_the_call() {
    let env = McpEnv::start(
        Via::Stdio,
        "approval = \"ask\"",
        "",
        vec![
            Reply::tool_calls(&[("c1", "mcp__fixture__echo", json!({"text": "leak"}))]),
            Reply::text(&["could not"]),
        ],
    )
    .await;
    let events = env.run("echo something").await;
    let result = tool_results(&events).remove(0);
    assert!(result.is_error);
    assert!(
        result
            .content
            .contains("needs the user's approval, but claw-tui runs without anyone to ask"),
        "{}",
        result.content
    );
    assert_eq!(calls_logged(&env.log()), Vec::<String>::new());
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn disabled_tools_are_never_offered_and_never_reached() {
    let env = McpEnv::start(
        Via::Stdio,
        "disabled_tools = [\"fail\"]\ntools = [\"echo\", \"fail\", \"add\", \"crash\"]",
        "[tools]\ndisabled = [\"mcp__fixture__add\"]\n",
        vec![
            // A model that calls what it was not offered.
            Reply::tool_calls(&[
                ("c1", "mcp__fixture__fail", json!({})),
                ("c2", "mcp__fixture__add", json!({"a": 1, "b": 2})),
                ("c3", "mcp__fixture__pid", json!({})),
            ]),
            Reply::text(&["done"]),
        ],
    )
    .await;
    env.run("try them all").await;
    let requests = env.provider.requests();
    let tools: Vec<String> = offered(&requests[0])
        .into_iter()
        .filter(|t| t.starts_with("mcp__"))
        .collect();
    assert_eq!(tools, ["mcp__fixture__echo", "mcp__fixture__crash"]);
    for result in sent_results(&requests[1]) {
        assert!(result.is_error);
        assert!(result.content.contains("not found"), "{}", result.content);
    }
    assert_eq!(calls_logged(&env.log()), Vec::<String>::new());
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn subagents_false_keeps_the_tools_from_subagents() {
    const PROMPT: &str = "delegate it";
    const TASK: &str = "echo in the background";
    let routing = RoutingProvider::new();
    let main_script = routing.route(
        PROMPT,
        vec![
            Reply::tool_calls(&[("s1", "spawn", json!({"task": TASK}))]),
            Reply::text(&["Started."]),
            Reply::text(&["Got the report."]),
        ],
    );
    routing.route(
        TASK,
        vec![
            // The subagent calls the MCP tool it was not offered.
            Reply::tool_calls(&[(
                "x1",
                "mcp__fixture__echo",
                json!({"text": "from a subagent"}),
            )]),
            Reply::text(&["could not"]),
        ],
    );
    let mut env = McpEnv::start_with(
        Via::Stdio,
        "subagents = false",
        "",
        routing.clone(),
        main_script,
    )
    .await;
    assert!(
        env.main
            .policy
            .names_for(AgentKind::Main)
            .contains(&"mcp__fixture__echo".to_owned())
    );
    assert!(
        !env.main
            .policy
            .names_for(AgentKind::Subagent)
            .iter()
            .any(|n| n.starts_with("mcp__"))
    );
    env.main.supervisor.submit(PROMPT.to_owned());
    until_runtime(
        &mut env.main.events,
        |e| matches!(e, RuntimeEvent::SubagentUpdate { info } if info.status.is_finished()),
    )
    .await;
    env.main.subagents.wait_all().await;
    let sub = routing.requests(TASK);
    assert!(!offered(&sub[0]).iter().any(|n| n.starts_with("mcp__")));
    assert!(!sub[0].system_prompt.contains("mcp__fixture"));
    let refused = sent_results(&sub[1]).remove(0);
    assert!(refused.content.contains("not found"), "{}", refused.content);
    let main_request = &env.provider.requests()[0];
    assert!(offered(main_request).contains(&"mcp__fixture__echo".to_owned()));
    assert!(main_request.system_prompt.contains("mcp__fixture__echo"));
    assert_eq!(calls_logged(&env.log()), Vec::<String>::new());
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_mode_offers_only_the_tools_the_server_marks_read_only() {
    // The fixture marks `echo` with `annotations.readOnlyHint`; nothing else.
    let env = McpEnv::start(Via::Stdio, "", "", Vec::new()).await;
    let policy = &env.main.policy;
    let mcp_tools = |role: &AgentRole| -> Vec<String> {
        policy
            .names_for_role(role)
            .into_iter()
            .filter(|t| t.starts_with("mcp__"))
            .collect()
    };
    assert_eq!(mcp_tools(&AgentRole::Planner), ["mcp__fixture__echo"]);
    assert!(mcp_tools(&AgentRole::Main).contains(&"mcp__fixture__add".to_owned()));
    assert!(
        policy
            .tools_for(&AgentRole::Planner)
            .get("mcp__fixture__add")
            .is_none()
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_mode_stays_in_force_when_a_servers_tools_arrive() {
    // Started in plan mode (`--plan`); the server's tools arrive afterwards, and the
    // main agent is equipped again for them: still as the planner, note included.
    let logs = tempfile::tempdir().unwrap();
    let table = stdio_table("fixture", &logs.path().join("fixture.log"), "");
    let (_home, mut settings) = crate::support::runtime::settings(&table);
    settings.plan = true;
    let provider = ScriptedProvider::new(vec![Reply::text(&["1. Read the code."])]);
    let outbound: MessageSender = Arc::new(|_| {});
    let mut main =
        start_runtime_with(&settings, provider.clone(), outbound, Approver::Nobody).unwrap();
    wait_for_server(&mut main.events, "fixture", is_ready).await;
    let mut events = main.agent.subscribe(None);
    main.supervisor
        .submit("how would you add caching?".to_owned());
    until_agent_end(&mut events).await;
    let request = &provider.requests()[0];
    let mut tools = offered(request);
    tools.sort();
    assert_eq!(
        tools,
        [
            "list_dir",
            "mcp__fixture__echo",
            "read_file",
            "web_fetch",
            "web_search"
        ]
    );
    assert!(request.system_prompt.contains("# Plan mode"));
    assert!(request.system_prompt.contains("mcp__fixture__echo"));
    main.supervisor.stop().await;
    main.mcp.shutdown().await;
}
