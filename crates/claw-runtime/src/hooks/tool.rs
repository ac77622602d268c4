//! The tool hooks: `before_tool` (block a call, or rewrite its arguments, which are
//! validated again) and `after_tool` (replace the result), and the marks they leave in a
//! result's details (`details.hook`) for the tool tree and the headless output.

use super::Hooks;
use super::config::HookCommand;
use super::event::{CallFields, HookEvent, Reply, SeenResult};
use crate::agent::{ArgsError, CheckedArgs, ToolCallContext, ToolResult};
use serde_json::{Value, json};
use std::ops::ControlFlow;
use tokio_util::sync::CancellationToken;

/// What the `before_tool` hooks decided.
#[derive(Clone, Debug, PartialEq)]
pub enum BeforeTool {
    /// Run the call with these arguments; `rewritten` when a hook changed them.
    Run {
        /// The arguments to run with (checked against the tool's schema).
        args: CheckedArgs,
        /// Whether a hook rewrote them.
        rewritten: bool,
    },
    /// Do not run it: the result the model gets instead (with the hook's mark).
    Refuse(ToolResult),
}

/// Prefix of the result of a call a hook blocked.
pub const BLOCKED_PREFIX: &str = "Blocked by a hook:";

/// The result of a call cancelled while a `before_tool` hook ran.
pub const CANCELLED_IN_HOOK: &str =
    "Cancelled while a before_tool hook ran (it was stopped); the call did not run.";

/// Adds `key: value` to `details.hook`, keeping what the tool put in `details`.
fn mark(details: &mut Value, key: &str, value: Value) {
    if !details.is_object() {
        let tool = std::mem::take(details);
        *details = if tool.is_null() {
            json!({})
        } else {
            json!({ "tool": tool })
        };
    }
    if let Some(map) = details.as_object_mut() {
        let hook = map.entry("hook").or_insert_with(|| json!({}));
        if let Some(hook) = hook.as_object_mut() {
            hook.insert(key.to_owned(), value);
        }
    }
}

/// What hooks did to a call, as the tool tree shows it: `⛔ blocked by hook: reason`,
/// `✎ args rewritten by hook`, `✎ result replaced by hook`.
pub fn hook_marks(details: &Value) -> Vec<String> {
    let Some(hook) = details.get("hook") else {
        return Vec::new();
    };
    let mut marks = Vec::new();
    if let Some(reason) = hook.get("blocked").and_then(Value::as_str) {
        marks.push(format!("⛔ blocked by hook: {reason}"));
    }
    if hook.get("invalid_args").is_some() {
        marks.push("⛔ args rewritten by hook are invalid".to_owned());
    } else if hook.get("rewritten_args").is_some() {
        marks.push("✎ args rewritten by hook".to_owned());
    }
    if hook.get("result_replaced").is_some() {
        marks.push("✎ result replaced by hook".to_owned());
    }
    marks
}

fn blocked(reason: String) -> ToolResult {
    let mut result = ToolResult::error(format!("{BLOCKED_PREFIX} {reason}"));
    mark(&mut result.details, "blocked", Value::String(reason));
    result
}

/// What is wrong with arguments a hook rewrote, for the model: each failing path, or
/// why nothing could be checked.
fn problems(error: &ArgsError) -> String {
    match error {
        ArgsError::Invalid { violations, .. } => violations.to_string(),
        ArgsError::Uncheckable { source, .. } => source.to_string(),
        other => other.to_string(),
    }
}

impl Hooks {
    /// Whether a `before_tool` or `after_tool` hook is for the tool `name`.
    pub fn has_tool_hooks(&self, name: &str) -> bool {
        self.inner.as_ref().is_some_and(|i| {
            i.config
                .before_tool
                .iter()
                .chain(&i.config.after_tool)
                .any(|h| h.applies_to(name))
        })
    }

