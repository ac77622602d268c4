//! Events about background work, delivered to the UI and the JSON modes on a channel of
//! their own so they never interleave with the main run's `AgentEvent` sequence.

use super::subagents::SubagentInfo;
use crate::agent::AgentEvent;
use crate::tools::message::{MessageSender, OutboundMessage};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Something the runtime (not the main agent's run) reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RuntimeEvent {
    /// One event of a subagent's own loop, tagged with where it belongs: the tool-call
    /// tree nests it under the `spawn` call `parent_tool_call_id`.
    SubagentEvent {
        /// The subagent, e.g. `subagent-3`.
        subagent_id: String,
        /// The main agent's `spawn` call that started it.
        parent_tool_call_id: String,
        /// The subagent's event, unchanged.
        event: AgentEvent,
    },
    /// A subagent's status, turns, tokens or current tool changed (for the dashboard).
    SubagentUpdate {
        /// Its state after the change.
        info: SubagentInfo,
    },
    /// An MCP server's state or tools changed.
    McpServerUpdate {
        /// Its state after the change.
        server: super::mcp_state::McpServerInfo,
    },
    /// The number of notifications waiting for the main agent's run to end changed.
    PendingNotifications {
        /// How many wait now.
        count: usize,
    },
    /// A notification for another session than the active one was recorded there (it
    /// is delivered when that session is opened).
    NotificationParked {
        /// The session it waits in.
        session_id: String,
        /// Its first line, e.g. `Cron job "build" (cron-1) fired`.
        summary: String,
    },
    /// A notification waits for the next run instead of starting one (e.g. a subagent
    /// the user cancelled).
    NotificationDeferred {
        /// Its first line.
        summary: String,
    },
    /// The cron jobs file became unusable (`ok: false`: no job fires, every cron action
    /// fails, the file is kept as it is), or usable again (`ok: true`).
    CronStatus {
        /// Whether jobs run.
        ok: bool,
        /// What happened and what to do, for the user.
        message: String,
    },
    /// A hook failed (it exited with another code than 0 or 2, timed out, or printed
    /// something that is not a JSON object); the call or prompt went on without it.
    HookWarning {
        /// Which hook list: `before_tool`, `after_tool`, `prompt`, `stop`, `notify`.
        event: String,
        /// The hook's command.
        command: String,
        /// What happened, for the user.
        message: String,
    },
    /// Something outside the sandbox was refused because a workspace file it runs holds
    /// content the user has not trusted: the client asks (headless modes only warn).
    TrustRequest {
        /// What waits for the user's answer.
        request: crate::trust::TrustRequest,
    },
    /// The `message` tool sent a message (the client shows it as a card in the chat).
    OutboundMessage {
        /// The message, where it goes and its text.
        message: OutboundMessage,
    },
}

/// Where runtime events go; cheap to clone. A consumer that went away is not an error:
/// background work carries on without a UI (e.g. while the app quits).
#[derive(Clone, Debug, Default)]
pub struct RuntimeEventSender {
    tx: Option<mpsc::UnboundedSender<RuntimeEvent>>,
    /// A second receiver every clone also delivers to: the session's event log.
    tap: Arc<Mutex<Option<mpsc::UnboundedSender<RuntimeEvent>>>>,
    /// Further receivers, each for as long as it lives: the attach server's fan-out.
    listeners: Arc<Mutex<Vec<mpsc::UnboundedSender<RuntimeEvent>>>>,
}

impl RuntimeEventSender {
    /// A sender delivering to `tx`.
    pub fn new(tx: mpsc::UnboundedSender<RuntimeEvent>) -> Self {
        Self {
            tx: Some(tx),
            tap: Arc::default(),
            listeners: Arc::default(),
        }
    }

    /// A sender that drops every event (headless `-p` mode, tests that do not look).
    pub fn discard() -> Self {
        Self {
            tx: None,
            tap: Arc::default(),
            listeners: Arc::default(),
        }
    }

    /// Delivers one event, if anyone is listening.
    pub fn send(&self, event: RuntimeEvent) {
        if let Ok(tap) = self.tap.lock()
            && let Some(tap) = tap.as_ref()
        {
            let _ = tap.send(event.clone());
        }
        if let Ok(mut listeners) = self.listeners.lock() {
            listeners.retain(|l| l.send(event.clone()).is_ok());
        }
        if let Some(tx) = &self.tx {
            // The receiver is gone only when the UI has shut down; nothing to tell it.
            let _ = tx.send(event);
        }
    }
}

impl RuntimeEventSender {
    /// The `message` tool's sender: each message goes out as a
    /// [`RuntimeEvent::OutboundMessage`], so the client, the JSON modes and the session's
    /// event log (hence a replay) all see it.
    pub fn outbound_messages(&self) -> MessageSender {
        let events = self.clone();
        Arc::new(move |message: OutboundMessage| {
            events.send(RuntimeEvent::OutboundMessage { message });
        })
    }

    /// From now on every event sent through this sender or any of its clones is also
    /// delivered to the returned receiver (which replaces an earlier tap's).
    pub fn tap(&self) -> mpsc::UnboundedReceiver<RuntimeEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Ok(mut tap) = self.tap.lock() {
            *tap = Some(tx);
        }
        rx
    }
}

impl RuntimeEventSender {
    /// From now on every event sent through this sender or any of its clones is also
    /// delivered to the returned receiver, until it is dropped (unlike [`Self::tap`],
    /// any number of these live side by side).
    pub fn listen(&self) -> mpsc::UnboundedReceiver<RuntimeEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Ok(mut listeners) = self.listeners.lock() {
            listeners.push(tx);
        }
        rx
    }
}

/// A new runtime-event channel: give the sender to the runtime, read the receiver in
/// the UI or JSON output loop.
pub fn runtime_channel() -> (RuntimeEventSender, mpsc::UnboundedReceiver<RuntimeEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (RuntimeEventSender::new(tx), rx)
}
