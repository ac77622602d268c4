//! The `!command` slice's runner: the commands the user typed run through the exec
//! tool as the policy gives it to the main agent, and their events come back as a
//! tool call's.

use super::MsgSender;
use crate::agent::{AgentEvent, EventSink, ToolResult, ToolUpdates};
use crate::tools::exec::EXEC_TOOL_NAME;
use crate::tools::policy::{AgentRole, ToolPolicy};
use crate::tui::shell::{Effect, Msg};
use tokio_util::sync::CancellationToken;

/// The commands the user ran, stoppable together.
#[derive(Debug, Default)]
pub struct Shells {
    cancel: CancellationToken,
}

impl Shells {
    /// Carries out `effect` with the tools `policy` gives the main agent's user; the
    /// events go to the app through `tx`.
    pub(super) fn run(&mut self, policy: &ToolPolicy, effect: Effect, tx: &MsgSender) {
        match effect {
            Effect::Run { id, command } => self.start(policy, id, command, tx),
            Effect::CancelAll => std::mem::take(&mut self.cancel).cancel(),
        }
    }

    fn start(&self, policy: &ToolPolicy, id: String, command: String, tx: &MsgSender) {
        let tx = tx.clone();
        let send = move |event: AgentEvent| {
            let _ = tx.send(crate::tui::Msg::Shell(Msg::Event(event)));
        };
        let tools = policy.user_tools(&AgentRole::Main);
        let args = serde_json::json!({ "command": command });
        send(AgentEvent::ToolExecutionStart {
            tool_call_id: id.clone(),
            tool_name: EXEC_TOOL_NAME.to_owned(),
            args: args.clone(),
        });
        if tools.get(EXEC_TOOL_NAME).is_none() {
            let result = ToolResult::error(
                "exec is disabled in this configuration ([tools] disabled), so ! commands cannot run.",
            );
            send(AgentEvent::ToolExecutionEnd {
                tool_call_id: id,
                tool_name: EXEC_TOOL_NAME.to_owned(),
                is_error: true,
                result,
            });
            return;
        }
        let cancel = self.cancel.child_token();
        let forward = send.clone();
        tokio::spawn(async move {
            let sink = EventSink::new(forward);
            let updates = ToolUpdates::new(sink, &id, EXEC_TOOL_NAME);
            let result = tools
                .call(None, EXEC_TOOL_NAME, &id, args, &cancel, &updates)
                .await;
            updates.close();
            send(AgentEvent::ToolExecutionEnd {
                tool_call_id: id,
                tool_name: EXEC_TOOL_NAME.to_owned(),
                is_error: result.is_error,
                result,
            });
        });
    }
}
