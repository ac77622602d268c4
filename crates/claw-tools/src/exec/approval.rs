//! Approval: who answers when a tool call needs the user's consent, and the gate that
//! asks them. The gate is used only by the tool policy (`crate::policy`), which
//! puts it in front of every tool of every agent.

use crate::policy::SubagentRef;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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
    /// This request's id, unique in the process (`approval-N`): the answer names it.
    pub id: String,
    /// The tool call waiting for the answer (ids are only unique within one agent).
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// The call's arguments (for `exec`: `command`, `cwd`, `timeout`).
    pub args: Value,
    /// The subagent making the call; absent for the main agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<SubagentRef>,
}

/// The user's answer to an [`ApprovalRequest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call.
    Allow,
    /// Run this call and every later call of the same tool in this process, by any
    /// agent, without asking.
    AllowSession,
    /// Do not run it.
    Deny,
}

/// Asks the user and resolves with the decision.
pub type ApprovalAsker =
    Arc<dyn Fn(ApprovalRequest) -> BoxFuture<'static, ApprovalDecision> + Send + Sync>;

/// Who answers approval requests.
#[derive(Clone)]
pub enum Approver {
    /// A user answers through this asker (the client's overlay, RPC `approve`).
    Ask(ApprovalAsker),
    /// Nobody can answer (`-p` or `--mode json` without `--yes`): calls that need
    /// approval are refused, and the model is told why.
    Nobody,
    /// `--yes` in a mode without a user to ask: calls that need approval run.
    AllowAll,
}

impl std::fmt::Debug for Approver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Approver::Ask(_) => "Approver::Ask",
            Approver::Nobody => "Approver::Nobody",
            Approver::AllowAll => "Approver::AllowAll",
        })
    }
}

/// The tool whose refusals get the command-specific wording below.
const EXEC: &str = "exec";

/// Reason given to the model when the policy forbids commands.
pub const ALWAYS_DENY_REASON: &str = "Running commands is disabled by the user's settings \
     ([exec] approval = \"always-deny\"). Do not retry; do the task with the other tools, \
     or tell the user which command you would run.";

/// Reason given to the model when the user says no.
pub const USER_DENIED_REASON: &str = "The user denied running this command. Do not retry \
     it; ask the user how to proceed or take another approach.";

/// Reason given to the model when a command needs approval and nobody can give it.
pub const NOBODY_TO_ASK_REASON: &str = "This command needs the user's approval \
     ([exec] approval = \"ask\"), but claw-tui runs without anyone to ask (-p or --mode \
     json without --yes), so it was not run. Do not retry; do the task with the other \
     tools, or tell the user which command you would run.";

/// The reason a call was refused, in the words the model reads.
fn reason(tool: &str, why: Refusal) -> String {
    match (tool == EXEC, why) {
        (true, Refusal::Forbidden) => ALWAYS_DENY_REASON.to_owned(),
        (true, Refusal::Denied) => USER_DENIED_REASON.to_owned(),
        (true, Refusal::NobodyToAsk) => NOBODY_TO_ASK_REASON.to_owned(),
        (false, Refusal::Forbidden) => {
            format!("Calling {tool} is disabled by the user's settings. Do not retry.")
        }
        (false, Refusal::Denied) => format!(
            "The user denied this {tool} call. Do not retry it; ask the user how to proceed."
        ),
        (false, Refusal::NobodyToAsk) => format!(
            "This {tool} call needs the user's approval, but claw-tui runs without anyone \
             to ask (-p or --mode json without --yes), so it was not run. Do not retry."
        ),
    }
}

#[derive(Clone, Copy, Debug)]
enum Refusal {
    Forbidden,
    Denied,
    NobodyToAsk,
}

/// Why the gate did not let a call run; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
#[error("{}", reason(tool, *why))]
pub(crate) struct Refused {
    tool: String,
    why: Refusal,
}

/// One call as the gate sees it.
pub(crate) struct GateCall<'a> {
    pub(crate) tool_name: &'a str,
    pub(crate) tool_call_id: &'a str,
    pub(crate) args: &'a Value,
    pub(crate) subagent: Option<&'a SubagentRef>,
}

/// Decides, per call, whether it may run under a tool's [`ApprovalMode`]; shared by
/// every agent of the process, so "allow for this session" holds for all of them.
pub(crate) struct ApprovalGate {
    approver: Approver,
    /// Tools the user allowed for the rest of the session.
    allowed_for_session: Mutex<HashSet<String>>,
    next_id: AtomicU64,
}

impl ApprovalGate {
    pub(crate) fn new(approver: Approver) -> Self {
        Self {
            approver,
            allowed_for_session: Mutex::new(HashSet::new()),
            next_id: AtomicU64::new(1),
        }
    }

    /// `Ok` when the call may run, else the reason the model gets.
    pub(crate) async fn check(
        &self,
        mode: ApprovalMode,
        call: GateCall<'_>,
    ) -> Result<(), Refused> {
        let refuse = |why| {
            Err(Refused {
                tool: call.tool_name.to_owned(),
                why,
            })
        };
        match mode {
            ApprovalMode::Never => return Ok(()),
            ApprovalMode::AlwaysDeny => return refuse(Refusal::Forbidden),
            ApprovalMode::Ask => {}
        }
        if self.is_allowed_for_session(call.tool_name) {
            return Ok(());
        }
        let asker = match &self.approver {
            Approver::AllowAll => return Ok(()),
            Approver::Nobody => return refuse(Refusal::NobodyToAsk),
            Approver::Ask(asker) => asker.clone(),
        };
        let request = ApprovalRequest {
            id: format!("approval-{}", self.next_id.fetch_add(1, Ordering::Relaxed)),
            tool_call_id: call.tool_call_id.to_owned(),
            tool_name: call.tool_name.to_owned(),
            args: call.args.clone(),
            subagent: call.subagent.cloned(),
        };
        match asker(request).await {
            ApprovalDecision::Allow => Ok(()),
            ApprovalDecision::AllowSession => {
                self.allow_for_session(call.tool_name);
                Ok(())
            }
            ApprovalDecision::Deny => refuse(Refusal::Denied),
        }
    }

    fn is_allowed_for_session(&self, tool: &str) -> bool {
        // A poisoned set was only ever inserted into; what it holds is still valid.
        self.allowed_for_session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(tool)
    }

    fn allow_for_session(&self, tool: &str) {
        self.allowed_for_session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tool.to_owned());
    }
}
