//! The client's `!command` as one slice: a shell command the user typed runs through
//! the exec tool as the policy gives it to the main agent (approval, sandbox, limits),
//! and its start, output and end come back as a tool call's events. The model side is
//! `app/shell.rs`, the runner `host/shell.rs`; the root `Msg` and `Effect` carry these
//! as `Shell(..)`. The blocks a kept command's output becomes in the next message are
//! written and read here.

use claw_agent::{AgentEvent, ToolResult};

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
