//! The writer thread's loop. Lines are written in order, one `write` each; a write that
//! fails (a full disk) is cut back so no partial line stays in the file, the line and
//! every later one wait in memory, and writing is retried at the next sync (each turn
//! end): everything waiting is then written in order, so the file never has a hole.
//! How it goes is published as a [`SaveStatus`].

use super::events::{EventLog, LogEntry};
use super::streaming::{StreamCommand, StreamFile};
use nix::fcntl::Flock;
use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;
use tokio::sync::{oneshot, watch};

/// Storage a session file is written to: the file itself ([`FileSink`]), or a wrapper
/// around it that observes or fails writes (fault tests).
pub trait SessionSink: Send + 'static {
    /// Appends all of `bytes`; on error, part of them may have been written.
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// Makes what was appended durable.
    fn sync(&mut self) -> std::io::Result<()>;
    /// Cuts the storage back to its first `len` bytes.
    fn truncate(&mut self, len: u64) -> std::io::Result<()>;
}

/// The locked session file.
pub struct FileSink(Flock<File>);

impl FileSink {
    pub(super) fn new(file: Flock<File>) -> Self {
        Self(file)
    }
}

impl SessionSink for FileSink {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        // One write per line: the kernel has it even if the process is killed.
        self.0.write_all(bytes)
    }

    fn sync(&mut self) -> std::io::Result<()> {
        self.0.sync_data()
    }

    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.0.set_len(len)
    }
}

/// How saving a session is going.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SaveStatus {
    /// The write error, while lines wait to be written; `None` when all is written.
    pub error: Option<String>,
    /// Lines waiting to be written.
    pub unsaved: usize,
    /// How many times writing started to fail (a watcher that saw fewer missed one).
    pub failures: u64,
    /// The logs beside the session (events, requests) that cannot be written now, by
    /// file name, with the error: their lines wait in memory and are written, in
    /// order, once there is room. Empty when everything is written.
    pub side_logs: std::collections::BTreeMap<String, String>,
    /// How many times a side log started to fail.
    pub side_failures: u64,
}

/// Where a log beside the session reports how its writing goes: into the session's
/// [`SaveStatus`], which the client and the headless modes tell the user about.
#[derive(Clone, Debug)]
pub struct SideLogReport(watch::Sender<SaveStatus>);

impl SideLogReport {
    pub(super) fn new(status: watch::Sender<SaveStatus>) -> Self {
        Self(status)
    }

    /// A report nobody hears: a log written without a session (benches, tools).
    pub fn unheard() -> Self {
        Self(watch::Sender::new(SaveStatus::default()))
    }

    /// The log `name` cannot be written: `error`.
    pub(super) fn failing(&self, name: &str, error: String) {
        self.0.send_if_modified(|status| {
            let first = !status.side_logs.contains_key(name);
            if first {
                status.side_failures += 1;
            }
            let changed = status.side_logs.get(name) != Some(&error);
            status.side_logs.insert(name.to_owned(), error);
            changed
        });
    }

    /// Everything the log `name` held back is written.
    pub(super) fn recovered(&self, name: &str) {
        self.0
            .send_if_modified(|status| status.side_logs.remove(name).is_some());
    }
}

impl SaveStatus {
    /// Everything recorded so far is in the file.
    pub fn is_saved(&self) -> bool {
        self.error.is_none()
    }
}

/// What the thread is asked to do, in order.
pub(super) enum Command {
    /// Write one line (without its newline).
    Line(String),
    /// Retry what waits, then make the file durable (a turn boundary).
    Sync,
    /// Something for the side file of the run in progress.
    Stream(StreamCommand),
    /// A line for the event log (`events.rs`).
    Event(LogEntry),
    /// Lines for the event log, oldest first.
    Events(Vec<LogEntry>),
    /// Answers once everything sent before is done.
    Barrier(mpsc::Sender<()>),
    /// Write what waits, sync, and stop; answers with the final status.
    Close(oneshot::Sender<SaveStatus>),
}

