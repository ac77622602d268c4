//! The writer: one locked session file, appended to from a dedicated thread (see
//! `sink.rs`), synced at turn boundaries.

use super::events::{EventLog, LogEntry};
use super::fast::is_whole_record;
use super::file::{create_dir, open_locked, sessions_dir, streaming_path};
use super::load::{SessionData, load};
use super::repair::repair_tail;
use super::side_log::repair_side_logs;
use super::sink::{Command, FileSink, SaveStatus, SessionSink, SideLogReport, WriteLoop};
use super::streaming::{self, StreamCommand, StreamFile};
use super::{Entry, FORMAT_VERSION, Header, SessionError, new_session_id};
use crate::agent::{Message, StopReason, now_ms};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use tokio::sync::{oneshot, watch};

/// Wraps the file's sink (see [`SessionWriter::create_wrapped`]).
pub type WrapSink = Box<dyn FnOnce(FileSink) -> Box<dyn SessionSink>>;

/// Appends to one locked session file from a dedicated thread.
pub struct SessionWriter {
    id: String,
    path: PathBuf,
    tx: mpsc::Sender<Command>,
    status: watch::Receiver<SaveStatus>,
    /// Where the logs beside the session report their trouble (into `status`).
    side_logs: SideLogReport,
    /// Whether the file holds anything worth keeping (a message, a queued message, a
    /// waiting notification): one that never did is removed on close, so starting and
    /// quitting leaves nothing for `-c` to pick up.
    keep: Arc<AtomicBool>,
}

impl SessionWriter {
    /// Starts a new session file for `workspace` under `data_dir`.
    pub fn create(
        data_dir: &Path,
        workspace: &Path,
        provider: &str,
        model: &str,
    ) -> Result<Self, SessionError> {
        Self::create_wrapped(
            data_dir,
            workspace,
            provider,
            model,
            Box::new(|f| Box::new(f)),
        )
    }

    /// [`Self::create`], with the file's sink passed through `wrap` first (to observe
    /// or fail its writes, as fault tests do).
    pub fn create_wrapped(
        data_dir: &Path,
        workspace: &Path,
        provider: &str,
        model: &str,
        wrap: WrapSink,
    ) -> Result<Self, SessionError> {
        let dir = sessions_dir(data_dir, workspace);
        create_dir(data_dir, &dir)?;
        let id = new_session_id();
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
        let path = dir.join(format!("{stamp}_{id}.jsonl"));
        let file = open_locked(&path, true)?;
        let writer = Self::start(file, &path, id.clone(), 0, false, wrap, true)?;
        writer.append(&header(&id, workspace, provider, model));
        writer.sync();
        Ok(writer)
    }

    /// Continues an existing session: later lines append to the same file. Prefer
    /// [`Self::resume_file`], which reads the file only once it holds the lock.
    pub fn resume(data: &SessionData) -> Result<Self, SessionError> {
        Ok(Self::resume_file(&data.path)?.0)
    }

    /// Locks the session file at `path`, makes it safe to append to (a torn last line
    /// is cut off and kept in the `.damaged` side file), then reads it: nothing written
    /// before the lock is missed, and nobody else writes it after. A run the last
    /// process did not live to finish is closed with an aborted message holding what it
    /// had streamed. What the user should know is in the data's `warnings`.
    pub fn resume_file(path: &Path) -> Result<(Self, SessionData), SessionError> {
        if !path.is_file() {
            return Err(SessionError::NotFound(format!(
                "no session file {}",
                path.display()
            )));
        }
        let mut file = open_locked(path, false)?;
        let repair =
            repair_tail(&mut file, path, is_whole_record).map_err(|e| SessionError::io(path, e))?;
        // The logs beside it too, before anything appends to them.
        let side_notes = repair_side_logs(path);
        let mut data = load(path)?;
        let writer = Self::start(
            file,
            path,
            data.id().to_owned(),
            repair.len,
            repair.needs_newline,
            Box::new(|f| Box::new(f)),
            false,
        )?;
        if let Some(note) = repair.note {
            data.warnings.insert(0, note);
        }
        data.warnings.extend(side_notes);
        if data.header_missing
            && let Some(h) = &data.header
        {
            // Later loads find the header again instead of guessing it.
            writer.append(&Entry::Header(h.clone()));
        }
        writer.close_interrupted_run(&mut data);
        writer.sync();
        // What was recovered is in the file (and the side file gone) before anyone reads.
        writer.settle();
        Ok((writer, data))
    }

