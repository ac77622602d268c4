//! Session files on disk: where they live, reading them back, listing them.

use super::{Entry, FORMAT_VERSION, Header, SessionError, workspace_slug};
use crate::agent::Message;
use crate::runtime::InboundMessage;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Everything a session file holds, folded.
#[derive(Clone, Debug, Default)]
pub struct SessionData {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: Option<Header>,
    /// The messages, in order.
    pub messages: Vec<Message>,
    /// Steering messages still pending at the last queue change.
    pub steering: Vec<String>,
    /// Follow-up messages still pending at the last queue change.
    pub follow_up: Vec<String>,
    /// Notifications not yet delivered, oldest first (the inbox's included).
    pub pending_notifications: Vec<InboundMessage>,
    /// How much of the inbox file `pending_notifications` includes (bytes).
    pub inbox_offset: u64,
    /// The latest value of each setting.
    pub settings: BTreeMap<String, serde_json::Value>,
    /// When the last line was written (ms since the epoch).
    pub last_activity: u64,
    /// Problems that did not stop the load (a torn last line).
    pub warnings: Vec<String>,
}

impl SessionData {
    /// The session id.
    pub fn id(&self) -> &str {
        self.header.as_ref().map_or("", |h| h.id.as_str())
    }
}

/// One row of `claw-tui sessions`.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionSummary {
    /// Session id.
    pub id: String,
    /// The file.
    pub path: PathBuf,
    /// Creation time (ms).
    pub created: u64,
    /// Last write (ms).
    pub last_activity: u64,
    /// The first user prompt, if any.
    pub first_prompt: Option<String>,
    /// Messages recorded.
    pub message_count: usize,
}

/// The directory holding a workspace's sessions.
pub fn sessions_dir(data_dir: &Path, workspace: &Path) -> PathBuf {
    data_dir.join("sessions").join(workspace_slug(workspace))
}

/// Reads a session file; a torn last line is skipped with a warning.
pub fn load(path: &Path) -> Result<SessionData, SessionError> {
    let text = std::fs::read_to_string(path).map_err(|e| SessionError::io(path, e))?;
    let mut data = SessionData {
        path: path.to_path_buf(),
        ..SessionData::default()
    };
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry: Entry = match serde_json::from_str(line) {
            Ok(entry) => entry,
            Err(e) if i + 1 == lines.len() => {
                data.warnings.push(format!(
                    "{}: the last line is incomplete (the process stopped while writing it) and was skipped: {e}",
                    path.display()
                ));
                continue;
            }
            Err(e) if i == 0 => {
                return Err(invalid(
                    path,
                    format!("the first line is not a session header ({e})"),
                ));
            }
            Err(e) => {
                // A line from a newer version we cannot read must not be silently dropped.
                return Err(invalid(path, format!("line {} cannot be read: {e}", i + 1)));
            }
        };
        fold(&mut data, entry, path)?;
    }
    if data.header.is_none() {
        return Err(invalid(path, "it has no header line".into()));
    }
    super::route::read_inbox(&mut data);
    Ok(data)
}

fn invalid(path: &Path, reason: String) -> SessionError {
    SessionError::Invalid {
        path: path.display().to_string(),
        reason,
    }
}

fn fold(data: &mut SessionData, entry: Entry, path: &Path) -> Result<(), SessionError> {
    match entry {
        Entry::Header(header) => {
            if header.version > FORMAT_VERSION {
                return Err(SessionError::NewerVersion {
                    path: path.display().to_string(),
                    found: header.version,
                });
            }
            data.last_activity = header.created;
            data.header = Some(header);
        }
        Entry::Message { timestamp, message } => {
            data.last_activity = timestamp;
            data.messages.push(message);
        }
        Entry::Queue {
            timestamp,
            steering,
            follow_up,
        } => {
            data.last_activity = timestamp;
            data.steering = steering;
            data.follow_up = follow_up;
        }
        Entry::Setting {
            timestamp,
            key,
            value,
        } => {
            data.last_activity = timestamp;
            data.settings.insert(key, value);
        }
        Entry::Rewind {
            timestamp,
            messages,
        } => {
            data.last_activity = timestamp;
            data.messages.truncate(messages);
        }
        // Not activity: switching away or a notification from elsewhere is not use.
        Entry::PendingNotifications {
            pending,
            inbox_offset,
            ..
        } => {
            data.pending_notifications = pending;
            data.inbox_offset = inbox_offset;
        }
    }
    Ok(())
}

/// The sessions of a workspace, most recently active first; unreadable files are skipped.
pub fn list_sessions(data_dir: &Path, workspace: &Path) -> Vec<SessionSummary> {
    let dir = sessions_dir(data_dir, workspace);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut sessions: Vec<SessionSummary> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|path| {
            let data = load(&path).ok()?;
            let header = data.header.clone()?;
            Some(SessionSummary {
                id: header.id,
                first_prompt: data.messages.iter().find_map(|m| match m {
                    Message::User(u) => Some(u.content.clone()),
                    _ => None,
                }),
                message_count: data.messages.len(),
                created: header.created,
                last_activity: data.last_activity,
                path,
            })
        })
        .collect();
    sessions.sort_by(|a, b| {
        b.last_activity
            .cmp(&a.last_activity)
            .then(b.created.cmp(&a.created))
    });
    sessions
}

/// The file of the session `id` in `workspace` (file names end in `_<id>.jsonl`), without
/// reading any session.
pub fn session_path_by_id(data_dir: &Path, workspace: &Path, id: &str) -> Option<PathBuf> {
    let suffix = format!("_{id}.jsonl");
    std::fs::read_dir(sessions_dir(data_dir, workspace))
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(&suffix))
        })
}

/// Finds a session by path, id or unique id prefix.
pub fn find_session(data_dir: &Path, workspace: &Path, key: &str) -> Result<PathBuf, SessionError> {
    let as_path = Path::new(key);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    let matches: Vec<SessionSummary> = list_sessions(data_dir, workspace)
        .into_iter()
        .filter(|s| s.id.starts_with(key))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.path.clone()),
        [] => Err(SessionError::NotFound(format!(
            "no session \"{key}\" in this workspace; run `claw-tui sessions` to list them"
        ))),
        _ => Err(SessionError::NotFound(format!(
            "\"{key}\" matches {} sessions; give more of the id",
            matches.len()
        ))),
    }
}
