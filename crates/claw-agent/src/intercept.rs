//! The one way from a tool call to its tool: the arguments are checked against the
//! tool's schema once, then an ordered list of [`Interceptor`]s runs around the tool,
//! outermost first. Each sees the call and its checked arguments and decides what
//! happens next:
//!
//! - *before* the tool: run the rest of the list as it is (`next.run(args)`), block or
//!   answer the call itself (return a result without calling `next`), or rewrite the
//!   arguments (`next.run(call.check(new)?)`: rewritten arguments are checked as well,
//!   and only checked arguments can reach a tool);
//! - *after* it: keep or replace the result `next.run` returned.
//!
//! A [`ToolSet`](crate::ToolSet) carries the list its tools run under, so whoever hands
//! an agent its tools decides what stands between the model and them; the loop adds
//! its own `before_tool_call` / `after_tool_call` hooks
//! ([`LoopConfig`](crate::LoopConfig)) outermost. Calls made outside the loop (a command the user
//! types) go through the same list with [`ToolSet::call`](crate::ToolSet::call).

use crate::tool::{Tool, ToolResult, ToolUpdates};
use crate::tool_args::ArgsError;
use async_trait::async_trait;
use futures::FutureExt;
use serde_json::Value;
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a stopped tool may take to wind down before it is abandoned.
const ABORT_GRACE: Duration = Duration::from_secs(5);

/// Arguments that passed the tool's schema. Only [`ToolCallContext::check`] makes one,
/// so a tool never runs with arguments nobody checked.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedArgs(Value);

impl CheckedArgs {
    /// Arguments the caller has just checked.
    pub(crate) fn new(args: Value) -> Self {
        Self(args)
    }

    /// The arguments.
    pub fn value(&self) -> &Value {
        &self.0
    }

    /// The arguments, taken out.
    pub fn into_value(self) -> Value {
        self.0
    }

    /// `args` checked against `tool`'s schema as the tool set checks them, for a call
    /// made outside any tool set (a test, a probe): the schema is compiled for this one
    /// call.
    pub fn for_tool(tool: &dyn Tool, args: Value) -> Result<Self, ArgsError> {
        crate::tool_set::check_alone(tool, args).map(Self)
    }
}

/// Checks arguments against one tool's schema (the validator compiled once per tool):
/// the arguments to give the tool.
pub(crate) type Checker<'a> = &'a (dyn Fn(Value) -> Result<Value, ArgsError> + Send + Sync);

/// One tool call as the interceptors around it see it.
pub struct ToolCallContext<'a> {
    /// The call's id.
    pub tool_call_id: &'a str,
    /// The tool called.
    pub tool: &'a Arc<dyn Tool>,
    /// Fires when the call is stopped (by the user, or the run's abort).
    pub cancel: &'a CancellationToken,
    /// Where the tool publishes partial output.
    pub updates: &'a ToolUpdates,
    pub(crate) checker: Checker<'a>,
    /// Set once the tool itself was started (no interceptor answered instead).
    pub(crate) ran: AtomicBool,
}

impl ToolCallContext<'_> {
    /// The tool's name.
    pub fn tool_name(&self) -> &str {
        self.tool.name()
    }

    /// Whether the tool itself was started: false when an interceptor blocked or
    /// answered the call (asked after `next.run` returned).
    pub fn tool_ran(&self) -> bool {
        self.ran.load(Ordering::Acquire)
    }

    /// Checks `args` against the tool's schema (for an interceptor that rewrites them).
    pub fn check(&self, args: Value) -> Result<CheckedArgs, ArgsError> {
        (self.checker)(args).map(CheckedArgs)
    }
}

/// A step around every tool call of a [`ToolSet`](crate::ToolSet); see the module doc.
#[async_trait]
pub trait Interceptor: Send + Sync {
    /// Runs around the rest of the pipeline (`next`), which ends in the tool.
    async fn around(
        &self,
        call: &ToolCallContext<'_>,
        args: CheckedArgs,
        next: Next<'_>,
    ) -> ToolResult;
}

/// The rest of the pipeline after an interceptor: the interceptors inside it, then the
/// tool.
pub struct Next<'a> {
    pub(crate) rest: &'a [Arc<dyn Interceptor>],
    pub(crate) call: &'a ToolCallContext<'a>,
}

impl Next<'_> {
    /// Runs the rest of the pipeline with `args` and returns its result.
    pub async fn run(self, args: CheckedArgs) -> ToolResult {
        let call = self.call;
        match self.rest.split_first() {
            Some((first, rest)) => {
                let next = Next { rest, call };
                match guarded(first.around(call, args, next)).await {
                    Ok(result) => result,
                    Err(panic) => ToolResult::error(format!("Tool failed: {panic}")),
                }
            }
            None => {
                call.ran.store(true, Ordering::Release);
                let execution = call.tool.execute(
                    call.tool_call_id,
                    args,
                    call.cancel.clone(),
                    call.updates.clone(),
                );
                run_until_stopped(execution, call.cancel).await
            }
        }
    }
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

/// A hook, interceptor or tool future panicked.
#[derive(Debug, thiserror::Error)]
#[error("panicked: {message}")]
pub(crate) struct Panicked {
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

/// Awaits a hook, interceptor or tool future, turning a panic into an error.
pub(crate) async fn guarded<T>(future: impl Future<Output = T>) -> Result<T, Panicked> {
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
