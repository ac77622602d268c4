//! A session's inbox while it is open: another process (the one that fires the cron
//! jobs, say) appends notifications for this session to its inbox file, and the process
//! that has the session open picks them up about once a second (the supervisor's
//! `PARKED_POLL`) instead of at the next resume. A poll rather than a file watch: one
//! `stat` a second costs nothing, works on every file system, and needs no watcher
//! thread.

use super::route::inbox_path;
use crate::runtime::InboundMessage;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Reads the inbox of one session file from where its pending list left off.
#[derive(Debug)]
pub struct InboxReader {
    path: PathBuf,
    offset: u64,
}

impl InboxReader {
    /// The inbox of the session file `session`, of which the first `offset` bytes are
    /// already taken.
    pub fn new(session: &Path, offset: u64) -> Self {
        Self {
            path: inbox_path(session),
            offset,
        }
    }

    /// How much of the inbox has been taken (bytes).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The notifications appended since the last call, and warnings about lines that
    /// could not be read (skipped, never retried). A torn last line (its writer is still
    /// writing, or died) is left for the next call. Costs one `stat` when nothing is new.
    pub fn take_new(&mut self) -> (Vec<InboundMessage>, Vec<String>) {
        let grown = std::fs::metadata(&self.path).is_ok_and(|m| m.len() > self.offset);
        if !grown {
            return (Vec::new(), Vec::new());
        }
        match read_lines(&self.path, self.offset) {
            Ok((messages, warnings, offset)) => {
                self.offset = offset;
                (messages, warnings)
            }
            Err(e) => (
                Vec::new(),
                vec![format!(
                    "cannot read the inbox {}: {e}",
                    self.path.display()
                )],
            ),
        }
    }
}

/// The complete lines of the inbox at `path` from `offset`: the notifications, warnings
/// for unreadable lines, and the offset after the last complete line.
pub(super) fn read_lines(
    path: &Path,
    offset: u64,
) -> std::io::Result<(Vec<InboundMessage>, Vec<String>, u64)> {
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let mut messages = Vec::new();
    let mut warnings = Vec::new();
    let mut end = offset;
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        if line.last() != Some(&b'\n') {
            break;
        }
        end += line.len() as u64;
        match serde_json::from_slice::<InboundMessage>(line) {
            Ok(message) => messages.push(message),
            Err(e) => warnings.push(format!(
                "{}: an unreadable notification was skipped: {e}",
                path.display()
            )),
        }
    }
    Ok((messages, warnings, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::record_undelivered;
    use std::io::Write;

    fn message(content: &str) -> InboundMessage {
        InboundMessage::new("system", "cron", "s1", content.to_owned())
    }

    #[test]
    fn new_lines_are_taken_once_and_a_torn_line_waits() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("2026_s1.jsonl");
        let mut reader = InboxReader::new(&session, 0);
        assert_eq!(reader.take_new().0, []);
        record_undelivered(&session, &message("one")).unwrap();
        record_undelivered(&session, &message("two")).unwrap();
        let (taken, warnings) = reader.take_new();
        let texts: Vec<_> = taken.iter().map(|m| m.content.as_str()).collect();
        assert_eq!((texts, warnings), (vec!["one", "two"], vec![]));
        assert_eq!(reader.take_new().0, []);

        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(inbox_path(&session))
            .unwrap();
        let line = serde_json::to_string(&message("three")).unwrap();
        let (head, tail) = line.split_at(10);
        file.write_all(head.as_bytes()).unwrap();
        let before = reader.offset();
        assert_eq!(reader.take_new().0, []);
        assert_eq!(reader.offset(), before);
        writeln!(file, "{tail}").unwrap();
        writeln!(file, "not json").unwrap();
        let (taken, warnings) = reader.take_new();
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].content, "three");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(
            reader.offset(),
            std::fs::metadata(inbox_path(&session)).unwrap().len()
        );
    }
}
