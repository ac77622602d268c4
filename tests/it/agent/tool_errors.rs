#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Failing tool calls through the `Agent` facade: unknown tools, invalid arguments, panics.

// tests/support is shared and not ours to edit; its `FnTool::new` returns `Arc<dyn Tool>`.

use crate::support::*;
use claw_tui::agent::{AgentEvent, ToolResult};
use serde_json::json;
use std::sync::{Arc, Mutex};

// ---------------------------------------------------------------------------------------
// Lookup and validation
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn unknown_tool_gives_an_error_result_and_the_run_continues() {
    let (echo, seen) = recording_echo();
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "x", json!({"text": "hi"}))]),
            Reply::text(&["sorry, wrong tool"]),
        ],
        vec![echo],
    );

    let events = run(&agent, "go").await;

    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].content, "Tool \"x\" not found");
    assert!(results[0].is_error);
    assert_eq!(results[0].tool_call_id, "c1");
    assert_eq!(results[0].tool_name, "x");
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::ToolExecutionEnd { tool_call_id, is_error: true, .. } if tool_call_id == "c1"
    )));

    let requests = provider.requests();
    assert_eq!(
        requests.len(),
        2,
        "the run did not go on to the next LLM call"
    );
    assert_eq!(sent_results(&requests[1]), results);
    assert_eq!(final_text(&events), "sorry, wrong tool");
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn invalid_arguments_are_reported_and_the_model_can_retry() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "times": {"type": "integer", "minimum": 1}
        },
        "required": ["name"]
    });
    let greet = FnTool::new("greet", schema, move |_, args, _, _| {
        log.lock().unwrap().push(args.clone());
        async move {
            ToolResult::text(format!(
                "Hello {} x{}",
                args["name"].as_str().unwrap_or("?"),
                args["times"]
            ))
        }
    });
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("bad", "greet", json!({"name": 42, "times": 0}))]),
            Reply::tool_calls(&[("good", "greet", json!({"name": "Ada", "times": 2}))]),
            Reply::text(&["greeted"]),
        ],
        vec![greet],
    );

    let events = run(&agent, "greet Ada").await;

    let results = tool_results(&events);
    assert_eq!(results.len(), 2);
    let bad = &results[0];
    assert_eq!(bad.tool_call_id, "bad");
    assert!(bad.is_error);
    assert!(bad.content.contains("greet"), "{}", bad.content);
    assert!(
        bad.content.contains("/name"),
        "missing failing path: {}",
        bad.content
    );
    assert!(
        bad.content
            .contains("/name: Argument \"name\" must be a string, got 42."),
        "{}",
        bad.content
    );
    assert!(
        bad.content.contains("/times"),
        "missing failing path: {}",
        bad.content
    );
    assert!(
        bad.content
            .contains("/times: Argument \"times\" must be at least 1, got 0."),
        "{}",
        bad.content
    );
    assert!(
        bad.content.contains("Received arguments"),
        "{}",
        bad.content
    );
    assert!(bad.content.contains("\"name\": 42"), "{}", bad.content);
    assert!(bad.content.contains("\"times\": 0"), "{}", bad.content);

    let good = &results[1];
    assert_eq!(good.tool_call_id, "good");
    assert!(!good.is_error);
    assert_eq!(good.content, "Hello Ada x2");

    // The model saw the validation error before retrying.
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(sent_results(&requests[1]), std::slice::from_ref(bad));
    assert_eq!(final_text(&events), "greeted");
    // The tool only ever ran with the valid arguments.
    assert_eq!(*seen.lock().unwrap(), [json!({"name": "Ada", "times": 2})]);
}

// ---------------------------------------------------------------------------------------
// Panics
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn panicking_tool_gives_an_error_result_and_the_agent_stays_usable() {
    let boom = FnTool::new("boom", json!({"type": "object"}), |_, _, _, _| async move {
        if true {
            panic!("kaboom in tool");
        }
        ToolResult::text("unreachable")
    });
    let (echo, _seen) = recording_echo();
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[
                ("c1", "boom", json!({})),
                ("c2", "echo", json!({"text": "fine"})),
            ]),
            Reply::text(&["the tool crashed"]),
            Reply::text(&["next run works"]),
        ],
        vec![boom, echo],
    );

    let events = run(&agent, "go").await;

    let results = tool_results(&events);
    assert_eq!(results.len(), 2);
    assert!(results[0].is_error);
    assert!(
        results[0].content.contains("kaboom in tool"),
        "{}",
        results[0].content
    );
    assert_eq!(
        (results[1].content.as_str(), results[1].is_error),
        ("fine", false)
    );
    assert_eq!(provider.requests().len(), 2);
    assert_eq!(sent_results(&provider.requests()[1]), results);
    assert_eq!(final_text(&events), "the tool crashed");
    assert!(!agent.state().is_streaming);

    let events = run(&agent, "again").await;
    assert_eq!(final_text(&events), "next run works");
    assert_eq!(agent.state().messages.len(), 7);
}
