//! The main agent's events, handed to the parts that follow them: the status (run,
//! turn, usage, settings, queues), the chat (messages, the streaming answer, cards) and
//! the tool tree (calls), with the cards kept in step with the tree.

use super::App;
use crate::chat::{CardInfo, EntryKind};
use crate::part::Handled;
use claw_agent::{AgentEvent, AssistantMessage, Message};

impl App {
    pub(super) fn agent_event(&mut self, event: AgentEvent) -> Handled {
        match event {
            AgentEvent::AgentStart => self.status.run_started(),
            AgentEvent::AgentEnd { messages } => {
                let interrupted = self.status.run_ended();
                self.chat.retry_began();
                self.run_ended_in_mode();
                self.tools.settle();
                let mut handled = Handled::changed();
                for id in self.chat.end_run() {
                    handled.absorb(self.refresh_card(&id));
                }
                // An answer cut short says so itself; otherwise the chat marks the point.
                let answer_says_so = messages
                    .iter()
                    .rev()
                    .find_map(Message::as_assistant)
                    .is_some_and(|a| a.stop_reason == claw_agent::StopReason::Aborted);
                if interrupted && !answer_says_so {
                    handled.absorb(self.chat.push(EntryKind::Interrupted));
                }
                return handled;
            }
            AgentEvent::TurnStart { .. } => {
                // Turns are numbered through the session, as the tool tree numbers them.
                self.tools.turn_started();
                self.status.set_turn(self.tools.turn_count());
            }
            AgentEvent::TurnEnd { context_usage, .. } => {
                self.status.set_context_tokens(context_usage.tokens);
            }
            AgentEvent::CompactionStart { tokens_before, .. } => {
                self.status.set_compacting(true);
                self.status.set_context_tokens(tokens_before);
                return self.chat.compaction_started(tokens_before);
            }
            AgentEvent::CompactionEnd(end) => {
                self.status.set_compacting(false);
                self.status.add_cost(&end.usage);
                if end.record().is_some() {
                    self.status.set_context_tokens(end.tokens_after);
                }
                return self.chat.compaction_ended(&end);
            }
            AgentEvent::MessageStart { message } => {
                if let Message::Assistant(m) = message {
                    self.status.set_retrying(false);
                    return self.chat.start_answer(m);
                }
            }
            AgentEvent::MessageUpdate { delta } => return self.chat.apply_delta(&delta),
            AgentEvent::MessageEnd { message } => return self.message_end(message),
            event @ (AgentEvent::ToolExecutionStart { .. }
            | AgentEvent::ToolExecutionUpdate { .. }
            | AgentEvent::ToolExecutionEnd { .. }) => {
                // Updates too: a running command's card shows its newest lines.
                if let Some(id) = self.tools.apply(&event, self.now) {
                    return Handled::changed().and(self.refresh_card(&id));
                }
            }
            AgentEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => {
                self.status.set_retrying(true);
                return self.chat.retry_waits(EntryKind::Retry {
                    attempt,
                    max_attempts,
                    delay_ms,
                    reason,
                    since: self.now,
                    live: true,
                });
            }
            AgentEvent::AutoRetryEnd { .. } => {
                self.status.set_retrying(false);
                self.chat.retry_began();
            }
            AgentEvent::SettingUpdate { key, value } => {
                if let Some(model) = self.status.setting(&key, value) {
                    self.composer.set_current_model(model);
                }
            }
            AgentEvent::QueueUpdate {
                steering,
                follow_up,
            } => self.status.set_queues(steering, follow_up),
            // The rewind's own answer rebuilds the chat (`checkpoints::Msg::Rewound`).
            AgentEvent::HistoryCut { .. } => return Handled::unchanged(),
        }
        Handled::changed()
    }

    /// A message ended: an answer adds its usage and announces its tool calls to the
    /// tree; every message gets its entry in the chat.
    pub(super) fn message_end(&mut self, message: Message) -> Handled {
        match message {
            Message::Assistant(m) => self.answer_end(m),
            other => self.chat.message(other),
        }
    }

    fn answer_end(&mut self, m: AssistantMessage) -> Handled {
        self.status.add_usage(&m.usage);
        let mut cards = Vec::new();
        if !m.is_failed() {
            for call in m.tool_calls() {
                self.tools.announce(&call.id, &call.name, &call.args);
                if let Some(node) = self.tools.node(&call.id) {
                    let expanded = self.chat.is_expanded(&call.id);
                    cards.push((call.id.clone(), CardInfo::of(node, expanded)));
                }
            }
        }
        self.chat.end_answer(m, cards)
    }
}
