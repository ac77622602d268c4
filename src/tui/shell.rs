//! The client's `!command` as one slice: a shell command the user typed runs through
//! the exec tool as the policy gives it to the main agent (approval, sandbox, limits),
//! and its start, output and end come back as a tool call's events. The model side is
//! `app/shell.rs`; the root `Msg` and `Effect` carry these as `Shell(..)`.

use super::MsgSender;
use crate::agent::{AgentEvent, EventSink, ToolResult, ToolUpdates};
use crate::tools::exec::EXEC_TOOL_NAME;
use crate::tools::policy::{AgentRole, ToolPolicy};
use tokio_util::sync::CancellationToken;

/// What the runtime answers.
#[derive(Clone, Debug)]
pub enum Msg {
    /// An event of a command: its start, output and end, as a tool call's.
    Event(AgentEvent),
}

/// What the model asks the runtime to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Run `command`; its events carry the call id `id`.
    Run {
        /// The call id its events carry.
        id: String,
        /// The command.
        command: String,
    },
    /// Stop the commands that still run.
    CancelAll,
}

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
            let _ = tx.send(super::msg::Msg::Shell(Msg::Event(event)));
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

/// What opens a shell block in a user message.
pub const SHELL_OPEN: &str = "<shell-command>";

/// The block a kept command's output becomes in the next message.
pub fn shell_block(command: &str, result: &ToolResult) -> String {
    format!(
        "{SHELL_OPEN}{command}</shell-command>\n<shell-output>\n{}\n</shell-output>",
        result.content.trim_end()
    )
}

/// Splits the shell blocks off the front of a user message: the commands, and the
/// text the user wrote.
pub fn split_shell_blocks(text: &str) -> (Vec<&str>, &str) {
    let mut commands = Vec::new();
    let mut rest = text;
    while let Some(after) = rest.strip_prefix(SHELL_OPEN) {
        let Some((command, tail)) = after.split_once("</shell-command>") else {
            break;
        };
        let Some(end) = tail.find("</shell-output>") else {
            break;
        };
        commands.push(command);
        rest = tail[end + "</shell-output>".len()..].trim_start_matches('\n');
    }
    (commands, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_split_off_the_front_of_a_message() {
        let one = shell_block("ls", &ToolResult::text("a\nb\n[exit code: 0]"));
        let two = shell_block("pwd", &ToolResult::text("/w"));
        let text = format!("{one}\n\n{two}\n\nwhat now?");
        assert_eq!(split_shell_blocks(&text), (vec!["ls", "pwd"], "what now?"));
        assert_eq!(split_shell_blocks("plain"), (vec![], "plain"));
        let torn = format!("{SHELL_OPEN}ls</shell-command> no output tag");
        assert_eq!(split_shell_blocks(&torn).1, torn);
    }
}
