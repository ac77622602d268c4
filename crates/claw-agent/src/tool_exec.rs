//! Running the tool calls of one assistant message: lookup, validation, hooks,
//! execution, and steering checks at every tool boundary.

use super::config::{AfterToolCallContext, BeforeToolCall, BeforeToolCallContext, ToolExecution};
use super::event::AgentEvent;
use super::queue::QueueKind;
use super::run_loop::RunEnv;
use super::running::Interruption;
use super::tool::{ToolResult, ToolSet, ToolUpdates};
use super::types::{Message, ToolCall, ToolResultMessage, now_ms};
use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Result of a call skipped because the user queued a steering message.
pub const SKIPPED_FOR_STEERING: &str = "Skipped due to queued user message.";
/// Result of a call that never started because the run was aborted.
pub const SKIPPED_FOR_ABORT: &str = "Skipped: the run was aborted.";
/// How long an aborted tool may take to wind down before it is abandoned.
const ABORT_GRACE: Duration = Duration::from_secs(5);

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

/// Lookup, validation, `before_tool_call`, execution, `after_tool_call`. The call runs
/// under its own token (a child of the run's), registered in `env.calls` while it runs,
/// so the user can stop it without aborting the run; a stopped call's result says so.
async fn run_call(tools: &ToolSet, call: &ToolCall, env: &RunEnv<'_>) -> ToolResult {
    let token = env.calls.start(&call.id, env.cancel);
    let mut result = checked_call(tools, call, env, &token).await;
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

async fn checked_call(
    tools: &ToolSet,
    call: &ToolCall,
    env: &RunEnv<'_>,
    token: &CancellationToken,
) -> ToolResult {
    let Some(tool) = tools.get(&call.name) else {
        return ToolResult::error(format!("Tool \"{}\" not found", call.name));
    };
    if let Err(problem) = tools.validate(&call.name, &call.args) {
        return ToolResult::error(problem.to_string());
    }
    let mut args = call.args.clone();
    if let Some(hook) = &env.config.before_tool_call {
        let context = BeforeToolCallContext {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: args.clone(),
        };
        match guarded(async move { hook(context).await }).await {
            Ok(Ok(BeforeToolCall::Continue)) => {}
            Ok(Ok(BeforeToolCall::Block { reason })) => return ToolResult::error(reason),
            Ok(Ok(BeforeToolCall::ReplaceArgs(new_args))) => {
                if let Err(problem) = tools.validate(&call.name, &new_args) {
                    return ToolResult::error(format!(
                        "before_tool_call replaced the arguments with invalid ones.\n{problem}"
                    ));
                }
                args = new_args;
            }
            Ok(Err(e)) => return ToolResult::error(format!("before_tool_call hook failed: {e}")),
            Err(e) => return ToolResult::error(format!("before_tool_call hook failed: {e}")),
        }
    }
    let updates = ToolUpdates::new(env.sink.clone(), &call.id, &call.name);
    let execution = tool.execute(&call.id, args.clone(), token.clone(), updates.clone());
    let mut result = run_until_stopped(execution, token).await;
    updates.close();
    if let Some(hook) = &env.config.after_tool_call {
        let context = AfterToolCallContext {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args,
            result: result.clone(),
        };
        match guarded(async move { hook(context).await }).await {
            Ok(Ok(change)) => {
                if let Some(content) = change.content {
                    result.content = content;
                }
                if let Some(details) = change.details {
                    result.details = details;
                }
                if let Some(is_error) = change.is_error {
                    result.is_error = is_error;
                }
            }
            Ok(Err(e)) => return ToolResult::error(format!("after_tool_call hook failed: {e}")),
            Err(e) => return ToolResult::error(format!("after_tool_call hook failed: {e}")),
        }
    }
    result
}

/// Why a tool gave no result of its own.
#[derive(Debug, thiserror::Error)]
enum ToolFailure {
    /// It panicked.
    #[error(transparent)]
    Panicked(#[from] Panicked),
    /// It was stopped and did not return within the grace period.
    #[error("stopped, and the tool did not return within {} s", ABORT_GRACE.as_secs())]
    NoReturnAfterStop,
}

/// A hook or tool future panicked.
#[derive(Debug, thiserror::Error)]
#[error("panicked: {message}")]
struct Panicked {
    /// The panic's message (`unknown panic` when it carried none).
    message: String,
}

/// Runs a tool; once its token fires (an abort, or the user stopping the call) it gets
/// a grace period to return its own result.
async fn run_until_stopped(
    execution: impl Future<Output = ToolResult>,
    token: &CancellationToken,
) -> ToolResult {
    let execution = guarded(execution);
    tokio::pin!(execution);
    let outcome: Result<ToolResult, ToolFailure> = tokio::select! {
        biased;
        outcome = &mut execution => outcome.map_err(ToolFailure::from),
        () = token.cancelled() => match tokio::time::timeout(ABORT_GRACE, &mut execution).await {
            Ok(outcome) => outcome.map_err(ToolFailure::from),
            Err(_) => Err(ToolFailure::NoReturnAfterStop),
        },
    };
    outcome.unwrap_or_else(|e| ToolResult::error(format!("Tool failed: {e}")))
}

/// Awaits a hook or tool future, turning a panic into an error.
async fn guarded<T>(future: impl Future<Output = T>) -> Result<T, Panicked> {
    AssertUnwindSafe(future)
        .catch_unwind()
        .await
        .map_err(|panic| Panicked {
            message: panic_text(&*panic),
        })
}

fn panic_text(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
