//! What stands between the model and a tool, as the policy builds it for each agent: an
//! ordered list of [`Step`]s, each made into an [`Interceptor`] for the caller (the
//! agent's role, or the user's own `!command`). The policy's own steps are the plan
//! gate and the approval; the rest (the user's hooks, the checkpoints) are [`Stage`]s
//! the runtime puts in the list, in one place (`setup`).

use super::exec::{ApprovalGate, ApprovalMode, GateCall};
use super::roles::{AgentRole, ToolRules};
use async_trait::async_trait;
use claw_agent::{CheckedArgs, Interceptor, Next, ToolCallContext, ToolResult};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whom a pipeline serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The agent calling, or (with `by_user`) the agent a user's call is made for.
    pub role: AgentRole,
    /// A call the user makes (a `!command`): plan mode does not refuse it.
    pub by_user: bool,
}

/// A step of the pipeline that the runtime adds (hooks, checkpoints): made into an
/// interceptor for each caller, or `None` when it has nothing to do for that caller.
pub trait Stage: Send + Sync {
    /// The interceptor this stage puts around the calls of `caller`.
    fn interceptor(&self, caller: &Caller) -> Option<Arc<dyn Interceptor>>;
}

/// One place in the pipeline, outermost first.
#[derive(Clone)]
pub enum Step {
    /// Plan mode refuses the main agent's calls of tools that change anything, also in
    /// a run that started before the switch.
    PlanGate,
    /// The tool's approval mode: ask the user, refuse, or let it run.
    Approval,
    /// A step the runtime adds.
    Stage(Arc<dyn Stage>),
}

/// The policy's state its own steps read.
pub(super) struct Gates {
    /// Plan mode is on.
    pub(super) planning: AtomicBool,
    /// The approvals, shared by every agent ("allow for this session" holds for all).
    pub(super) approvals: ApprovalGate,
}

/// The interceptors of `steps` for `caller`, whose tools have `rules`.
pub(super) fn interceptors(
    steps: &[Step],
    gates: &Arc<Gates>,
    caller: &Caller,
    rules: &Arc<HashMap<String, ToolRules>>,
) -> Vec<Arc<dyn Interceptor>> {
    steps
        .iter()
        .filter_map(|step| match step {
            Step::PlanGate => (caller.role == AgentRole::Main && !caller.by_user).then(|| {
                Arc::new(PlanGate {
                    gates: gates.clone(),
                    rules: rules.clone(),
                }) as Arc<dyn Interceptor>
            }),
            Step::Approval => Some(Arc::new(Approval {
                gates: gates.clone(),
                rules: rules.clone(),
                role: caller.role.clone(),
            }) as Arc<dyn Interceptor>),
            Step::Stage(stage) => stage.interceptor(caller),
        })
        .collect()
}

/// Refuses the main agent's calls of tools that are not read-only while plan mode is on.
struct PlanGate {
    gates: Arc<Gates>,
    rules: Arc<HashMap<String, ToolRules>>,
}

#[async_trait]
impl Interceptor for PlanGate {
    async fn around(
        &self,
        call: &ToolCallContext<'_>,
        args: CheckedArgs,
        next: Next<'_>,
    ) -> ToolResult {
        let read_only = self
            .rules
            .get(call.tool_name())
            .is_some_and(|rules| rules.read_only);
        if !read_only && self.gates.planning.load(Ordering::SeqCst) {
            return ToolResult::error(format!(
                "{} was not run: the user switched on plan mode. Change nothing now; \
                 finish with a plan.",
                call.tool_name()
            ));
        }
        next.run(args).await
    }
}

/// Result of a call aborted while its approval was being asked for.
pub const CANCELLED_WHILE_ASKING: &str =
    "Cancelled while waiting for the user's approval; the call did not run.";

/// Lets a call run under its tool's approval mode (a tool without rules is asked for:
/// the strictest mode that still lets the user decide).
struct Approval {
    gates: Arc<Gates>,
    rules: Arc<HashMap<String, ToolRules>>,
    role: AgentRole,
}

#[async_trait]
impl Interceptor for Approval {
    async fn around(
        &self,
        call: &ToolCallContext<'_>,
        args: CheckedArgs,
        next: Next<'_>,
    ) -> ToolResult {
        let mode = self
            .rules
            .get(call.tool_name())
            .map_or(ApprovalMode::Ask, |rules| rules.approval);
        // Nobody is asked about a call the tool refuses before running anything.
        if mode == ApprovalMode::Ask
            && let Some(refused) = call.tool.refusal(&args)
        {
            return refused;
        }
        let gate_call = GateCall {
            tool_name: call.tool_name(),
            tool_call_id: call.tool_call_id,
            args: args.value(),
            subagent: self.role.subagent(),
        };
        let verdict = tokio::select! {
            biased;
            () = call.cancel.cancelled() => Err(CANCELLED_WHILE_ASKING.to_owned()),
            verdict = self.gates.approvals.check(mode, gate_call) => {
                verdict.map_err(|refused| refused.to_string())
            }
        };
        match verdict {
            Ok(()) => next.run(args).await,
            Err(reason) => ToolResult::error(reason),
        }
    }
}