    /// Runs the `before_tool` hooks for `call` with `args` (each sees the arguments the
    /// previous one left); a rewrite is checked against the tool's schema. The call's
    /// cancellation (`tool.cancel`) kills a hook still running, and the call does not run.
    pub async fn before_tool(
        &self,
        call: &CallFields,
        args: CheckedArgs,
        tool: &ToolCallContext<'_>,
    ) -> BeforeTool {
        let Some(inner) = &self.inner else {
            return BeforeTool::Run {
                args,
                rewritten: false,
            };
        };
        let hooks: Vec<&(dyn HookCommand + Sync)> = inner
            .config
            .before_tool
            .iter()
            .filter(|h| h.applies_to(&call.tool_name))
            .map(|h| h as _)
            .collect();
        let mut state = (args, false);
        let flow = self
            .run_all(
                inner,
                &hooks,
                &mut state,
                |(args, _)| HookEvent::BeforeTool {
                    call: call.clone(),
                    args: args.value().clone(),
                },
                tool.cancel,
                |(args, rewritten), command, reply| match reply {
                    Reply::Continue => ControlFlow::Continue(()),
                    Reply::Cancelled => ControlFlow::Break(ToolResult::error(CANCELLED_IN_HOOK)),
                    Reply::Block(reason) => ControlFlow::Break(blocked(reason)),
                    Reply::Untrusted(why) => {
                        self.refused(inner, "before_tool", command, &why, "The call was blocked.");
                        ControlFlow::Break(blocked(why))
                    }
                    Reply::Answer(answer) => {
                        if let Some(reason) = answer.blocks(command) {
                            return ControlFlow::Break(blocked(reason));
                        }
                        let Some(new_args) = answer.args else {
                            return ControlFlow::Continue(());
                        };
                        match tool.check(new_args.clone()) {
                            Ok(checked) => {
                                *args = checked;
                                *rewritten = true;
                                ControlFlow::Continue(())
                            }
                            Err(error) => {
                                let mut result = ToolResult::error(format!(
                                    "A before_tool hook (`{}`) rewrote the arguments of {} into \
                                     invalid ones, so the call did not run:\n{}\n\nRewritten \
                                     arguments:\n{new_args}",
                                    crate::text::clip(command, 80),
                                    call.tool_name,
                                    problems(&error),
                                ));
                                mark(&mut result.details, "invalid_args", new_args);
                                ControlFlow::Break(result)
                            }
                        }
                    }
                },
            )
            .await;
        match flow {
            ControlFlow::Break(result) => BeforeTool::Refuse(result),
            ControlFlow::Continue(()) => {
                let (args, rewritten) = state;
                BeforeTool::Run { args, rewritten }
            }
        }
    }

    /// Runs the `after_tool` hooks for `call` (which ran with `args`) on its `result`;
    /// each may replace it. Marks a rewrite of the arguments (`rewritten`) too.
    pub async fn after_tool(
        &self,
        call: &CallFields,
        args: &Value,
        rewritten: bool,
        mut result: ToolResult,
    ) -> ToolResult {
        if rewritten {
            mark(&mut result.details, "rewritten_args", args.clone());
        }
        let Some(inner) = &self.inner else {
            return result;
        };
        let hooks: Vec<&(dyn HookCommand + Sync)> = inner
            .config
            .after_tool
            .iter()
            .filter(|h| h.applies_to(&call.tool_name))
            .map(|h| h as _)
            .collect();
        // Not cancelled with the call: the result is kept in the history either way, and
        // a hook that redacts it must still see it.
        let _ = self
            .run_all(
                inner,
                &hooks,
                &mut result,
                |result| HookEvent::AfterTool {
                    call: call.clone(),
                    args: args.clone(),
                    result: SeenResult {
                        content: result.content.clone(),
                        is_error: result.is_error,
                    },
                },
                &CancellationToken::new(),
                |result, command, reply| match reply {
                    Reply::Continue | Reply::Cancelled => ControlFlow::Continue(()),
                    Reply::Untrusted(why) => {
                        // The hook may be what keeps a secret out of the result: withheld.
                        self.refused(
                            inner,
                            "after_tool",
                            command,
                            &why,
                            "The result was withheld.",
                        );
                        result.content = format!("{BLOCKED_PREFIX} {why}; the result is withheld");
                        result.is_error = true;
                        mark(&mut result.details, "blocked", Value::String(why));
                        ControlFlow::Break(())
                    }
                    Reply::Block(reason) => {
                        block_result(result, reason);
                        ControlFlow::Break(())
                    }
                    Reply::Answer(answer) => {
                        if let Some(reason) = answer.blocks(command) {
                            block_result(result, reason);
                            return ControlFlow::Break(());
                        }
                        if let Some(content) = answer.result {
                            result.content = content;
                            if let Some(is_error) = answer.is_error {
                                result.is_error = is_error;
                            }
                            mark(&mut result.details, "result_replaced", Value::Bool(true));
                        }
                        ControlFlow::Continue(())
                    }
                },
            )
            .await;
        result
    }
}

/// `result` replaced by a hook's block.
fn block_result(result: &mut ToolResult, reason: String) {
    result.content = format!("{BLOCKED_PREFIX} {reason}");
    result.is_error = true;
    mark(&mut result.details, "blocked", Value::String(reason));
}
