//! Writing a log beside a session file (its event log, its request log) with the
//! session file's own discipline: only whole lines. A torn last line a crash left is
//! cut aside into `<log>.damaged` before anything is appended (a whole record that
//! lacks only its newline gets it), and said; a write that fails (a full disk) is cut
//! back to the last whole line, and its lines and every later one wait in memory and
//! are written, in order, at the next flush that finds room. How it goes is reported
//! into the session's `SaveStatus` ([`SideLogReport`]). A log other processes may append
//! to as well (the subagents' calls, written without the session's lock) is opened for
//! each write under a lock of its own, and measured and repaired anew each time.

use super::file::open_side_log;
use super::repair::{is_json_value, repair_tail};
use super::sink::SideLogReport;
use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What is said of a log beside the session that cannot be written.
pub const FAILING_NOTE: &str = "its lines wait in memory and are written, in order, at the end \
     of a turn once there is room; the session file itself is reported on its own";

/// The words for the log `log` failing with `error`, alike in every front-end.
pub fn failing_text(log: &str, error: &str) -> String {
    format!("cannot write {log} ({error}): {FAILING_NOTE}")
}

/// The most bytes held back while writing fails; past it, what waits is dropped (and
/// said), so a disk full for hours cannot exhaust memory.
const MAX_BACKLOG: usize = 64 << 20;
/// Bytes written at once, without waiting for the next flush, while writing works.
const WRITE_AT: usize = 64 << 10;

/// One log beside a session, written from one thread.
pub struct SideLog {
    path: PathBuf,
    name: String,
    file: Option<File>,
    /// Bytes of whole lines in the file: where a failed write is cut back to.
    len: u64,
    /// The file ends in a fragment that could be neither cut nor ended: the next write
    /// starts a new line.
    needs_newline: bool,
    /// Whole lines not written yet, oldest first.
    pending: Vec<u8>,
    /// A failed write left bytes that could not be cut back yet.
    cut_pending: bool,
    /// Why writing fails, while lines wait; `None` when everything is written.
    error: Option<String>,
    report: SideLogReport,
    /// The most bytes held back ([`MAX_BACKLOG`]; smaller in tests).
    limit: usize,
    /// Other processes may append too: each write takes the file's lock (see the
    /// module's doc).
    shared: bool,
}

impl SideLog {
    /// The log at `path`, opened with its first write; trouble goes to `report`.
    pub fn new(path: PathBuf, report: SideLogReport) -> Self {
        let name = file_name(&path);
        Self {
            path,
            name,
            file: None,
            len: 0,
            needs_newline: false,
            pending: Vec::new(),
            cut_pending: false,
            error: None,
            report,
            limit: MAX_BACKLOG,
            shared: false,
        }
    }

    /// The log at `path`, which other processes may append to as well: each write
    /// opens it and takes its lock, then deals with a torn last line (any writer's)
    /// and appends after what is there now.
    pub fn shared(path: PathBuf, report: SideLogReport) -> Self {
        Self {
            shared: true,
            ..Self::new(path, report)
        }
    }

    /// [`Self::flush`], reporting into `report` for this once: a log that outlives the
    /// sessions it reports to (the subagents' calls) holds none of their reports
    /// between writes, since a session's status ends only when every holder let go. A
    /// failure under way is said there first: whoever hears it may not have yet.
    pub fn flush_into(&mut self, report: SideLogReport) {
        self.report = report;
        if let Some(error) = &self.error {
            self.report.failing(&self.name, error.clone());
        }
        self.flush();
        self.report = SideLogReport::unheard();
    }

    /// Whether lines wait because writing failed (a later [`Self::flush`] retries).
    pub fn is_failing(&self) -> bool {
        self.error.is_some()
    }

    /// Queues one whole line (with its newline), written once enough waits (while
    /// writing works) or at the next [`Self::flush`]. False when the lines held back
    /// had to be dropped (writing failed for too long): what follows may refer to
    /// lines the log will never have.
    pub fn push(&mut self, line: &[u8]) -> bool {
        let mut kept = true;
        if let Some(error) = &self.error
            && self.pending.len() + line.len() > self.limit
        {
            let lost = self.pending.iter().filter(|b| **b == b'\n').count();
            self.pending.clear();
            let error = format!(
                "{error}; the {lost} lines held back (over {} KiB) were dropped",
                self.limit >> 10
            );
            tracing::error!("cannot write {}: {error}", self.path.display());
            self.report.failing(&self.name, error.clone());
            self.error = Some(error);
            kept = false;
        }
        self.pending.extend_from_slice(line);
        if self.error.is_none() && self.pending.len() >= WRITE_AT {
            self.flush();
        }
        kept
    }

    /// Writes everything that waits (a turn boundary, closing); a failure keeps it
    /// waiting for the next flush.
    pub fn flush(&mut self) {
        if self.pending.is_empty() && !self.cut_pending {
            return;
        }
        match self.write_pending() {
            Ok(()) => {
                if self.error.take().is_some() {
                    tracing::info!("{} is written again", self.path.display());
                    self.report.recovered(&self.name);
                }
            }
            Err(e) => {
                let error = e.to_string();
                if self.error.is_none() {
                    tracing::error!(
                        "cannot write {}: {error}; its lines wait in memory",
                        self.path.display()
                    );
                }
                self.report.failing(&self.name, error.clone());
                self.error = Some(error);
            }
        }
    }

    fn write_pending(&mut self) -> std::io::Result<()> {
        if self.shared {
            return self.write_shared();
        }
        if self.file.is_none() {
            self.open()?;
        }
        let Some(mut file) = self.file.take() else {
            return Ok(());
        };
        let written = self.cut_and_append(&mut file);
        self.file = Some(file);
        written
    }

