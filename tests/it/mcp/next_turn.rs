//! Tools that change while a run is under way (an MCP server connecting, a
//! `list_changed`) reach the model from the run's next request, with the system prompt
//! set alongside them; the run's other requests are unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::{FnTool, Reply, agent_with, echo_tool, run, text_schema, tool_results};
use claw_tui::agent::{Agent, ToolResult};
use serde_json::json;
use std::sync::{Arc, OnceLock};

fn names(request: &claw_tui::llm::LlmRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn tools_set_during_a_run_are_offered_from_the_next_request() {
    let agent_slot: Arc<OnceLock<Agent>> = Arc::new(OnceLock::new());
    let slot = agent_slot.clone();
    let connect = FnTool::new("connect", text_schema(), move |_, _, _, _| {
        let slot = slot.clone();
        async move {
            let agent = slot.get().unwrap();
            agent.set_tools(vec![echo_tool()]);
            agent.set_system_prompt("now with echo");
            ToolResult::text("connected")
        }
    });
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "connect", json!({"text": "x"}))]),
            Reply::tool_calls(&[("c2", "echo", json!({"text": "new tool works"}))]),
            Reply::text(&["done"]),
        ],
        vec![connect],
    );
    agent.set_system_prompt("before");
    agent_slot.set(agent.clone()).ok().unwrap();
    let events = run(&agent, "go").await;
    let requests = provider.requests();
    assert_eq!(names(&requests[0]), ["connect"]);
    assert_eq!(requests[0].system_prompt, "before");
    assert_eq!(names(&requests[1]), ["echo"]);
    assert_eq!(requests[1].system_prompt, "now with echo");
    assert_eq!(names(&requests[2]), ["echo"]);
    assert_eq!(tool_results(&events)[1].content, "new tool works");
}
