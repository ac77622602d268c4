#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! `exec` inside the real agent loop: output streams as `tool_execution_update` events
//! while the command runs, and the model gets the final result.

use crate::support::exec::{DEADLINE, tool};
use crate::support::{Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::{Agent, AgentEvent, Message};
use claw_tui::llm::LlmMessage;
use serde_json::json;
use std::io::Write;
use std::sync::Arc;

#[tokio::test]
async fn output_streams_while_the_command_runs() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    nix::unistd::mkfifo(&gate, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // The command blocks on the FIFO until the test has seen its first lines streamed.
    let command = "echo ready; echo warn >&2; read word < gate; echo got $word";
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[("c1", "exec", json!({ "command": command }))]),
        Reply::text(&["done"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_tools(vec![Arc::new(tool(dir.path()))]);
    let mut rx = agent.subscribe(None);
    agent.prompt("run it").unwrap();

    let (mut stdout, mut stderr) = (String::new(), String::new());
    while !(stdout.contains("ready\n") && stderr.contains("warn\n")) {
        let event = tokio::time::timeout(DEADLINE, rx.recv())
            .await
            .expect("the first lines were not streamed")
            .unwrap();
        match event {
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                partial,
            } => {
                assert_eq!((tool_call_id.as_str(), tool_name.as_str()), ("c1", "exec"));
                stdout.push_str(partial["stdout"].as_str().unwrap_or_default());
                stderr.push_str(partial["stderr"].as_str().unwrap_or_default());
            }
            AgentEvent::ToolExecutionEnd { result, .. } => {
                panic!("the call ended before the gate opened: {result:?}")
            }
            _ => {}
        }
    }
    assert_eq!((stdout.as_str(), stderr.as_str()), ("ready\n", "warn\n"));
    let gate_path = gate.clone();
    tokio::task::spawn_blocking(move || {
        let mut fifo = std::fs::OpenOptions::new()
            .write(true)
            .open(gate_path)
            .unwrap();
        fifo.write_all(b"go\n").unwrap();
    })
    .await
    .unwrap();

    let events = until_agent_end(&mut rx).await;
    let end = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolExecutionEnd { result, .. } => Some(result.clone()),
            _ => None,
        })
        .expect("no tool_execution_end");
    assert_eq!(end.content, "ready\ngot go\n[stderr]\nwarn\n[exit code: 0]");
    assert!(!end.is_error);
    let after_end = events
        .iter()
        .skip_while(|e| !matches!(e, AgentEvent::ToolExecutionEnd { .. }))
        .any(|e| matches!(e, AgentEvent::ToolExecutionUpdate { .. }));
    assert!(!after_end, "no update may follow the call's end");

    let sent = provider.requests()[1].messages.clone();
    let Some(LlmMessage::ToolResult(result)) = sent.last() else {
        panic!("the model did not get the tool result: {sent:?}")
    };
    assert_eq!(result.content, end.content);
    let state = agent.state();
    assert!(matches!(state.messages.last(), Some(Message::Assistant(_))));
}
