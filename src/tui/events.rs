//! `App::update` for the main agent's events: the transcript, the tool tree, the queue
//! strip and the status bar follow the agent.

use super::app::App;
use super::calls::CallStatus;
use super::entry::{CardInfo, EntryKind};
use super::msg::Effect;
use crate::agent::{AgentEvent, Message, MessageDelta};

impl App {
    pub(super) fn agent_event(&mut self, event: AgentEvent) -> Vec<Effect> {
        match event {
            AgentEvent::AgentStart => {
                self.running = true;
                self.retrying = false;
                self.turn = 0;
            }
            AgentEvent::AgentEnd { .. } => {
                self.running = false;
                self.retrying = false;
                self.streaming_entry = None;
                self.calls.settle();
                let stale: Vec<String> = self
                    .cards
                    .iter()
                    .filter(|(_, c)| matches!(c.status, CallStatus::Queued | CallStatus::Running))
                    .map(|(id, _)| id.clone())
                    .collect();
                for id in stale {
                    self.refresh_card(&id);
                }
            }
            AgentEvent::TurnStart { turn } => {
                self.turn = turn;
                self.calls.turn_started();
            }
            AgentEvent::TurnEnd { .. } => {}
            AgentEvent::MessageStart { message } => {
                if let Message::Assistant(m) = message {
                    self.retrying = false;
                    self.streaming_entry = Some(self.transcript.push_streaming(m));
                }
            }
            AgentEvent::MessageUpdate { delta } => {
                if let Some(i) = self.streaming_entry {
                    if let MessageDelta::ToolCallStart { id, .. } = &delta {
                        self.call_entries.insert(id.clone(), i);
                    }
                    self.transcript.apply_delta(i, &delta);
                }
            }
            AgentEvent::MessageEnd { message } => self.message_end(message),
            event @ (AgentEvent::ToolExecutionStart { .. }
            | AgentEvent::ToolExecutionUpdate { .. }
            | AgentEvent::ToolExecutionEnd { .. }) => {
                let status_change = !matches!(event, AgentEvent::ToolExecutionUpdate { .. });
                if let Some(id) = self.calls.apply(&event, self.now)
                    && status_change
                {
                    self.refresh_card(&id);
                }
            }
            AgentEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => {
                self.retrying = true;
                self.transcript.push(EntryKind::Retry {
                    attempt,
                    max_attempts,
                    delay_ms,
                    reason,
                });
            }
            AgentEvent::AutoRetryEnd { .. } => self.retrying = false,
            AgentEvent::SettingUpdate { key, value } => self.setting(&key, value),
            AgentEvent::QueueUpdate {
                steering,
                follow_up,
            } => {
                self.queued_steering = steering;
                self.queued_follow_up = follow_up;
            }
        }
        Vec::new()
    }

    /// Follows a setting changed by anyone (a command here, an RPC client, a resume).
    fn setting(&mut self, key: &str, value: serde_json::Value) {
        use serde_json::from_value;
        match key {
            "model" => {
                if let Some(model) = value.as_str() {
                    self.model = model.to_owned();
                }
            }
            "thinking" => {
                if let Ok(level) = from_value(value) {
                    self.thinking = level;
                }
            }
            "steering_mode" => {
                if let Ok(mode) = from_value(value) {
                    self.steering_mode = mode;
                }
            }
            "follow_up_mode" => {
                if let Ok(mode) = from_value(value) {
                    self.follow_up_mode = mode;
                }
            }
            "tool_execution" => {
                if let Ok(mode) = from_value(value) {
                    self.tool_execution = mode;
                }
            }
            _ => {}
        }
    }

    pub(super) fn message_end(&mut self, message: Message) {
        match message {
            Message::Assistant(m) => {
                let usage = &m.usage;
                self.totals.usage.add(usage);
                let context = usage.input + usage.cache_read + usage.cache_write + usage.output;
                if context > 0 {
                    self.totals.context_tokens = context;
                }
                let streamed = self.streaming_entry.take();
                let index = match streamed {
                    Some(i) => i,
                    None => self.transcript.push_streaming(m.clone()),
                };
                for call in m.tool_calls() {
                    self.call_entries.insert(call.id.clone(), index);
                    if !m.is_failed() {
                        self.calls.announce(&call.id, &call.name, &call.args);
                        self.refresh_card_state(&call.id);
                    }
                }
                if streamed.is_some() {
                    self.transcript.finish_streamed(index, m);
                } else {
                    self.transcript.finish(index, m);
                }
            }
            Message::User(u) => {
                self.transcript.push(EntryKind::User(u.content));
            }
            Message::Notification(n) => {
                self.transcript.push(EntryKind::Notification {
                    source: n.source,
                    text: n.content,
                });
            }
            Message::Notice(n) => {
                self.transcript.push(EntryKind::Notice(n.level, n.text));
            }
            Message::ToolResult(_) => {}
        }
    }

    fn refresh_card_state(&mut self, id: &str) -> bool {
        let Some(node) = self.calls.node(id) else {
            return false;
        };
        let info = CardInfo::of(node);
        if self.cards.get(id) == Some(&info) {
            return false;
        }
        self.cards.insert(id.to_owned(), info);
        true
    }

    /// Updates a call's inline card and re-renders the message that shows it.
    pub(super) fn refresh_card(&mut self, id: &str) {
        if self.refresh_card_state(id)
            && let Some(&entry) = self.call_entries.get(id)
        {
            self.transcript.invalidate(entry);
        }
    }
}
