//! Reading a session file back: every intact line is used, whatever is damaged around
//! it (a torn last line, a damaged line in the middle, an unknown role, a missing
//! header); damaged lines are skipped, counted and reported.

use super::fast::{LineKind, is_whole_record, line_kind, parse_line};
use super::file::{created_from_name, id_from_name};
use super::{Entry, FORMAT_VERSION, Header, SessionError};
use crate::agent::{Compaction, Message};
use crate::runtime::InboundMessage;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Everything a session file holds, folded.
#[derive(Clone, Debug, Default)]
pub struct SessionData {
    /// The file.
    pub path: PathBuf,
    /// Its header (made up from the file name when the header line is missing).
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
    /// Line numbers (1-based) of the damaged lines that were skipped.
    pub damaged_lines: Vec<usize>,
    /// Bytes of an incomplete last line that was skipped (the process stopped while
    /// writing it); 0 when the file ends with a whole line.
    pub torn_tail: u64,
    /// The file has no readable header line; `header` was made up from its name.
    pub header_missing: bool,
    /// Problems that did not stop the load, worded for the user.
    pub warnings: Vec<String>,
    /// The compactions, oldest first.
    pub compactions: Vec<Compaction>,
}

impl SessionData {
    /// The session id.
    pub fn id(&self) -> &str {
        self.header.as_ref().map_or("", |h| h.id.as_str())
    }

    /// The compaction in force: what the model saw at the end (the summary, then the
    /// messages from its first kept one on).
    pub fn compaction(&self) -> Option<&Compaction> {
        self.compactions
            .iter()
            .rev()
            .find(|c| c.fits(self.messages.len()))
    }
}

/// Reads a session file. Damaged lines anywhere are skipped and reported in `warnings`
/// (see `damaged_lines`, `torn_tail`); only a file with nothing of a session in it, one
/// from a newer claw-tui, or an I/O error is refused.
pub fn load(path: &Path) -> Result<SessionData, SessionError> {
    let io = |e| SessionError::io(path, e);
    let file = File::open(path).map_err(io)?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut data = SessionData {
        path: path.to_path_buf(),
        ..SessionData::default()
    };
    let mut first_problem = None;
    let mut line = Vec::new();
    let (mut number, mut offset) = (0, 0u64);
    let mut read_any = false;
    // Snapshots (the latest wins) are only located here and the last one read at the
    // end: a burst of queued prompts writes many long ones. Notifications that arrived
    // are located too, and those after the pending list in force read at the end.
    let mut snapshots: Vec<Snapshot> = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(io)?;
        if n == 0 {
            break;
        }
        number += 1;
        let at = offset;
        offset += n as u64;
        let ended = line.last() == Some(&b'\n');
        // A last line without its newline is torn, unless it is a whole record.
        if !ended && !is_whole_record(&line) {
            data.torn_tail = n as u64;
            break;
        }
        let text = line[..n - usize::from(ended)].trim_ascii();
        if text.is_empty() {
            continue;
        }
        if let Some(
            kind @ (LineKind::Queue | LineKind::PendingNotifications | LineKind::PendingAdded),
        ) = line_kind(text)
        {
            snapshots.push(Snapshot {
                kind,
                at,
                len: n,
                number,
            });
            continue;
        }
        match parse_line(text) {
            Ok(entry) => {
                read_any = true;
                fold(&mut data, entry, path)?;
            }
            Err(e) => {
                first_problem.get_or_insert_with(|| format!("line {number}: {e}"));
                data.damaged_lines.push(number);
            }
        }
    }
    let mut file = reader.into_inner();
    let mut pending_from = 0;
    for kind in [LineKind::Queue, LineKind::PendingNotifications] {
        // The latest readable one; the later ones that are not are damaged.
        for snapshot in snapshots.iter().rev().filter(|s| s.kind == kind) {
            match snapshot.read(&mut file).map_err(io)? {
                Ok(entry) => {
                    read_any = true;
                    let latest = match &entry {
                        Entry::Queue { timestamp, .. } => data.last_activity.max(*timestamp),
                        _ => data.last_activity,
                    };
                    fold(&mut data, entry, path)?;
                    data.last_activity = latest;
                    if kind == LineKind::PendingNotifications {
                        pending_from = snapshot.number;
                    }
                    break;
                }
                Err(e) => {
                    let number = snapshot.number;
                    first_problem.get_or_insert_with(|| format!("line {number}: {e}"));
                    data.damaged_lines.push(number);
                }
            }
        }
    }
    // What arrived after the list in force joins it, in order.
    let added = snapshots
        .iter()
        .filter(|s| s.kind == LineKind::PendingAdded && s.number > pending_from);
    for delta in added {
        match delta.read(&mut file).map_err(io)? {
            Ok(entry) => {
                read_any = true;
                let latest = data.last_activity;
                fold(&mut data, entry, path)?;
                data.last_activity = latest;
            }
            Err(e) => {
                let number = delta.number;
                first_problem.get_or_insert_with(|| format!("line {number}: {e}"));
                data.damaged_lines.push(number);
            }
        }
    }
    data.damaged_lines.sort_unstable();
    finish(&mut data, read_any, first_problem)?;
    let warnings = super::images::restore(path, &mut data.messages);
    data.warnings.extend(warnings);
    super::route::read_inbox(&mut data);
    Ok(data)
}

/// Where a snapshot line (queue, pending notifications) or a line of notifications that
/// arrived is in the file.
struct Snapshot {
    kind: LineKind,
    at: u64,
    len: usize,
    number: usize,
}

