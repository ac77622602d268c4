//! The loop's own `before_tool_call` / `after_tool_call` hooks (pi-agent-core's API) as
//! the outermost interceptor of every call the loop makes.

use crate::config::{AfterToolCallContext, BeforeToolCall, BeforeToolCallContext, LoopConfig};
use crate::config::{AfterToolCallHook, BeforeToolCallHook};
use crate::intercept::{CheckedArgs, Interceptor, Next, ToolCallContext, guarded};
use crate::tool::ToolResult;
use async_trait::async_trait;
use std::sync::Arc;

/// The hooks of one run's configuration, around each of its calls.
pub(crate) struct LoopHooks {
    before: Option<BeforeToolCallHook>,
    after: Option<AfterToolCallHook>,
}

impl LoopHooks {
    /// The interceptor for `config`'s hooks, if it has any.
    pub(crate) fn of(config: &LoopConfig) -> Option<Arc<dyn Interceptor>> {
        if config.before_tool_call.is_none() && config.after_tool_call.is_none() {
            return None;
        }
        Some(Arc::new(LoopHooks {
            before: config.before_tool_call.clone(),
            after: config.after_tool_call.clone(),
        }))
    }
}

#[async_trait]
impl Interceptor for LoopHooks {
    async fn around(
        &self,
        call: &ToolCallContext<'_>,
        mut args: CheckedArgs,
        next: Next<'_>,
    ) -> ToolResult {
        if let Some(hook) = &self.before {
            let context = BeforeToolCallContext {
                tool_call_id: call.tool_call_id.to_owned(),
                tool_name: call.tool_name().to_owned(),
                args: args.value().clone(),
            };
            match guarded(hook(context)).await {
                Ok(Ok(BeforeToolCall::Continue)) => {}
                Ok(Ok(BeforeToolCall::Block { reason })) => return ToolResult::error(reason),
                Ok(Ok(BeforeToolCall::ReplaceArgs(new_args))) => match call.check(new_args) {
                    Ok(checked) => args = checked,
                    Err(problem) => {
                        return ToolResult::error(format!(
                            "before_tool_call replaced the arguments with invalid ones.\n{problem}"
                        ));
                    }
                },
                Ok(Err(e)) => {
                    return ToolResult::error(format!("before_tool_call hook failed: {e}"));
                }
                Err(e) => return ToolResult::error(format!("before_tool_call hook failed: {e}")),
            }
        }
        let Some(hook) = &self.after else {
            return next.run(args).await;
        };
        let ran_with = args.value().clone();
        let mut result = next.run(args).await;
        let context = AfterToolCallContext {
            tool_call_id: call.tool_call_id.to_owned(),
            tool_name: call.tool_name().to_owned(),
            args: ran_with,
            result: result.clone(),
        };
        match guarded(hook(context)).await {
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
                result
            }
            Ok(Err(e)) => ToolResult::error(format!("after_tool_call hook failed: {e}")),
            Err(e) => ToolResult::error(format!("after_tool_call hook failed: {e}")),
        }
    }
}
