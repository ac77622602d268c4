//! Finding sessions: listing a workspace's (damaged ones included), the latest one for
//! `-c`, one by id. Summaries glance at each line's kind and read in full only the
//! header and the first prompt, so listing long sessions stays cheap.

use super::fast::{LineKind, is_whole_record, line_kind, parse_line};
use super::file::{created_from_name, id_from_name, is_session_file, sessions_dir};
use super::inbox::read_lines;
use super::preview::{ExchangePlaces, LastExchange, Role};
use super::route::inbox_path;
use super::{Entry, Header, SessionError};
use crate::agent::Message;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

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
    /// Lines that cannot be read (skipped when the session is loaded).
    pub damaged_lines: usize,
    /// Notifications waiting for it (its latest pending list and its inbox's newer lines).
    pub waiting: usize,
    /// The name given with `/name`.
    pub name: Option<String>,
    /// The last exchange: the last prompt and the last answer's text, each clipped.
    pub last_exchange: LastExchange,
}

/// The sessions of a workspace, most recently active first. A damaged file is listed
/// with what can be read of it; only files that hold nothing of a session are left out.
pub fn list_sessions(data_dir: &Path, workspace: &Path) -> Vec<SessionSummary> {
    let mut sessions: Vec<SessionSummary> = session_files(data_dir, workspace)
        .into_iter()
        .filter_map(|path| summarize(&path))
        .collect();
    sessions.sort_by(|a, b| {
        b.last_activity
            .cmp(&a.last_activity)
            .then(b.created.cmp(&a.created))
    });
    sessions
}

/// The session `-c` continues, and the newer ones it passed over.
#[derive(Clone, Debug, PartialEq)]
pub struct LatestSession {
    /// Its file.
    pub path: PathBuf,
    /// More recent session files that hold no message (one whose writes all failed, or
    /// that the process left right after creating it), newest first.
    pub passed_over: Vec<PathBuf>,
}

/// The session `-c` continues: the most recently active one that has a message, else
/// the most recent one. Reads only the ends of the files, not whole histories.
pub fn latest_session(data_dir: &Path, workspace: &Path) -> Option<LatestSession> {
    let mut candidates: Vec<(u64, u64, bool, PathBuf)> = session_files(data_dir, workspace)
        .into_iter()
        .filter_map(|path| {
            let (created, has_messages) = head(&path)?;
            // A file with no timestamp in it (left empty) is as recent as its last write.
            let activity = tail_activity(&path)
                .or_else(|| summarize(&path).map(|s| s.last_activity).filter(|a| *a > 0))
                .or_else(|| modified_ms(&path))?;
            Some((activity.max(created), created, has_messages, path))
        })
        .collect();
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let mut passed_over = Vec::new();
    for (_, _, has_messages, path) in &candidates {
        if *has_messages {
            return Some(LatestSession {
                path: path.clone(),
                passed_over,
            });
        }
        passed_over.push(path.clone());
    }
    let (_, _, _, path) = candidates.into_iter().next()?;
    Some(LatestSession {
        path,
        passed_over: Vec::new(),
    })
}

/// The file of the session `id` in `workspace` (file names end in `_<id>.jsonl`), without
/// reading any session.
pub fn session_path_by_id(data_dir: &Path, workspace: &Path, id: &str) -> Option<PathBuf> {
    session_files(data_dir, workspace)
        .into_iter()
        .find(|p| id_from_name(p).is_some_and(|found| found == id))
}

/// The session `key` names, or without a key the workspace's latest; `Ok(None)` when the
/// workspace has no session yet (each command says so in its own words).
pub fn find_or_latest(
    data_dir: &Path,
    workspace: &Path,
    key: Option<&str>,
) -> Result<Option<PathBuf>, SessionError> {
    match key {
        Some(key) => find_session(data_dir, workspace, key).map(Some),
        None => Ok(latest_session(data_dir, workspace).map(|latest| latest.path)),
    }
}

/// Finds a session by path, id or unique id prefix (by file name: a damaged session is
/// found like any other).
pub fn find_session(data_dir: &Path, workspace: &Path, key: &str) -> Result<PathBuf, SessionError> {
    let as_path = Path::new(key);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    let matches: Vec<PathBuf> = session_files(data_dir, workspace)
        .into_iter()
        .filter(|p| id_from_name(p).is_some_and(|id| !key.is_empty() && id.starts_with(key)))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(SessionError::NotFound(format!(
            "no session \"{key}\" in this workspace; run `claw-tui sessions` to list them"
        ))),
        _ => Err(SessionError::NotFound(format!(
            "\"{key}\" matches {} sessions; give more of the id",
            matches.len()
        ))),
    }
}