/// The state of the writer thread.
pub(super) struct WriteLoop {
    pub sink: Box<dyn SessionSink>,
    pub path: PathBuf,
    /// Bytes of whole lines in the file: where a failed write is cut back to.
    pub len: u64,
    /// The file ends in a fragment that could not be cut: start the next line anew.
    pub needs_newline: bool,
    pub stream: StreamFile,
    pub events: EventLog,
    pub status: watch::Sender<SaveStatus>,
    /// A failed write may have left part of a line that could not be cut yet.
    pub cut_pending: bool,
    /// Lines not yet written, oldest first.
    pub waiting: VecDeque<String>,
}

impl WriteLoop {
    pub(super) fn run(mut self, rx: &mpsc::Receiver<Command>) {
        let mut closing = None;
        while let Ok(command) = rx.recv() {
            match command {
                Command::Line(mut line) => {
                    line.push('\n');
                    self.waiting.push_back(line);
                    // While failing, lines wait for the next turn boundary: a full disk
                    // is not retried once per streamed message.
                    if self.status.borrow().is_saved() {
                        self.write_waiting();
                    }
                }
                Command::Sync => self.sync(),
                Command::Stream(command) => self.stream.apply(command),
                Command::Event(entry) => self.events.write(&entry),
                Command::Events(entries) => {
                    entries.iter().for_each(|entry| self.events.write(entry))
                }
                Command::Barrier(done) => {
                    let _ = done.send(());
                }
                Command::Close(done) => {
                    closing = Some(done);
                    break;
                }
            }
        }
        // Closed, or the writer was dropped without `close`: write and sync what waits.
        self.sync();
        let status = self.status.borrow().clone();
        // The lock goes with the file: released before anyone hears it is closed.
        drop(self);
        if let Some(done) = closing {
            let _ = done.send(status);
        }
    }

    fn sync(&mut self) {
        self.events.flush();
        if self.write_waiting() {
            match self.sink.sync() {
                Ok(()) => self.recovered(),
                Err(e) => self.failed(&e),
            }
        }
    }

    /// Writes the waiting lines in order; false when one failed (it and the later ones
    /// keep waiting).
    fn write_waiting(&mut self) -> bool {
        if self.cut_pending {
            if let Err(e) = self.sink.truncate(self.len) {
                self.failed(&e);
                return false;
            }
            self.cut_pending = false;
        }
        while let Some(line) = self.waiting.front() {
            let result = if self.needs_newline {
                self.sink.append(format!("\n{line}").as_bytes())
            } else {
                self.sink.append(line.as_bytes())
            };
            match result {
                Ok(()) => {
                    self.len += line.len() as u64 + u64::from(self.needs_newline);
                    self.needs_newline = false;
                    self.waiting.pop_front();
                }
                Err(e) => {
                    // What part of the line got in must go, or the next write would
                    // append after a fragment; if even that fails, cut before the next.
                    self.cut_pending = self.sink.truncate(self.len).is_err();
                    self.failed(&e);
                    return false;
                }
            }
        }
        true
    }

    fn failed(&mut self, error: &std::io::Error) {
        let unsaved = self.waiting.len();
        let text = format!(
            "cannot write the session file {}: {error}",
            self.path.display()
        );
        self.status.send_if_modified(|status| {
            let first = status.error.is_none();
            if first {
                status.failures += 1;
                tracing::error!("{text}");
            }
            let changed = first || status.unsaved != unsaved;
            status.error = Some(text);
            status.unsaved = unsaved;
            changed
        });
    }

    fn recovered(&mut self) {
        self.status.send_if_modified(|status| {
            let was_failing = status.error.take().is_some();
            status.unsaved = 0;
            if was_failing {
                tracing::info!("the session file {} is written again", self.path.display());
            }
            was_failing
        });
    }
}