    /// A new session starting from a copy of `data`'s history and queues.
    pub fn fork(
        data: &SessionData,
        data_dir: &Path,
        workspace: &Path,
        provider: &str,
        model: &str,
    ) -> Result<Self, SessionError> {
        let writer = Self::create(data_dir, workspace, provider, model)?;
        for message in &data.messages {
            // The copy may live in another directory than the original (a path given
            // with --session): its images go to the copy's store.
            if let Err(e) = super::images::save(writer.path(), message) {
                tracing::error!(
                    "cannot store the images of {}: {e}",
                    writer.path().display()
                );
            }
            writer.append(&Entry::Message {
                timestamp: now_ms(),
                message: message.clone(),
            });
        }
        for compaction in &data.compactions {
            writer.append(&Entry::Compaction(compaction.clone()));
        }
        writer.append(&Entry::Queue {
            timestamp: now_ms(),
            steering: data.steering.clone(),
            follow_up: data.follow_up.clone(),
        });
        writer.sync();
        Ok(writer)
    }

    fn start(
        file: nix::fcntl::Flock<std::fs::File>,
        path: &Path,
        id: String,
        len: u64,
        needs_newline: bool,
        wrap: WrapSink,
        created: bool,
    ) -> Result<Self, SessionError> {
        let (tx, rx) = mpsc::channel();
        let (status_tx, status) = watch::channel(SaveStatus::default());
        let side_logs = SideLogReport::new(status_tx.clone());
        let state = WriteLoop {
            sink: wrap(FileSink::new(file)),
            path: path.to_path_buf(),
            len,
            needs_newline,
            stream: StreamFile::new(streaming_path(path)),
            events: EventLog::new(path, side_logs.clone()),
            status: status_tx,
            cut_pending: false,
            waiting: VecDeque::new(),
        };
        std::thread::Builder::new()
            .name("session-writer".into())
            .spawn(move || state.run(&rx))
            .map_err(|e| SessionError::io(path, e))?;
        Ok(Self {
            id,
            path: path.to_path_buf(),
            tx,
            status,
            side_logs,
            // An existing file is never removed: assume it has messages until read.
            keep: Arc::new(AtomicBool::new(!created)),
        })
    }

