#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The `before_tool_call` and `after_tool_call` hooks, driven through the `Agent` facade.

// tests/support is shared and not ours to edit; its `FnTool::new` returns `Arc<dyn Tool>`.

use crate::support::*;
use claw_tui::agent::{
    AfterToolCall, AfterToolCallContext, AfterToolCallHook, AgentEvent, BeforeToolCall,
    BeforeToolCallContext, BeforeToolCallHook, ToolResult,
};
use futures::future::BoxFuture;
use serde_json::json;
use std::future::Future;
use std::sync::{Arc, Mutex};

fn before_hook<F, Fut>(f: F) -> Option<BeforeToolCallHook>
where
    F: Fn(BeforeToolCallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<BeforeToolCall, String>> + Send + 'static,
{
    Some(Arc::new(move |ctx| Box::pin(f(ctx))))
}

fn after_hook<F, Fut>(f: F) -> Option<AfterToolCallHook>
where
    F: Fn(AfterToolCallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AfterToolCall, String>> + Send + 'static,
{
    Some(Arc::new(move |ctx| Box::pin(f(ctx))))
}

/// A failing hook refused the call: its one result is an error saying `needle`, the
/// tool never ran, and the run went on to the model's "continued" answer.
fn assert_refused_and_continued(
    events: &[AgentEvent],
    seen: &Mutex<Vec<serde_json::Value>>,
    provider: &ScriptedProvider,
    needle: &str,
) {
    let results = tool_results(events);
    assert_eq!(results.len(), 1, "no tool result: {:#?}", labels(events));
    assert!(results[0].is_error);
    assert!(
        results[0].content.contains(needle),
        "{}",
        results[0].content
    );
    assert!(seen.lock().unwrap().is_empty(), "the refused tool ran");
    assert_eq!(provider.requests().len(), 2, "the run did not continue");
    assert_eq!(final_text(events), "continued");
}

// ---------------------------------------------------------------------------------------
// before_tool_call
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn before_hook_block_returns_the_reason_and_skips_the_tool() {
    let (echo, seen) = recording_echo();
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "echo", json!({"text": "secret"}))]),
            Reply::text(&["blocked, ok"]),
        ],
        vec![echo],
    );
    let contexts = Arc::new(Mutex::new(Vec::new()));
    let log = contexts.clone();
    agent.set_before_tool_call(before_hook(move |ctx| {
        log.lock().unwrap().push(ctx);
        async move {
            Ok(BeforeToolCall::Block {
                reason: "echo is disabled by policy".into(),
            })
        }
    }));

    let events = run(&agent, "go").await;

    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    assert!(results[0].is_error);
    assert_eq!(results[0].content, "echo is disabled by policy");
    assert!(seen.lock().unwrap().is_empty(), "a blocked tool ran");
    assert_eq!(
        *contexts.lock().unwrap(),
        [BeforeToolCallContext {
            tool_call_id: "c1".into(),
            tool_name: "echo".into(),
            args: json!({"text": "secret"}),
        }]
    );
    assert_eq!(sent_results(&provider.requests()[1]), results);
    assert_eq!(final_text(&events), "blocked, ok");
}

#[tokio::test]
async fn before_hook_replace_args_runs_the_tool_with_the_new_args() {
    let (echo, seen) = recording_echo();
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "echo", json!({"text": "original"}))]),
            Reply::text(&["done"]),
        ],
        vec![echo],
    );
    agent.set_before_tool_call(before_hook(|_| async {
        Ok(BeforeToolCall::ReplaceArgs(json!({"text": "replaced"})))
    }));

    let events = run(&agent, "go").await;

    assert_eq!(*seen.lock().unwrap(), [json!({"text": "replaced"})]);
    let results = tool_results(&events);
    assert_eq!(results[0].content, "replaced");
    assert!(!results[0].is_error);
    assert_eq!(sent_results(&provider.requests()[1]), results);
}

#[tokio::test]
async fn before_hook_error_becomes_an_error_result_and_the_run_continues() {
    let (echo, seen) = recording_echo();
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "echo", json!({"text": "hi"}))]),
            Reply::text(&["continued"]),
        ],
        vec![echo],
    );
    agent.set_before_tool_call(before_hook(|_| async {
        Err("policy service unreachable".to_owned())
    }));

    let events = run(&agent, "go").await;

    assert_refused_and_continued(&events, &seen, &provider, "policy service unreachable");
}