fn session_files(data_dir: &Path, workspace: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(sessions_dir(data_dir, workspace)) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| is_session_file(p))
        .collect()
}

/// What one line tells a summary.
enum Seen {
    Header(Header),
    Message {
        timestamp: u64,
        prompt: Option<String>,
        role: Role,
    },
    Activity(u64),
    /// The conversation was taken back to its first `messages` messages.
    Rewind {
        timestamp: u64,
        messages: usize,
    },
    /// A pending-notifications snapshot (not activity): how many, and how much of the
    /// inbox they include.
    Pending {
        count: usize,
        inbox_offset: u64,
    },
    /// Notifications that arrived (not activity): how many, and how much of the inbox
    /// the list includes now.
    PendingAdded {
        count: usize,
        inbox_offset: u64,
    },
    Damaged,
}

/// Reads what a summary needs of one line: message lines only glanced at (timestamp and
/// role), unless `prompt` asks for the text of a user message.
fn see(line: &[u8], prompt: bool) -> Seen {
    if line_kind(line) == Some(LineKind::Message) && !prompt {
        return glance_message(line).map_or(Seen::Damaged, |(timestamp, role)| Seen::Message {
            timestamp,
            prompt: None,
            role,
        });
    }
    match parse_line(line) {
        Ok(Entry::Header(h)) => Seen::Header(h),
        Ok(Entry::Message { timestamp, message }) => Seen::Message {
            timestamp,
            role: match &message {
                Message::User(_) => Role::User,
                Message::Assistant(_) => Role::Assistant,
                _ => Role::Other,
            },
            prompt: match message {
                Message::User(u) => Some(u.content),
                _ => None,
            },
        },
        Ok(Entry::Queue { timestamp, .. } | Entry::Setting { timestamp, .. }) => {
            Seen::Activity(timestamp)
        }
        Ok(Entry::Compaction(c)) => Seen::Activity(c.timestamp),
        Ok(Entry::Rewind {
            timestamp,
            messages,
        }) => Seen::Rewind {
            timestamp,
            messages,
        },
        Ok(Entry::PendingNotifications {
            pending,
            inbox_offset,
            ..
        }) => Seen::Pending {
            count: pending.len(),
            inbox_offset,
        },
        Ok(Entry::PendingAdded {
            added,
            inbox_offset,
            ..
        }) => Seen::PendingAdded {
            count: added.len(),
            inbox_offset,
        },
        Err(_) => Seen::Damaged,
    }
}

