//! The inbound message bus: background producers (subagents, cron, channels) publish
//! here, and whoever owns a channel receives its messages exactly once.
//!
//! Routing: while a channel has a live subscriber, a message goes straight to it;
//! otherwise it waits in the channel's backlog until someone drains the channel or
//! subscribes to it (a new subscriber gets the backlog first, in order).
//!
//! The outbound direction (agent → user) is the `message` tool's callback, not this bus.

use crate::agent::now_ms;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::mpsc;

/// The channel background work reports on; the supervisor consumes it.
pub const SYSTEM_CHANNEL: &str = "system";

/// A message travelling towards an agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboundMessage {
    /// The channel it was published on, e.g. `system`.
    pub channel: String,
    /// Who produced it, e.g. `subagent` or `cron`.
    pub sender_id: String,
    /// The conversation it belongs to (the session that started the work).
    pub chat_id: String,
    /// The text.
    pub content: String,
    /// When it was published, in milliseconds since the Unix epoch.
    pub timestamp: u64,
    /// Delivered with the next run rather than starting one: the user already knows
    /// (e.g. of a subagent they cancelled), so it need not cost a model call by itself.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defer: bool,
}

impl InboundMessage {
    /// A message stamped now.
    pub fn new(
        channel: impl Into<String>,
        sender_id: impl Into<String>,
        chat_id: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self {
            channel: channel.into(),
            sender_id: sender_id.into(),
            chat_id: chat_id.into(),
            content: content.into(),
            timestamp: now_ms(),
            defer: false,
        }
    }

    /// The same message, delivered with the next run instead of starting one.
    pub fn deferred(mut self) -> Self {
        self.defer = true;
        self
    }

    /// Its first line without brackets, e.g. `Cron job "build" (cron-1) fired`.
    pub fn summary(&self) -> String {
        let first = self.content.lines().next().unwrap_or_default().trim();
        first
            .strip_prefix('[')
            .and_then(|f| f.strip_suffix(']'))
            .unwrap_or(first)
            .to_owned()
    }
}

#[derive(Default)]
struct Route {
    subscriber: Option<mpsc::UnboundedSender<InboundMessage>>,
    backlog: VecDeque<InboundMessage>,
}

/// The bus; cheap to clone, clones share every channel.
#[derive(Clone, Default)]
pub struct MessageBus {
    routes: Arc<Mutex<HashMap<String, Route>>>,
}

impl MessageBus {
    /// An empty bus.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Route>> {
        // Every change is a single push or swap, so a poisoned map is still consistent.
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Publishes `message` on its channel: to the subscriber, or into the backlog.
    pub fn publish(&self, message: InboundMessage) {
        let mut routes = self.lock();
        let route = routes.entry(message.channel.clone()).or_default();
        let message = match &route.subscriber {
            Some(tx) => match tx.send(message) {
                Ok(()) => return,
                // The subscriber went away: keep the message for the next one.
                Err(mpsc::error::SendError(message)) => {
                    route.subscriber = None;
                    message
                }
            },
            None => message,
        };
        route.backlog.push_back(message);
    }

    /// Becomes the channel's subscriber (replacing any previous one) and receives its
    /// backlog first, then every later message, in publication order.
    pub fn subscribe(&self, channel: &str) -> mpsc::UnboundedReceiver<InboundMessage> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut routes = self.lock();
        let route = routes.entry(channel.to_owned()).or_default();
        for message in route.backlog.drain(..) {
            // `rx` is alive in this scope, so the send cannot fail.
            let _ = tx.send(message);
        }
        route.subscriber = Some(tx);
        rx
    }

    /// Stops delivering to the channel's subscriber; later messages wait in the backlog.
    pub fn unsubscribe(&self, channel: &str) {
        if let Some(route) = self.lock().get_mut(channel) {
            route.subscriber = None;
        }
    }

    /// Takes every message waiting in the channel's backlog, oldest first.
    pub fn drain(&self, channel: &str) -> Vec<InboundMessage> {
        self.lock()
            .get_mut(channel)
            .map(|route| route.backlog.drain(..).collect())
            .unwrap_or_default()
    }

    /// How many messages wait in the channel's backlog.
    pub fn backlog_len(&self, channel: &str) -> usize {
        self.lock()
            .get(channel)
            .map_or(0, |route| route.backlog.len())
    }

    /// Whether the channel has a live subscriber.
    pub fn has_subscriber(&self, channel: &str) -> bool {
        self.lock()
            .get(channel)
            .and_then(|route| route.subscriber.as_ref())
            .is_some_and(|tx| !tx.is_closed())
    }
}

impl std::fmt::Debug for MessageBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let routes = self.lock();
        let mut channels: Vec<_> = routes.keys().collect();
        channels.sort();
        f.debug_struct("MessageBus")
            .field("channels", &channels)
            .finish()
    }
}