impl Snapshot {
    fn read(&self, file: &mut File) -> std::io::Result<Result<Entry, serde_json::Error>> {
        let mut bytes = vec![0; self.len];
        file.seek(SeekFrom::Start(self.at))?;
        file.read_exact(&mut bytes)?;
        Ok(parse_line(bytes.trim_ascii()))
    }
}

/// Fills in what a damaged file lacks and words the warnings.
fn finish(
    data: &mut SessionData,
    read_any: bool,
    first_problem: Option<String>,
) -> Result<(), SessionError> {
    let path = data.path.clone();
    let shown = path.display();
    if data.header.is_none() {
        let nothing = !read_any && data.damaged_lines.is_empty() && data.torn_tail == 0;
        let Some(id) = id_from_name(&path).filter(|_| read_any || nothing) else {
            return Err(SessionError::Invalid {
                path: shown.to_string(),
                reason: "none of its lines is a session line".into(),
            });
        };
        data.header = Some(Header {
            version: FORMAT_VERSION,
            id,
            workspace: String::new(),
            provider: String::new(),
            model: String::new(),
            created: created_from_name(&path).unwrap_or(data.last_activity),
        });
        data.header_missing = true;
        data.warnings.push(if nothing {
            format!("{shown} is empty (claw-tui stopped right after creating it)")
        } else {
            format!("{shown} has no readable header line; its id is taken from the file name")
        });
    }
    let damaged = data.damaged_lines.len();
    if damaged > 0 {
        let mut which: Vec<String> = data
            .damaged_lines
            .iter()
            .take(5)
            .map(ToString::to_string)
            .collect();
        if damaged > 5 {
            which.push(format!("and {} more", damaged - 5));
        }
        data.warnings.push(format!(
            "{shown}: skipped {damaged} damaged line{} ({}); every other line was read{}",
            if damaged == 1 { "" } else { "s" },
            which.join(", "),
            first_problem.map_or(String::new(), |p| format!(" (first problem: {p})")),
        ));
    }
    if data.torn_tail > 0 {
        data.warnings.push(format!(
            "{shown}: the last line is incomplete (claw-tui stopped while writing it); its {} \
             bytes were skipped",
            data.torn_tail
        ));
    }
    Ok(())
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
            // A header written later (to a file whose own was lost) only fills the gap.
            if data.header.is_none() {
                data.last_activity = data.last_activity.max(header.created);
                data.header = Some(header);
            }
        }
        Entry::Message {
            timestamp,
            mut message,
        } => {
            data.last_activity = timestamp;
            // Serde grows a block list to four places; a resumed history keeps every
            // message for the session's life, so it keeps only what it holds.
            if let Message::Assistant(assistant) = &mut message {
                assistant.content.shrink_to_fit();
            }
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
        Entry::Compaction(compaction) => {
            data.last_activity = compaction.timestamp;
            data.compactions.push(compaction);
        }
        Entry::Rewind {
            timestamp,
            messages,
        } => {
            data.last_activity = timestamp;
            data.messages.truncate(messages);
            // A summary of messages taken back no longer stands, even once the history
            // grows past its length again.
            data.compactions.retain(|c| c.history_len <= messages);
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
        Entry::PendingAdded {
            added,
            inbox_offset,
            ..
        } => {
            data.pending_notifications.extend(added);
            data.inbox_offset = inbox_offset;
        }
    }
    Ok(())
}

/// The newest messages of a session, read from the end of its file.
#[derive(Clone, Debug, Default)]
pub struct RecentMessages {
    /// Up to the number asked for, oldest first.
    pub messages: Vec<Message>,
    /// Whether these are all the messages the file holds (the whole file was read).
    pub complete: bool,
}

/// The newest `count` messages of the session file at `path`, reading only as much of
/// its end as they take (e.g. to show the latest part of a long session at once while
/// [`load`] reads the whole history). Damaged lines are skipped.
pub fn load_recent(path: &Path, count: usize) -> Result<RecentMessages, SessionError> {
    const BLOCK: u64 = 1 << 18;
    let io = |e| SessionError::io(path, e);
    let mut file = File::open(path).map_err(io)?;
    let mut end = file.seek(SeekFrom::End(0)).map_err(io)?;
    // The start of a line whose beginning lies in an earlier block.
    let mut carry: Vec<u8> = Vec::new();
    let mut newest_first = Vec::new();
    let mut stopped_early = false;
    while end > 0 && !stopped_early {
        let start = end.saturating_sub(BLOCK);
        let mut block = vec![0; usize::try_from(end - start).unwrap_or(0)];
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        file.read_exact(&mut block).map_err(io)?;
        block.extend_from_slice(&carry);
        let (head, whole) = match block.iter().position(|b| *b == b'\n') {
            _ if start == 0 => (&block[..0], &block[..]),
            Some(i) => (&block[..i], &block[i + 1..]),
            None => (&block[..], &block[..0]),
        };
        if !whole.is_empty() {
            // Bytes after the last newline are a whole record or a torn fragment,
            // which never parses: the parse tells them apart.
            for line in whole.rsplit(|b| *b == b'\n') {
                if let Ok(Entry::Message { message, .. }) = parse_line(line.trim_ascii()) {
                    if newest_first.len() == count {
                        stopped_early = true;
                        break;
                    }
                    newest_first.push(message);
                }
            }
        }
        carry = head.to_vec();
        end = start;
    }
    let complete = end == 0 && !stopped_early;
    newest_first.reverse();
    Ok(RecentMessages {
        messages: newest_first,
        complete,
    })
}