#[tokio::test]
async fn before_hook_panicking_in_its_future_becomes_an_error_result() {
    let (echo, seen) = recording_echo();
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "echo", json!({"text": "hi"}))]),
            Reply::text(&["continued"]),
            Reply::text(&["still here"]),
        ],
        vec![echo],
    );
    agent.set_before_tool_call(Some(Arc::new(|_ctx| {
        Box::pin(async move {
            if true {
                panic!("hook exploded");
            }
            Ok(BeforeToolCall::Continue)
        })
    })));

    let events = run(&agent, "go").await;

    assert_refused_and_continued(&events, &seen, &provider, "hook exploded");

    // The agent is still usable.
    let events = run(&agent, "again").await;
    assert_eq!(final_text(&events), "still here");
}

#[tokio::test]
async fn before_hook_panicking_when_called_becomes_an_error_result() {
    let (echo, seen) = recording_echo();
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "echo", json!({"text": "hi"}))]),
            Reply::text(&["continued"]),
        ],
        vec![echo],
    );
    // The panic happens in the hook function itself, before it returns its future.
    agent.set_before_tool_call(Some(Arc::new(
        |ctx: BeforeToolCallContext| -> BoxFuture<'static, Result<BeforeToolCall, String>> {
            assert_ne!(ctx.tool_name, "echo", "hook exploded early");
            Box::pin(async { Ok(BeforeToolCall::Continue) })
        },
    )));

    let events = run(&agent, "go").await;

    assert_refused_and_continued(&events, &seen, &provider, "hook exploded early");
}

// ---------------------------------------------------------------------------------------
// after_tool_call
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn after_hook_replaces_content_details_and_error_flag() {
    let (echo, seen) = recording_echo();
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "echo", json!({"text": "password=hunter2"}))]),
            Reply::text(&["ok"]),
        ],
        vec![echo],
    );
    let contexts = Arc::new(Mutex::new(Vec::new()));
    let log = contexts.clone();
    agent.set_after_tool_call(after_hook(move |ctx| {
        log.lock().unwrap().push(ctx.clone());
        async move {
            Ok(AfterToolCall {
                content: Some("[redacted]".into()),
                details: Some(json!({"original_length": ctx.result.content.len()})),
                is_error: Some(true),
            })
        }
    }));

    let events = run(&agent, "go").await;

    assert_eq!(seen.lock().unwrap().len(), 1, "the tool did not run");
    assert_eq!(
        *contexts.lock().unwrap(),
        [AfterToolCallContext {
            tool_call_id: "c1".into(),
            tool_name: "echo".into(),
            args: json!({"text": "password=hunter2"}),
            result: ToolResult::text("password=hunter2"),
        }]
    );

    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].content, "[redacted]");
    assert_eq!(results[0].details, json!({"original_length": 16}));
    assert!(results[0].is_error);

    let end = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolExecutionEnd {
                result, is_error, ..
            } => Some((result.clone(), *is_error)),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        end,
        (
            ToolResult::error("[redacted]").with_details(json!({"original_length": 16})),
            true
        )
    );

    // The model receives the replaced content, never the original.
    let sent = sent_results(&provider.requests()[1]);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].content, "[redacted]");
    assert!(sent[0].is_error);
}

#[tokio::test]
async fn after_hook_keeps_what_it_does_not_replace() {
    let (echo, _seen) = recording_echo();
    let (agent, provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "echo", json!({"text": "kept"}))]),
            Reply::text(&["ok"]),
        ],
        vec![echo],
    );
    agent.set_after_tool_call(after_hook(|_| async {
        Ok(AfterToolCall {
            details: Some(json!({"lines": 1})),
            ..AfterToolCall::default()
        })
    }));

    let events = run(&agent, "go").await;

    let results = tool_results(&events);
    assert_eq!(results[0].content, "kept");
    assert!(!results[0].is_error);
    assert_eq!(results[0].details, json!({"lines": 1}));
    assert_eq!(sent_results(&provider.requests()[1])[0].content, "kept");
}
