//! A subagent's events reach the runtime's channel tagged with the spawn call that
//! started it, and never the main agent's own event stream.

use super::{fixture, full_registry};
use crate::support::{DEADLINE, Reply, ScriptedProvider};
use claw_tui::agent::{Agent, AgentEvent, EventKind};
use claw_tui::runtime::RuntimeEvent;
use claw_tui::tools::spawn::SpawnTool;
use serde_json::json;
use std::sync::Arc;
use tokio::time::timeout;

#[tokio::test]
async fn subagent_events_are_forwarded_tagged_with_the_spawn_call() {
    let registry = full_registry();
    let f = fixture(&registry, |_| {});
    let mut events = f.events;
    f.provider.route(
        "summarise the logs",
        vec![
            Reply::tool_calls(&[("sub-c1", "echo", json!({"text": "log"}))]),
            Reply::text(&["summary"]),
        ],
    );
    let main_provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[(
            "call-spawn-1",
            "spawn",
            json!({"task": "summarise the logs", "label": "Logs"}),
        )]),
        Reply::text(&["I started a subagent."]),
    ]);
    let main = Agent::new(main_provider.clone(), "scripted");
    main.set_tools(vec![Arc::new(SpawnTool::new(Arc::new(f.manager.clone())))]);
    let mut main_events = main.subscribe(Some(&[
        EventKind::ToolExecutionStart,
        EventKind::ToolExecutionEnd,
        EventKind::AgentEnd,
    ]));
    main.prompt("look at the logs in the background").unwrap();
    let main_seen = crate::support::until_agent_end(&mut main_events).await;
    timeout(DEADLINE, f.manager.wait_all()).await.unwrap();

    // The spawn call answered at once with the id.
    let spawn_result = main_seen
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolExecutionEnd { result, .. } => Some(result.content.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        spawn_result.starts_with("Started subagent subagent-1 (\"Logs\"); 1 running now."),
        "{spawn_result}"
    );
    // The subagent's own tool call never shows up in the main agent's events.
    assert!(main_seen.iter().all(|e| !matches!(
        e,
        AgentEvent::ToolExecutionStart { tool_call_id, .. } if tool_call_id == "sub-c1"
    )));

    let mut forwarded = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let RuntimeEvent::SubagentEvent {
            subagent_id,
            parent_tool_call_id,
            event,
        } = event
        {
            assert_eq!(subagent_id, "subagent-1");
            assert_eq!(parent_tool_call_id, "call-spawn-1");
            forwarded.push(event);
        }
    }
    let labels = crate::support::labels(&forwarded);
    assert_eq!(labels.first().map(String::as_str), Some("agent_start"));
    assert_eq!(labels.last().map(String::as_str), Some("agent_end"));
    assert!(
        labels.contains(&"tool_start:sub-c1".to_owned()),
        "{labels:?}"
    );
    assert!(labels.contains(&"tool_end:sub-c1".to_owned()), "{labels:?}");

    let json = serde_json::to_value(RuntimeEvent::SubagentEvent {
        subagent_id: "subagent-1".into(),
        parent_tool_call_id: "call-spawn-1".into(),
        event: AgentEvent::TurnStart { turn: 1 },
    })
    .unwrap();
    assert_eq!(
        json,
        json!({"type": "subagent_event", "subagent_id": "subagent-1",
               "parent_tool_call_id": "call-spawn-1",
               "event": {"type": "turn_start", "turn": 1}})
    );
}
