//! `!command` and `!!command`: a shell command the user runs through the exec tool as
//! the tool policy hands it to the main agent (approval, sandbox, limits), shown as a
//! card in the chat and a call in the Tools pane. `!command`'s output goes with the
//! next message the user sends (as a `<shell-command>` block the chat shows folded);
//! `!!command`'s does not.

use super::App;
use crate::chat::{CardInfo, EntryKind};
use crate::msg::Effect;
use crate::part::Handled;
use crate::shell::{self, shell_block};
use claw_agent::{AgentEvent, NoticeLevel};

/// Shell commands run so far and the output waiting for the next message.
#[derive(Clone, Debug, Default)]
pub(super) struct Shells {
    /// Commands started, for their ids.
    count: u64,
    /// Calls whose output is to go with the next message.
    keep: Vec<String>,
    /// Blocks of finished kept commands, for the next message.
    context: Vec<String>,
}

impl Shells {
    /// Whether output waits for the next message.
    pub(super) fn has_context(&self) -> bool {
        !self.context.is_empty()
    }

    /// A new command's call id; `keep`: its output is to go with the next message.
    fn start(&mut self, keep: bool) -> String {
        self.count += 1;
        let id = format!("shell-{}", self.count);
        if keep {
            self.keep.push(id.clone());
        }
        id
    }

    /// Whether call `id` is a kept command still running (taken off that list).
    fn take_kept(&mut self, id: &str) -> bool {
        let Some(i) = self.keep.iter().position(|k| k == id) else {
            return false;
        };
        self.keep.remove(i);
        true
    }

    /// `text` with the output of the kept shell commands in front (which then is gone).
    pub(super) fn with_context(&mut self, text: String) -> String {
        if self.context.is_empty() {
            return text;
        }
        let mut blocks = std::mem::take(&mut self.context);
        blocks.push(text);
        blocks.join("\n\n")
    }
}

impl App {
    /// Runs `command` through the exec tool; `keep`: its output goes with the next
    /// message.
    pub(super) fn shell(&mut self, command: &str, keep: bool) -> Handled {
        if command.is_empty() {
            return self.chat.notice(
                NoticeLevel::Warning,
                "Type a command after !, e.g. !ls -la (!! keeps its output out of the next message).",
            );
        }
        let id = self.shells.start(keep);
        self.tools.announce_shell(&id, command);
        let card = match self.tools.node(&id) {
            Some(node) => CardInfo::of(node, false),
            None => return Handled::unchanged(),
        };
        self.chat.follow();
        let shown = self.chat.own_card(
            &id,
            EntryKind::Shell {
                id: id.clone(),
                command: command.to_owned(),
                keep,
            },
            card,
        );
        shown.with(Effect::Shell(shell::Effect::Run {
            id,
            command: command.to_owned(),
        }))
    }

    /// An event of a shell command the user ran: the tree and the card follow it; a
    /// kept command's result waits for the next message.
    pub(super) fn shell_event(&mut self, event: AgentEvent) -> Handled {
        if let AgentEvent::ToolExecutionEnd {
            tool_call_id,
            result,
            ..
        } = &event
            && self.shells.take_kept(tool_call_id)
            && let Some(command) = self
                .tools
                .node(tool_call_id)
                .and_then(|n| n.args_value().get("command")?.as_str().map(str::to_owned))
        {
            let block = shell_block(&command, result);
            self.shells.context.push(block);
        }
        match self.tools.apply(&event, self.now) {
            Some(id) => Handled::changed().and(self.refresh_card(&id)),
            None => Handled::unchanged(),
        }
    }
}
