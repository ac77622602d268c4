#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The tool-call pipeline: a tool set's interceptors around each call the loop makes,
//! in order, with the loop's own hooks outermost; blocking, answering, rewriting (only
//! checked arguments reach a tool) and replacing results; a panicking interceptor.

use crate::support::*;
use async_trait::async_trait;
use claw_tui::agent::{
    AfterToolCall, BeforeToolCall, CheckedArgs, Interceptor, Next, ToolCallContext, ToolResult,
    ToolSet,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

type Log = Arc<Mutex<Vec<String>>>;

/// What a test interceptor does with the calls it sees.
#[derive(Clone)]
enum Act {
    /// Runs the rest and logs around it.
    Pass,
    /// Answers itself with this text: nothing inside runs.
    Answer(&'static str),
    /// Runs the rest with these arguments (checked first).
    Rewrite(Value),
    /// Replaces the result's content after the rest ran.
    Replace(&'static str),
    /// Panics before the rest.
    Panic,
}

struct Step {
    name: &'static str,
    act: Act,
    log: Log,
}

#[async_trait]
impl Interceptor for Step {
    async fn around(
        &self,
        call: &ToolCallContext<'_>,
        args: CheckedArgs,
        next: Next<'_>,
    ) -> ToolResult {
        let push = |what: String| self.log.lock().unwrap().push(what);
        push(format!("{} before {}", self.name, args.value()));
        let result = match &self.act {
            Act::Pass | Act::Replace(_) => next.run(args).await,
            Act::Answer(text) => return ToolResult::error(*text),
            Act::Rewrite(new) => match call.check(new.clone()) {
                Ok(checked) => next.run(checked).await,
                Err(problem) => return ToolResult::error(problem.to_string()),
            },
            Act::Panic => panic!("interceptor {} broke", self.name),
        };
        push(format!(
            "{} after ran={} {}",
            self.name,
            call.tool_ran(),
            result.content
        ));
        match &self.act {
            Act::Replace(text) => ToolResult::text(*text),
            _ => result,
        }
    }
}

fn steps(log: &Log, acts: &[(&'static str, Act)]) -> Vec<Arc<dyn Interceptor>> {
    acts.iter()
        .map(|(name, act)| {
            Arc::new(Step {
                name,
                act: act.clone(),
                log: log.clone(),
            }) as Arc<dyn Interceptor>
        })
        .collect()
}

/// Runs one `echo` call with `args` under `acts`; returns the result the model got, the
/// interceptors' log and what the tool itself saw.
async fn one_call(
    acts: &[(&'static str, Act)],
    args: Value,
) -> (ToolResult, Vec<String>, Vec<Value>) {
    let (echo, seen) = recording_echo();
    let (agent, _provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "echo", args)]),
            Reply::text(&["done"]),
        ],
        Vec::new(),
    );
    let log = Log::default();
    agent.set_tool_set(ToolSet::intercepted(vec![echo], steps(&log, acts)));
    let events = run(&agent, "go").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{:#?}", labels(&events));
    let result = ToolResult {
        content: results[0].content.clone(),
        images: Vec::new(),
        details: results[0].details.clone(),
        is_error: results[0].is_error,
    };
    let log = log.lock().unwrap().clone();
    let seen = seen.lock().unwrap().clone();
    (result, log, seen)
}

#[tokio::test]
async fn interceptors_run_outermost_first_and_see_the_result_innermost_first() {
    let (result, log, seen) = one_call(
        &[("outer", Act::Pass), ("inner", Act::Pass)],
        json!({"text": "hi"}),
    )
    .await;
    assert_eq!(result.content, "hi");
    assert_eq!(seen, [json!({"text": "hi"})]);
    assert_eq!(
        log,
        [
            r#"outer before {"text":"hi"}"#,
            r#"inner before {"text":"hi"}"#,
            "inner after ran=true hi",
            "outer after ran=true hi",
        ]
    );
}

#[tokio::test]
async fn an_answer_stops_the_call_there_and_the_outer_steps_see_that_the_tool_did_not_run() {
    let (result, log, seen) = one_call(
        &[
            ("outer", Act::Pass),
            ("gate", Act::Answer("refused by the gate")),
            ("inner", Act::Pass),
        ],
        json!({"text": "hi"}),
    )
    .await;
    assert!(result.is_error);
    assert_eq!(result.content, "refused by the gate");
    assert!(seen.is_empty(), "the tool ran");
    assert_eq!(
        log,
        [
            r#"outer before {"text":"hi"}"#,
            r#"gate before {"text":"hi"}"#,
            "outer after ran=false refused by the gate",
        ]
    );
}

#[tokio::test]
async fn rewritten_arguments_are_checked_and_then_are_what_runs() {
    let (result, log, seen) = one_call(
        &[
            ("rewrite", Act::Rewrite(json!({"text": "rewritten"}))),
            ("inner", Act::Pass),
        ],
        json!({"text": "hi"}),
    )
    .await;
    assert_eq!(result.content, "rewritten");
    assert_eq!(seen, [json!({"text": "rewritten"})]);
    assert_eq!(log[1], r#"inner before {"text":"rewritten"}"#);

    let (result, _log, seen) = one_call(
        &[("rewrite", Act::Rewrite(json!({"text": 42})))],
        json!({"text": "hi"}),
    )
    .await;
    assert!(result.is_error);
    assert!(
        result
            .content
            .starts_with("Validation failed for tool \"echo\""),
        "{}",
        result.content
    );
    assert!(seen.is_empty(), "invalid arguments reached the tool");
}

#[tokio::test]
async fn invalid_arguments_from_the_model_reach_no_interceptor() {
    let (result, log, seen) = one_call(&[("outer", Act::Pass)], json!({"text": 7})).await;
    assert!(result.is_error);
    assert!(result.content.contains("/text"), "{}", result.content);
    assert!(log.is_empty(), "{log:?}");
    assert!(seen.is_empty());
}

#[tokio::test]
async fn an_interceptor_may_replace_the_result() {
    let (result, log, _seen) = one_call(
        &[("outer", Act::Pass), ("redact", Act::Replace("[redacted]"))],
        json!({"text": "secret"}),
    )
    .await;
    assert_eq!(result.content, "[redacted]");
    assert_eq!(log.last().unwrap(), "outer after ran=true [redacted]");
}

#[tokio::test]
async fn a_panicking_interceptor_fails_the_call_not_the_run() {
    let (result, log, seen) = one_call(
        &[("outer", Act::Pass), ("broken", Act::Panic)],
        json!({"text": "hi"}),
    )
    .await;
    assert!(result.is_error);
    assert!(
        result.content.contains("interceptor broken broke"),
        "{}",
        result.content
    );
    assert!(seen.is_empty());
    assert_eq!(
        log.last().unwrap(),
        "outer after ran=false Tool failed: panicked: interceptor broken broke"
    );
}

#[tokio::test]
async fn the_loops_own_hooks_run_outside_the_tool_sets_interceptors() {
    let (echo, _seen) = recording_echo();
    let (agent, _provider) = agent_with(
        vec![
            Reply::tool_calls(&[("c1", "echo", json!({"text": "hi"}))]),
            Reply::text(&["done"]),
        ],
        Vec::new(),
    );
    let log = Log::default();
    agent.set_tool_set(ToolSet::intercepted(
        vec![echo],
        steps(&log, &[("set", Act::Answer("answered by the set"))]),
    ));
    let before_log = log.clone();
    agent.set_before_tool_call(Some(Arc::new(move |ctx| {
        before_log
            .lock()
            .unwrap()
            .push(format!("loop before {}", ctx.args));
        Box::pin(async { Ok(BeforeToolCall::Continue) })
    })));
    let after_log = log.clone();
    agent.set_after_tool_call(Some(Arc::new(move |ctx| {
        after_log
            .lock()
            .unwrap()
            .push(format!("loop after {}", ctx.result.content));
        Box::pin(async {
            Ok(AfterToolCall {
                content: Some("seen by the loop".into()),
                ..AfterToolCall::default()
            })
        })
    })));
    let events = run(&agent, "go").await;
    assert_eq!(tool_results(&events)[0].content, "seen by the loop");
    assert_eq!(
        *log.lock().unwrap(),
        [
            r#"loop before {"text":"hi"}"#,
            r#"set before {"text":"hi"}"#,
            "loop after answered by the set",
        ]
    );
}
