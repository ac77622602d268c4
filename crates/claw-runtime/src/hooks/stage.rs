//! The tool hooks as a step of the tool-call pipeline: `before_tool` hooks first (they
//! may block the call or rewrite its arguments, which are then what the user is asked
//! to approve), the rest of the pipeline, then the `after_tool` hooks.

use super::Hooks;
use super::event::CallFields;
use super::tool::BeforeTool;
use crate::agent::{CheckedArgs, Interceptor, Next, ToolCallContext, ToolResult};
use crate::tools::pipeline::{Caller, Stage};
use async_trait::async_trait;
use serde_json::Value;
use std::sync::Arc;

/// Told about the result details of each call whose `after_tool` hooks ran (a hook
/// may have changed the file the tool wrote: a formatter).
pub type HookedResultObserver = Arc<dyn Fn(&Value) + Send + Sync>;

/// The user's tool hooks, for every agent's calls.
pub struct HookStage {
    hooks: Hooks,
    observer: Option<HookedResultObserver>,
}

impl HookStage {
    /// Runs `hooks` around the calls; `observer` is called (off the async runtime) with
    /// the result details of every call after its `after_tool` hooks ran.
    pub fn new(hooks: Hooks, observer: Option<HookedResultObserver>) -> Self {
        Self { hooks, observer }
    }
}

impl Stage for HookStage {
    fn interceptor(&self, caller: &Caller) -> Option<Arc<dyn Interceptor>> {
        Some(Arc::new(HookInterceptor {
            hooks: self.hooks.clone(),
            observer: self.observer.clone(),
            agent: caller.role.hook_agent(),
        }))
    }
}

/// The hooks around the calls of one agent (`agent` is who hooks are told calls).
struct HookInterceptor {
    hooks: Hooks,
    observer: Option<HookedResultObserver>,
    agent: Value,
}

#[async_trait]
impl Interceptor for HookInterceptor {
    async fn around(
        &self,
        call: &ToolCallContext<'_>,
        args: CheckedArgs,
        next: Next<'_>,
    ) -> ToolResult {
        if !self.hooks.has_tool_hooks(call.tool_name()) {
            return next.run(args).await;
        }
        let hooked = CallFields {
            tool_name: call.tool_name().to_owned(),
            tool_call_id: call.tool_call_id.to_owned(),
            agent: self.agent.clone(),
        };
        let (args, rewritten) = match self.hooks.before_tool(&hooked, args, call).await {
            BeforeTool::Run { args, rewritten } => (args, rewritten),
            BeforeTool::Refuse(result) => return result,
        };
        let ran_with = args.value().clone();
        let result = next.run(args).await;
        if !call.tool_ran() {
            // Refused further in (the approval): there is no result of the tool's to
            // look at, and nothing a formatter should touch.
            return result;
        }
        let result = self
            .hooks
            .after_tool(&hooked, &ran_with, rewritten, result)
            .await;
        if let Some(observer) = self.observer.clone() {
            let details = result.details.clone();
            let _ = tokio::task::spawn_blocking(move || observer(&details)).await;
        }
        result
    }
}