    /// Appends what waits to a log others may write too, under its lock.
    fn write_shared(&mut self) -> std::io::Result<()> {
        let file = open_side_log(&self.path, true)?;
        let mut file =
            Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| std::io::Error::from(e))?;
        // Another process may have appended since, or left a fragment (or this one,
        // when cutting a failed write back failed): the file is taken as it is now.
        self.repair(&mut file)?;
        self.cut_pending = false;
        self.cut_and_append(&mut file)
    }

    /// Cuts back what a failed write left, then appends what waits.
    fn cut_and_append(&mut self, file: &mut File) -> std::io::Result<()> {
        if self.cut_pending {
            file.set_len(self.len)?;
            self.cut_pending = false;
        }
        if self.needs_newline {
            self.pending.insert(0, b'\n');
            self.needs_newline = false;
        }
        match file.write_all(&self.pending) {
            Ok(()) => {
                self.len += self.pending.len() as u64;
                self.pending.clear();
                Ok(())
            }
            Err(e) => {
                // What part got in must go, or the next write would follow a fragment.
                self.cut_pending = file.set_len(self.len).is_err();
                Err(e)
            }
        }
    }

    /// Opens the log for appending; a torn last line is dealt with first.
    fn open(&mut self) -> std::io::Result<()> {
        let mut file = open_side_log(&self.path, true)?;
        self.repair(&mut file)?;
        self.file = Some(file);
        Ok(())
    }

    /// Cuts a torn last line aside (see `repair_tail`) and takes the file's length.
    fn repair(&mut self, file: &mut File) -> std::io::Result<()> {
        let repair = repair_tail(file, &self.path, is_json_value)?;
        if let Some(note) = repair.note {
            tracing::warn!("{note}");
        }
        self.len = repair.len;
        self.needs_newline |= repair.needs_newline;
        Ok(())
    }
}

/// The request log beside the session file `session` (written by the request
/// recorder a [`SessionBinding`](super::SessionBinding) starts).
pub fn requests_path(session: &Path) -> PathBuf {
    session.with_extension("requests.jsonl")
}

/// Makes the logs beside the session file `session` safe to append to before anyone
/// writes them (the caller holds the session's lock): a torn last line is cut aside
/// into `<log>.damaged`. What the user should know, one line per log repaired.
pub(super) fn repair_side_logs(session: &Path) -> Vec<String> {
    let logs = [
        super::events::events_path(session),
        requests_path(session),
        super::subagent_calls::subagent_calls_path(session),
    ];
    let mut notes = Vec::new();
    for path in logs {
        // Locked as a shared log's writers lock it (the others have the session's).
        let opened = open_side_log(&path, false)
            .and_then(|file| Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| e.into()));
        let mut file = match opened {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                notes.push(format!("cannot open {}: {e}", path.display()));
                continue;
            }
        };
        match repair_tail(&mut file, &path, is_json_value) {
            Ok(repair) => notes.extend(repair.note),
            Err(e) => notes.push(format!("cannot repair {}: {e}", path.display())),
        }
    }
    notes
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::SaveStatus;

    #[test]
    fn lines_wait_while_writing_fails_and_go_out_in_order_once_it_works() {
        let dir = tempfile::tempdir().unwrap();
        // Its directory is missing: every write fails until it is made.
        let path = dir.path().join("later/s.events.jsonl");
        let (tx, status) = tokio::sync::watch::channel(SaveStatus::default());
        let mut log = SideLog::new(path.clone(), SideLogReport::new(tx));
        log.limit = 40;
        assert!(log.push(b"{\"n\":1}\n"));
        log.flush();
        assert_eq!(status.borrow().side_failures, 1);
        assert!(status.borrow().side_logs["s.events.jsonl"].contains("No such file"));
        assert!(log.push(b"{\"n\":2}\n"));
        log.flush();
        assert_eq!(status.borrow().side_failures, 1, "one failure, told once");

        std::fs::create_dir(dir.path().join("later")).unwrap();
        log.flush();
        assert!(status.borrow().side_logs.is_empty(), "recovered");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":1}\n{\"n\":2}\n"
        );

        // Failing again for longer than the backlog holds: what waited is dropped and
        // said, and what comes after is still written whole.
        std::fs::remove_file(&path).unwrap();
        std::fs::remove_dir(dir.path().join("later")).unwrap();
        log.file = None;
        log.push(b"{\"n\":3}\n");
        log.flush();
        assert!(log.push(b"{\"n\":4}\n"));
        assert!(!log.push(b"{\"n\":5, \"pad\":\"xxxxxxxxxxxxxxxxxxxx\"}\n"));
        assert!(status.borrow().side_logs["s.events.jsonl"].contains("2 lines held back"));
        std::fs::create_dir(dir.path().join("later")).unwrap();
        log.flush();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":5, \"pad\":\"xxxxxxxxxxxxxxxxxxxx\"}\n"
        );
    }

    #[test]
    fn a_torn_last_line_is_cut_aside_before_the_first_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.requests.jsonl");
        std::fs::write(&path, "{\"a\":1}\n{\"b\":").unwrap();
        let mut log = SideLog::new(path.clone(), SideLogReport::unheard());
        log.push(b"{\"c\":3}\n");
        log.flush();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"c\":3}\n"
        );
        let damaged = std::fs::read_to_string(dir.path().join("s.requests.damaged")).unwrap();
        assert!(damaged.contains("{\"b\":"), "{damaged}");
    }
}
