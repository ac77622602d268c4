//! Notifications and sessions. The active session records its pending notifications;
//! one addressed to another session of the workspace goes to that session's inbox (a
//! file beside it, appended without its lock, so it works whoever writes the session)
//! and is delivered when the session is resumed, or, if another process has it open,
//! picked up there within a second (`inbox.rs`).

use super::file::open_side_append;
use super::inbox::{InboxReader, read_lines};
use super::list::session_path_by_id;
use super::load::SessionData;
use super::writer::SessionAppender;
use super::{Entry, SessionError};
use crate::agent::now_ms;
use crate::runtime::InboundMessage;
use crate::runtime::supervisor::NotificationStore;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The [`NotificationStore`] of one active session.
pub struct SessionRouter {
    id: String,
    appender: SessionAppender,
    data_dir: PathBuf,
    workspace: PathBuf,
    /// This session's inbox, from the part already taken into its pending list (`None`
    /// when it has no file to have an inbox beside).
    inbox: Mutex<Option<InboxReader>>,
    /// How much of the inbox is taken when there is no reader.
    inbox_offset: u64,
}

impl SessionRouter {
    /// Routes for the session `id`, whose file `appender` writes to; `inbox_offset` is
    /// how much of its inbox its pending list includes (`SessionData::inbox_offset`).
    pub fn new(
        id: String,
        appender: SessionAppender,
        data_dir: &Path,
        workspace: &Path,
        inbox_offset: u64,
    ) -> Self {
        let inbox = session_path_by_id(data_dir, workspace, &id)
            .map(|session| InboxReader::new(&session, inbox_offset));
        Self {
            id,
            appender,
            data_dir: data_dir.to_path_buf(),
            workspace: workspace.to_path_buf(),
            inbox: Mutex::new(inbox),
            inbox_offset,
        }
    }

    /// How much of the inbox the pending list includes now.
    fn inbox_offset(&self) -> u64 {
        self.inbox()
            .as_ref()
            .map_or(self.inbox_offset, InboxReader::offset)
    }

    fn inbox(&self) -> MutexGuard<'_, Option<InboxReader>> {
        // The reader only holds an offset, which a panic cannot leave half-changed.
        self.inbox.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl NotificationStore for SessionRouter {
    fn session_id(&self) -> &str {
        &self.id
    }

    fn pending_changed(&self, pending: &[InboundMessage]) {
        self.appender.append(&Entry::PendingNotifications {
            timestamp: now_ms(),
            pending: pending.to_vec(),
            inbox_offset: self.inbox_offset(),
        });
    }

    fn pending_added(&self, added: &[InboundMessage]) {
        self.appender.append(&Entry::PendingAdded {
            timestamp: now_ms(),
            added: added.to_vec(),
            inbox_offset: self.inbox_offset(),
        });
    }

    fn take_parked(&self) -> Vec<InboundMessage> {
        let Some(reader) = self.inbox().as_mut().map(InboxReader::take_new) else {
            return Vec::new();
        };
        let (messages, warnings) = reader;
        for warning in warnings {
            tracing::warn!("{warning}");
        }
        messages
    }

    fn park(&self, message: InboundMessage) -> Option<InboundMessage> {
        let Some(path) = session_path_by_id(&self.data_dir, &self.workspace, &message.chat_id)
        else {
            tracing::info!(
                "no session {} in this workspace; its notification goes to the active one",
                message.chat_id
            );
            return Some(message);
        };
        match record_undelivered(&path, &message) {
            Ok(()) => None,
            Err(e) => {
                tracing::warn!("{e}; delivering the notification to the active session");
                Some(message)
            }
        }
    }
}

/// The inbox of the session file `session`: notifications from elsewhere, one JSON line
/// each.
pub fn inbox_path(session: &Path) -> PathBuf {
    session.with_extension("inbox")
}

/// Appends `message` to the inbox of the session file `session`, to be delivered when
/// that session is resumed.
pub fn record_undelivered(session: &Path, message: &InboundMessage) -> Result<(), SessionError> {
    let path = inbox_path(session);
    let io = |e| SessionError::io(&path, e);
    let mut line = serde_json::to_string(message).map_err(|e| io(std::io::Error::other(e)))?;
    line.push('\n');
    let mut file = open_side_append(&path).map_err(io)?;
    // One write of a whole line with O_APPEND: concurrent appenders never interleave.
    file.write_all(line.as_bytes()).map_err(io)?;
    file.sync_data().map_err(io)
}

/// Adds the inbox lines the session's pending list does not include yet; a torn last
/// line (its writer died mid-write) is left for later.
pub(super) fn read_inbox(data: &mut SessionData) {
    let path = inbox_path(&data.path);
    if !path.exists() {
        return;
    }
    match read_lines(&path, data.inbox_offset) {
        Ok((messages, warnings, offset)) => {
            data.pending_notifications.extend(messages);
            data.warnings.extend(warnings);
            data.inbox_offset = offset;
        }
        Err(_) => data
            .warnings
            .push(format!("cannot read the inbox {}", path.display())),
    }
}
