//! Where the supervisor keeps notifications on record, and which of them go there.

use super::State;
use crate::runtime::bus::InboundMessage;

/// Where notifications are kept on record: the active session's pending list, and the
/// sessions that are not active. Implemented by the session store.
pub trait NotificationStore: Send + Sync {
    /// The active session's id; a notification with another (non-empty) chat id is
    /// not for it.
    fn session_id(&self) -> &str;
    /// The active session's pending notifications are now `pending` (emptied or
    /// replaced as a whole; called in order, under the supervisor's lock: keep it quick).
    fn pending_changed(&self, pending: &[InboundMessage]);
    /// `added` joined the end of the active session's pending notifications (called in
    /// order with [`Self::pending_changed`], under the supervisor's lock).
    fn pending_added(&self, added: &[InboundMessage]);
    /// Records `message` in the session it is addressed to, for delivery when that
    /// session is resumed. Returns it when that is impossible (no such session), so it
    /// is delivered to the active one instead of being lost.
    fn park(&self, message: InboundMessage) -> Option<InboundMessage>;
    /// Notifications that another process parked for the active session since the last
    /// call (its inbox): they become pending, and the next `pending_added` records that
    /// they were taken. Called under the supervisor's lock about once a second.
    fn take_parked(&self) -> Vec<InboundMessage> {
        Vec::new()
    }
}

impl State {
    /// A notification for another session goes there; `Some` if it is for this one.
    pub(super) fn route(&self, message: InboundMessage) -> Option<InboundMessage> {
        match &self.store {
            Some(store) if !message.chat_id.is_empty() && message.chat_id != store.session_id() => {
                store.park(message)
            }
            _ => Some(message),
        }
    }
}