    /// Records the end of a run the previous process did not finish (its side file is
    /// still there): an aborted message with what it had streamed, unless that message
    /// made it into the file already.
    fn close_interrupted_run(&self, data: &mut SessionData) {
        let side = streaming_path(&self.path);
        let Some(interrupted) = streaming::recover(&side) else {
            return;
        };
        // The run may have ended after all, only its side file not yet removed.
        let finished = match data.messages.last() {
            Some(Message::Assistant(a)) if interrupted.streaming => {
                a.timestamp == interrupted.message.timestamp
            }
            Some(Message::Assistant(a)) => a.stop_reason != StopReason::ToolUse,
            Some(Message::Notice(_)) => !interrupted.streaming,
            _ => false,
        };
        if !finished {
            let chars: usize = interrupted.message.text().chars().count();
            data.warnings.push(if chars > 0 {
                format!(
                    "claw-tui stopped while an answer was streaming: the {chars} characters that \
                     had arrived are kept, marked as interrupted"
                )
            } else {
                "claw-tui stopped during the last run, before its answer arrived; the run is \
                 marked as interrupted"
                    .to_owned()
            });
            let message = Message::Assistant(interrupted.message);
            self.append(&Entry::Message {
                timestamp: now_ms(),
                message: message.clone(),
            });
            data.messages.push(message);
        }
        self.stream(StreamCommand::End);
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How saving goes: changes when writing starts failing and when it recovers.
    pub fn status(&self) -> watch::Receiver<SaveStatus> {
        self.status.clone()
    }

    /// Where a log beside this session (the request log) reports how its writing goes,
    /// into [`Self::status`].
    pub fn side_log_report(&self) -> SideLogReport {
        self.side_logs.clone()
    }

    /// Appends one entry (written at once, synced at the next `sync`).
    pub fn append(&self, entry: &Entry) {
        send_entry(&self.tx, &self.keep, entry);
    }

    /// A handle that appends to this file from elsewhere, until it is closed.
    pub fn appender(&self) -> SessionAppender {
        SessionAppender {
            tx: self.tx.clone(),
            keep: self.keep.clone(),
        }
    }

    /// Retries what could not be written, then flushes everything to the disk.
    pub fn sync(&self) {
        let _ = self.tx.send(Command::Sync);
    }

    /// Blocks until the thread has done everything sent before.
    fn settle(&self) {
        let (done, wait) = mpsc::channel();
        if self.tx.send(Command::Barrier(done)).is_ok() {
            let _ = wait.recv();
        }
    }

    pub(super) fn stream(&self, command: StreamCommand) {
        let _ = self.tx.send(Command::Stream(command));
    }

    /// Hands a line to the event log (written by the same thread, flushed at syncs).
    pub(super) fn log_event(&self, entry: LogEntry) {
        let _ = self.tx.send(Command::Event(entry));
    }

    /// Hands lines to the event log in one message: one wake-up of the thread for many.
    pub(super) fn log_events(&self, entries: Vec<LogEntry>) {
        let _ = self.tx.send(Command::Events(entries));
    }

    /// Writes what waits, syncs and closes the file, waiting until it is done; returns
    /// how saving ended (an error: lines that never reached the file). A session created
    /// here that never got a message (and has nothing waiting in its inbox) is removed.
    pub async fn close(self) -> SaveStatus {
        let (done, wait) = oneshot::channel();
        let status = if self.tx.send(Command::Close(done)).is_ok() {
            wait.await.unwrap_or_else(|_| self.status.borrow().clone())
        } else {
            self.status.borrow().clone()
        };
        if !self.keep.load(Ordering::Relaxed) && !super::route::inbox_path(&self.path).exists() {
            if let Err(e) = std::fs::remove_file(&self.path) {
                tracing::warn!(
                    "cannot remove the empty session {}: {e}",
                    self.path.display()
                );
            }
            // Its events (a setting change, at most) go with it.
            let _ = std::fs::remove_file(super::events::events_path(&self.path));
        }
        status
    }
}

fn header(id: &str, workspace: &Path, provider: &str, model: &str) -> Entry {
    Entry::Header(Header {
        version: FORMAT_VERSION,
        id: id.to_owned(),
        workspace: workspace.display().to_string(),
        provider: provider.to_owned(),
        model: model.to_owned(),
        created: now_ms(),
    })
}

/// Appends entries to an open session file (see [`SessionWriter::appender`]); after
/// the writer is closed, appends go nowhere.
#[derive(Clone)]
pub struct SessionAppender {
    tx: mpsc::Sender<Command>,
    keep: Arc<AtomicBool>,
}

impl SessionAppender {
    /// Appends one entry.
    pub fn append(&self, entry: &Entry) {
        send_entry(&self.tx, &self.keep, entry);
    }
}

fn send_entry(tx: &mpsc::Sender<Command>, keep: &AtomicBool, entry: &Entry) {
    let worth_keeping = match entry {
        Entry::Message { .. } | Entry::Compaction(_) => true,
        Entry::Queue {
            steering,
            follow_up,
            ..
        } => !steering.is_empty() || !follow_up.is_empty(),
        Entry::PendingNotifications { pending, .. } => !pending.is_empty(),
        Entry::PendingAdded { added, .. } => !added.is_empty(),
        Entry::Header(_) | Entry::Setting { .. } | Entry::Rewind { .. } => false,
    };
    if worth_keeping {
        keep.store(true, Ordering::Relaxed);
    }
    if let Ok(line) = serde_json::to_string(entry) {
        let _ = tx.send(Command::Line(line));
    }
}
