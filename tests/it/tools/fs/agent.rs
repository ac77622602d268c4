//! File tools driven by the real agent loop and a scripted model.

use super::Setup;
use crate::support::tool_results;
use crate::support::{Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::Agent;
use claw_tui::llm::LlmMessage;
use claw_tui::tools::ToolRegistry;
use claw_tui::tools::fs::file_tools;
use serde_json::json;

#[tokio::test]
async fn the_model_writes_edits_and_reads_a_file_through_the_loop() {
    let s = Setup::new();
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[(
            "w1",
            "write_file",
            json!({"path": "notes/todo.md", "content": "- buy milk\n- call Bob\n"}),
        )]),
        Reply::tool_calls(&[(
            "e1",
            "edit_file",
            json!({"path": "notes/todo.md", "old_text": "call Bob", "new_text": "call Alice"}),
        )]),
        Reply::tool_calls(&[
            ("r1", "read_file", json!({"path": "notes/todo.md"})),
            ("r2", "read_file", json!({"path": "../secret.txt"})),
        ]),
        Reply::text(&["Done."]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let registry: ToolRegistry = file_tools(s.workspace()).into_iter().collect();
    agent.set_tools(registry.tools());

    let mut rx = agent.subscribe(None);
    agent.prompt("keep my todo list").unwrap();
    let events = until_agent_end(&mut rx).await;

    assert_eq!(
        std::fs::read_to_string(s.root.join("notes/todo.md")).unwrap(),
        "- buy milk\n- call Alice\n"
    );
    let results = tool_results(&events);
    let ids: Vec<&str> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
    assert_eq!(ids, ["w1", "e1", "r1", "r2"]);
    assert_eq!(
        results[0].content,
        "Wrote 22 bytes to notes/todo.md (created)."
    );
    assert!(!results[1].is_error);
    assert!(
        results[1].details["diff"]
            .as_str()
            .unwrap()
            .contains("+- call Alice")
    );
    assert_eq!(results[2].content, "- buy milk\n- call Alice");
    assert!(results[3].is_error);
    assert!(results[3].content.contains("outside the workspace"));

    // The model saw the tools and got the results back.
    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    let offered: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        offered,
        ["read_file", "write_file", "edit_file", "list_dir"]
    );
    let last_results: Vec<String> = requests[3]
        .messages
        .iter()
        .filter_map(|m| match m {
            LlmMessage::ToolResult(r) => Some(r.content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(last_results.len(), 4);
    assert_eq!(last_results[2], "- buy milk\n- call Alice");
}

#[tokio::test]
async fn schema_validation_in_the_loop_rejects_bad_arguments_before_the_tool_runs() {
    let s = Setup::new();
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[("l1", "list_dir", json!({"depth": 0}))]),
        Reply::text(&["ok"]),
    ]);
    let agent = Agent::new(provider, "scripted");
    agent.set_tools(file_tools(s.workspace()));
    let mut rx = agent.subscribe(None);
    agent.prompt("list").unwrap();
    let events = until_agent_end(&mut rx).await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    assert!(results[0].is_error);
    assert!(
        results[0].content.contains("depth"),
        "{}",
        results[0].content
    );
}
