//! Running the tool calls of one assistant message: each through its tool set's
//! pipeline (validation, interceptors, the tool), with steering checks at every tool
//! boundary.

use super::config::ToolExecution;
use super::event::AgentEvent;
use super::loop_hooks::LoopHooks;
use super::queue::QueueKind;
use super::run_loop::RunEnv;
use super::running::Interruption;
use super::tool::{ToolResult, ToolUpdates};
use super::tool_set::ToolSet;
use super::types::{Message, ToolCall, ToolResultMessage, now_ms};
use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};

/// Result of a call skipped because the user queued a steering message.
pub const SKIPPED_FOR_STEERING: &str = "Skipped due to queued user message.";
/// Result of a call that never started because the run was aborted.
pub const SKIPPED_FOR_ABORT: &str = "Skipped: the run was aborted.";

/// Runs `calls` in the configured mode. Returns the results as messages in call order,
/// and the steering messages that caused calls to be skipped (to be injected next).
pub(crate) async fn execute_tool_calls(
    tools: ToolSet,
    calls: Vec<ToolCall>,
    env: &RunEnv<'_>,
) -> (Vec<Message>, Vec<Message>) {
    let (results, steering) = match env.config.tool_execution {
        ToolExecution::Sequential => sequential(&tools, &calls, env).await,
        ToolExecution::Parallel => parallel(&tools, &calls, env).await,
    };
    let messages = calls
        .iter()
        .zip(results)
        .map(|(call, result)| {
            Message::ToolResult(ToolResultMessage {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                content: result.content,
                images: result.images,
                details: result.details,
                is_error: result.is_error,
                timestamp: now_ms(),
            })
        })
        .collect();
    (messages, steering)
}

async fn sequential(
    tools: &ToolSet,
    calls: &[ToolCall],
    env: &RunEnv<'_>,
) -> (Vec<ToolResult>, Vec<Message>) {
    let mut steering = Vec::new();
    let mut results = Vec::with_capacity(calls.len());
    for call in calls {
        if steering.is_empty() && !env.cancel.is_cancelled() {
            steering = env.queues.poll(QueueKind::Steering, env.sink);
        }
        announce_start(call, env);
        let result = match skip_reason(!steering.is_empty(), env) {
            Some(reason) => ToolResult::error(reason),
            None => run_call(tools, call, env).await,
        };
        announce_end(call, &result, env);
        results.push(result);
    }
    (results, steering)
}

async fn parallel(
    tools: &ToolSet,
    calls: &[ToolCall],
    env: &RunEnv<'_>,
) -> (Vec<ToolResult>, Vec<Message>) {
    let steering = if env.cancel.is_cancelled() {
        Vec::new()
    } else {
        env.queues.poll(QueueKind::Steering, env.sink)
    };
    for call in calls {
        announce_start(call, env);
    }
    if let Some(reason) = skip_reason(!steering.is_empty(), env) {
        let results: Vec<ToolResult> = calls.iter().map(|_| ToolResult::error(reason)).collect();
        for (call, result) in calls.iter().zip(&results) {
            announce_end(call, result, env);
        }
        return (results, steering);
    }
    let mut running: FuturesUnordered<_> = calls
        .iter()
        .enumerate()
        .map(|(i, call)| run_call(tools, call, env).map(move |r| (i, r)))
        .collect();
    let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
    while let Some((i, result)) = running.next().await {
        announce_end(&calls[i], &result, env);
        results[i] = Some(result);
    }
    let results = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| ToolResult::error("The tool call did not finish.")))
        .collect();
    (results, steering)
}

fn skip_reason(steering_queued: bool, env: &RunEnv<'_>) -> Option<&'static str> {
    if env.cancel.is_cancelled() {
        Some(SKIPPED_FOR_ABORT)
    } else if steering_queued {
        Some(SKIPPED_FOR_STEERING)
    } else {
        None
    }
}

fn announce_start(call: &ToolCall, env: &RunEnv<'_>) {
    env.emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.args.clone(),
    });
}

fn announce_end(call: &ToolCall, result: &ToolResult, env: &RunEnv<'_>) {
    env.emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: result.clone(),
        is_error: result.is_error,
    });
}

/// Lookup, validation, then the interceptors and the tool ([`ToolSet::call`]) with the
/// loop's own `before_tool_call` / `after_tool_call` hooks outermost. The call runs
/// under its own token (a child of the run's), registered in `env.calls` while it runs,
/// so the user can stop it without aborting the run; a stopped call's result says so.
async fn run_call(tools: &ToolSet, call: &ToolCall, env: &RunEnv<'_>) -> ToolResult {
    let token = env.calls.start(&call.id, env.cancel);
    let hooks = LoopHooks::of(env.config);
    let updates = ToolUpdates::new(env.sink.clone(), &call.id, &call.name);
    let mut result = tools
        .call(
            hooks.as_ref(),
            &call.name,
            &call.id,
            call.args.clone(),
            &token,
            &updates,
        )
        .await;
    updates.close();
    env.calls.finish(&call.id);
    if token.is_cancelled() {
        let how = if env.cancel.is_cancelled() {
            Interruption::Abort
        } else {
            Interruption::User
        };
        how.mark(&mut result);
    }
    result
}
