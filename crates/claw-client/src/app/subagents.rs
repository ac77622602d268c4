//! Subagents' conversations: each is a chat of its own, built from the subagent's
//! events as they arrive (its calls also go under its `spawn` in the tool tree). Enter
//! on a subagent in the dashboard shows its chat read-only in the chat pane, live while
//! it runs; Esc returns to the main chat. A chat nobody looks at costs no frames.

use super::App;
use crate::chat::{CardInfo, Chat};
use crate::layout::Focus;
use crate::part::Handled;
use crate::subagents::{self, SubagentRow};
use crate::tool_tree::ToolTree;
use claw_agent::{AgentEvent, Message, NoticeLevel};
use std::collections::HashMap;
use std::time::Instant;

/// The subagents' chats and the one shown.
#[derive(Clone, Debug, Default)]
pub(super) struct Subagents {
    chats: HashMap<String, Chat>,
    /// The subagent whose chat the chat pane shows instead of the main one.
    viewing: Option<String>,
}

impl Subagents {
    /// The chat shown in the chat pane instead of the main one, if any.
    pub(super) fn shown_mut(&mut self) -> Option<&mut Chat> {
        let id = self.viewing.as_ref()?;
        self.chats.get_mut(id)
    }

    /// The chat the chat pane shows: a subagent's, or `main`.
    pub(super) fn chat<'a>(&'a self, main: &'a Chat) -> &'a Chat {
        self.viewing
            .as_ref()
            .and_then(|id| self.chats.get(id))
            .unwrap_or(main)
    }

    /// The same, to scroll it or lay it out.
    pub(super) fn chat_mut<'a>(&'a mut self, main: &'a mut Chat) -> &'a mut Chat {
        match self.viewing.as_ref().and_then(|id| self.chats.get_mut(id)) {
            Some(chat) => chat,
            None => main,
        }
    }

    /// The subagent shown in the chat pane, if any.
    pub(super) fn viewing(&self) -> Option<&str> {
        self.viewing.as_deref()
    }

    /// Shows subagent `id`'s chat; `false` when this client holds none for it.
    pub(super) fn open(&mut self, id: String) -> bool {
        if !self.chats.contains_key(&id) {
            return false;
        }
        self.viewing = Some(id);
        true
    }

    /// Back to the main chat; returns whether a subagent was shown.
    pub(super) fn close(&mut self) -> bool {
        self.viewing.take().is_some()
    }

    /// The chat pane's title: the main chat, or the subagent shown (named as its row
    /// among `rows` names it).
    pub(super) fn title(&self, rows: &[SubagentRow]) -> String {
        let Some(id) = &self.viewing else {
            return "Chat".to_owned();
        };
        let label = rows
            .iter()
            .find(|s| &s.id == id)
            .map_or_else(|| id.clone(), |s| format!("{} ({id})", s.label));
        format!("Subagent {label} · read-only · Esc returns")
    }

    /// One event of subagent `id` into its chat; a tool call's card shows the call as
    /// `tools` holds it (under its `spawn`). Off screen, only the tree's change counts.
    pub(super) fn apply(&mut self, id: String, event: AgentEvent, tools: &ToolTree) -> Handled {
        let tool_event = is_tool_event(&event);
        let shown = self.viewing.as_deref() == Some(id.as_str());
        let chat = self.chats.entry(id).or_default();
        let mut handled = Handled::changed_if(tool_event || shown);
        match event {
            AgentEvent::MessageStart {
                message: Message::Assistant(m),
            } => {
                let _ = chat.start_answer(m);
            }
            AgentEvent::MessageUpdate { delta } => {
                let _ = chat.apply_delta(&delta);
            }
            AgentEvent::MessageEnd {
                message: Message::Assistant(m),
            } => {
                let _ = chat.end_answer(m, Vec::new());
            }
            AgentEvent::MessageEnd { message } => {
                let _ = chat.message(message);
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. }
            | AgentEvent::ToolExecutionUpdate { tool_call_id, .. }
            | AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                if let Some(node) = tools.node(&tool_call_id) {
                    let card = CardInfo::of(node, chat.is_expanded(&tool_call_id));
                    handled.absorb(chat.set_card(&tool_call_id, card));
                }
            }
            AgentEvent::AgentEnd { .. } => {
                for call in chat.end_run() {
                    if let Some(node) = tools.node(&call) {
                        let _ = chat.set_card(&call, CardInfo::of(node, false));
                    }
                }
            }
            _ => {}
        }
        if !shown {
            // Off screen: nothing to draw for it.
            handled.changed = tool_event;
        }
        handled
    }
}

/// Whether `event` is one of a tool call's (those go under the `spawn` in the tree).
fn is_tool_event(event: &AgentEvent) -> bool {
    matches!(
        event,
        AgentEvent::ToolExecutionStart { .. }
            | AgentEvent::ToolExecutionUpdate { .. }
            | AgentEvent::ToolExecutionEnd { .. }
    )
}

impl App {
    /// What the runtime told about the subagents.
    pub(super) fn subagents_told(&mut self, msg: subagents::Msg, now: Instant) -> Handled {
        match msg {
            subagents::Msg::Event {
                subagent_id,
                parent_call_id,
                event,
            } => {
                if is_tool_event(&event) {
                    self.tools.apply_nested(&parent_call_id, &event, self.now);
                }
                self.subagents.apply(subagent_id, event, &self.tools)
            }
            subagents::Msg::List(rows) => self.dashboard.set_subagents(rows, now),
            subagents::Msg::Update(row) => self.dashboard.update_subagent(row, now),
        }
    }

    /// Shows subagent `id`'s conversation in the chat pane, read-only.
    pub(super) fn open_subagent(&mut self, id: String) -> Handled {
        if !self.subagents.open(id.clone()) {
            return self.chat.notice(
                NoticeLevel::Info,
                format!(
                    "The conversation of {id} is not available: it ran before this session was opened here."
                ),
            );
        }
        self.focus = Focus::Chat;
        Handled::changed()
    }

    /// The subagent shown in the chat pane, if any.
    pub fn viewing_subagent(&self) -> Option<&str> {
        self.subagents.viewing()
    }
}