/// The timestamp of a message line, read without building the message; `None` when
/// its role is not one this build knows (then `load` skips it as damaged too).
fn glance_message(line: &[u8]) -> Option<(u64, super::preview::Role)> {
    #[derive(serde::Deserialize)]
    struct Glance {
        timestamp: u64,
        message: Role,
    }
    #[derive(serde::Deserialize)]
    struct Role {
        role: KnownRole,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum KnownRole {
        User,
        Assistant,
        ToolResult,
        Notification,
        Notice,
    }
    let glance = serde_json::from_slice::<Glance>(line).ok()?;
    // Parsing it is the check: any known role will do.
    let role = match glance.message.role {
        KnownRole::User => super::preview::Role::User,
        KnownRole::Assistant => super::preview::Role::Assistant,
        KnownRole::ToolResult | KnownRole::Notification | KnownRole::Notice => {
            super::preview::Role::Other
        }
    };
    Some((glance.timestamp, role))
}

/// One pass over a file: each line's kind, and in full only the header and the lines
/// up to the first prompt. `None` when it holds nothing of a session.
fn summarize(path: &Path) -> Option<SessionSummary> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path).ok()?);
    let mut summary = SessionSummary {
        id: id_from_name(path)?,
        path: path.to_path_buf(),
        created: 0,
        last_activity: 0,
        first_prompt: None,
        message_count: 0,
        damaged_lines: 0,
        waiting: 0,
        name: super::name::read_name(path),
        last_exchange: LastExchange::default(),
    };
    let mut inbox_offset = 0;
    let mut places = ExchangePlaces::default();
    let (mut header, mut readable, mut line) = (false, false, Vec::new());
    let mut offset = 0u64;
    while reader.read_until(b'\n', &mut line).ok()? > 0 {
        let at = offset;
        offset += line.len() as u64;
        let text = line.trim_ascii();
        // A torn last line is not counted (the next resume cuts it off); a whole record
        // that only lacks its newline is.
        if ended(&line) && !text.is_empty() {
            let seen = see(text, summary.first_prompt.is_none());
            readable |= !matches!(seen, Seen::Damaged);
            match seen {
                Seen::Header(h) if !header => {
                    header = true;
                    summary.id = h.id;
                    summary.created = h.created;
                    summary.last_activity = summary.last_activity.max(h.created);
                }
                Seen::Message {
                    timestamp,
                    prompt,
                    role,
                } => {
                    places.saw(role, at, line.len());
                    summary.last_activity = timestamp;
                    summary.message_count += 1;
                    if summary.first_prompt.is_none() {
                        summary.first_prompt = prompt;
                    }
                }
                Seen::Activity(timestamp) => summary.last_activity = timestamp,
                Seen::Rewind {
                    timestamp,
                    messages,
                } => {
                    summary.last_activity = timestamp;
                    summary.message_count = summary.message_count.min(messages);
                    // Which messages went is not known here: no preview rather than a
                    // wrong one, until the next exchange.
                    places = ExchangePlaces::default();
                    // Taken back to before the first prompt: the next one is the first.
                    if messages == 0 {
                        summary.first_prompt = None;
                    }
                }
                Seen::Damaged => summary.damaged_lines += 1,
                Seen::Pending {
                    count,
                    inbox_offset: offset,
                } => (summary.waiting, inbox_offset) = (count, offset),
                Seen::PendingAdded {
                    count,
                    inbox_offset: offset,
                } => (summary.waiting, inbox_offset) = (summary.waiting + count, offset),
                Seen::Header(_) => {}
            }
        }
        line.clear();
    }
    if !header {
        summary.created = created_from_name(path).unwrap_or(0);
    }
    summary.last_exchange = places.read(path);
    if let Ok((newer, _, _)) = read_lines(&inbox_path(path), inbox_offset) {
        summary.waiting += newer.len();
    }
    (readable || summary.damaged_lines == 0).then_some(summary)
}

/// The header's creation time and whether the file has a message, from its first
/// lines; `None` when the file cannot be read.
fn head(path: &Path) -> Option<(u64, bool)> {
    let mut reader = BufReader::with_capacity(1 << 14, File::open(path).ok()?);
    let (mut created, mut line) = (0, Vec::new());
    while reader.read_until(b'\n', &mut line).ok()? > 0 {
        let text = line.trim_ascii();
        if ended(&line) && !text.is_empty() {
            match see(text, false) {
                Seen::Header(h) if created == 0 => created = h.created,
                Seen::Message { .. } => return Some((created, true)),
                _ => {}
            }
        }
        line.clear();
    }
    Some((created, false))
}

/// Whether a line read with `read_until` is whole: ended by its newline, or the file's
/// last line holding a whole record whose newline never made it.
fn ended(line: &[u8]) -> bool {
    line.last() == Some(&b'\n') || is_whole_record(line)
}

/// When the file was last written, in ms since the epoch.
fn modified_ms(path: &Path) -> Option<u64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_millis()).ok()
}

/// When the last activity line (not a pending-notifications snapshot) was written, from
/// the file's last 64 KB; `None` when none is there.
fn tail_activity(path: &Path) -> Option<u64> {
    const TAIL: u64 = 1 << 16;
    let mut file = File::open(path).ok()?;
    let len = file.seek(SeekFrom::End(0)).ok()?;
    let start = len.saturating_sub(TAIL);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    // Before the first newline may be the end of a longer line; after the last, a torn
    // one or a whole record without its newline.
    let body = match tail.iter().position(|b| *b == b'\n') {
        Some(i) if start > 0 => &tail[i + 1..],
        _ => &tail[..],
    };
    let last = body.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let body = if is_whole_record(&body[last..]) {
        body
    } else {
        &body[..last.checked_sub(1)?]
    };
    body.rsplit(|b| *b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|line| !line.is_empty())
        .find_map(|line| match see(line, false) {
            Seen::Header(h) => Some(h.created),
            Seen::Message { timestamp, .. }
            | Seen::Activity(timestamp)
            | Seen::Rewind { timestamp, .. } => Some(timestamp),
            Seen::Pending { .. } | Seen::PendingAdded { .. } | Seen::Damaged => None,
        })
}
