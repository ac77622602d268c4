//! The approval policy for `exec`: a `before_tool_call` hook that lets calls through,
//! asks the user, or blocks them.

use crate::agent::{BeforeToolCall, BeforeToolCallContext, BeforeToolCallHook};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// `[exec] approval`: whether commands need the user's approval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Every command runs without asking.
    #[default]
    Never,
    /// Each command is shown to the user first.
    Ask,
    /// No command runs.
    AlwaysDeny,
}

/// A question to the user about one tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct ApprovalRequest {
    /// The tool call id.
    pub id: String,
    /// The tool's name.
    pub tool_name: String,
    /// The call's arguments (for `exec`: `command`, `cwd`, `timeout`).
    pub args: Value,
}

/// The user's answer to an [`ApprovalRequest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call.
    Allow,
    /// Run this call and every later `exec` call of the session without asking.
    AllowSession,
    /// Do not run it.
    Deny,
}

/// Asks the user and resolves with the decision.
pub type ApprovalAsker =
    Arc<dyn Fn(ApprovalRequest) -> BoxFuture<'static, ApprovalDecision> + Send + Sync>;

/// The tool name the policy applies to.
const EXEC: &str = "exec";

/// Reason given to the model when the policy forbids commands.
pub const ALWAYS_DENY_REASON: &str = "Running commands is disabled by the user's settings \
     ([exec] approval = \"always-deny\"). Do not retry; do the task with the other tools, \
     or tell the user which command you would run.";

/// Reason given to the model when the user says no.
pub const USER_DENIED_REASON: &str = "The user denied running this command. Do not retry \
     it; ask the user how to proceed or take another approach.";

/// A `before_tool_call` hook enforcing `mode` on `exec` calls; other tools pass.
///
/// With [`ApprovalMode::Ask`], `asker` is called for each `exec` call. An
/// [`ApprovalDecision::AllowSession`] answer approves *all* later `exec` calls for as long
/// as this hook is installed, whatever their command, so build one hook per session.
pub fn approval_hook(mode: ApprovalMode, asker: ApprovalAsker) -> BeforeToolCallHook {
    let session_allowed = Arc::new(AtomicBool::new(false));
    Arc::new(move |ctx: BeforeToolCallContext| {
        let asker = asker.clone();
        let session_allowed = session_allowed.clone();
        Box::pin(async move {
            if ctx.tool_name != EXEC {
                return Ok(BeforeToolCall::Continue);
            }
            match mode {
                ApprovalMode::Never => Ok(BeforeToolCall::Continue),
                ApprovalMode::AlwaysDeny => Ok(BeforeToolCall::Block {
                    reason: ALWAYS_DENY_REASON.to_owned(),
                }),
                ApprovalMode::Ask => {
                    if session_allowed.load(Ordering::Acquire) {
                        return Ok(BeforeToolCall::Continue);
                    }
                    let request = ApprovalRequest {
                        id: ctx.tool_call_id,
                        tool_name: ctx.tool_name,
                        args: ctx.args,
                    };
                    match asker(request).await {
                        ApprovalDecision::Allow => Ok(BeforeToolCall::Continue),
                        ApprovalDecision::AllowSession => {
                            session_allowed.store(true, Ordering::Release);
                            Ok(BeforeToolCall::Continue)
                        }
                        ApprovalDecision::Deny => Ok(BeforeToolCall::Block {
                            reason: USER_DENIED_REASON.to_owned(),
                        }),
                    }
                }
            }
        })
    })
}
