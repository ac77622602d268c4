//! The writer: a dedicated thread appending lines, syncing at turn boundaries.

use super::file::{SessionData, sessions_dir};
use super::{Entry, FORMAT_VERSION, Header, SessionError, new_session_id};
use crate::agent::{Agent, AgentEvent, now_ms};
use nix::fcntl::{Flock, FlockArg};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use tokio::sync::oneshot;

enum Command {
    Line(String),
    Sync,
    Close(oneshot::Sender<()>),
}

/// Appends to one locked session file from a dedicated thread.
pub struct SessionWriter {
    id: String,
    path: PathBuf,
    tx: mpsc::Sender<Command>,
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
        let dir = sessions_dir(data_dir, workspace);
        crate::private_fs::create_dir(data_dir, &dir).map_err(|e| SessionError::io(&dir, e))?;
        let id = new_session_id();
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
        let path = dir.join(format!("{stamp}_{id}.jsonl"));
        let header = Header {
            version: FORMAT_VERSION,
            id: id.clone(),
            workspace: workspace.display().to_string(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            created: now_ms(),
        };
        let writer = Self::open(&path, id, true)?;
        writer.append(&Entry::Header(header));
        writer.sync();
        Ok(writer)
    }

    /// Continues an existing session: later lines append to the same file. Prefer
    /// [`Self::resume_file`], which reads the file only once it holds the lock.
    pub fn resume(data: &SessionData) -> Result<Self, SessionError> {
        Self::open(&data.path, data.id().to_owned(), false)
    }

    /// Locks the session file at `path`, then reads it: nothing written before the lock
    /// is missed, and nobody else writes it after.
    pub fn resume_file(path: &Path) -> Result<(Self, SessionData), SessionError> {
        if !path.is_file() {
            return Err(SessionError::NotFound(format!(
                "no session file {}",
                path.display()
            )));
        }
        let mut writer = Self::open(path, String::new(), false)?;
        let data = super::file::load(path)?;
        writer.id = data.id().to_owned();
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
            writer.append(&Entry::Message {
                timestamp: now_ms(),
                message: message.clone(),
            });
        }
        writer.append(&Entry::Queue {
            timestamp: now_ms(),
            steering: data.steering.clone(),
            follow_up: data.follow_up.clone(),
        });
        writer.sync();
        Ok(writer)
    }

    fn open(path: &Path, id: String, created: bool) -> Result<Self, SessionError> {
        let file = crate::private_fs::open(path, OpenOptions::new().create(true).append(true))
            .map_err(|e| SessionError::io(path, e))?;
        let file = Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|_| {
            SessionError::Locked {
                path: path.display().to_string(),
            }
        })?;
        let (tx, rx) = mpsc::channel();
        let thread_path = path.to_path_buf();
        std::thread::Builder::new()
            .name("session-writer".into())
            .spawn(move || write_loop(file, &rx, &thread_path))
            .map_err(|e| SessionError::io(path, e))?;
        Ok(Self {
            id,
            path: path.to_path_buf(),
            tx,
            // An existing file is never removed: assume it has messages until read.
            keep: Arc::new(AtomicBool::new(!created)),
        })
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
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

    /// Flushes everything written so far to the disk.
    pub fn sync(&self) {
        let _ = self.tx.send(Command::Sync);
    }

    /// Syncs and closes the file, waiting until it is done. A session created here
    /// that never got a message (and has nothing waiting in its inbox) is removed.
    pub async fn close(self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Command::Close(done)).is_ok() {
            let _ = wait.await;
        }
        if !self.keep.load(Ordering::Relaxed)
            && !super::route::inbox_path(&self.path).exists()
            && let Err(e) = std::fs::remove_file(&self.path)
        {
            tracing::warn!(
                "cannot remove the empty session {}: {e}",
                self.path.display()
            );
        }
    }
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
        Entry::Message { .. } => true,
        Entry::Queue {
            steering,
            follow_up,
            ..
        } => !steering.is_empty() || !follow_up.is_empty(),
        Entry::PendingNotifications { pending, .. } => !pending.is_empty(),
        Entry::Header(_) | Entry::Setting { .. } | Entry::Rewind { .. } => false,
    };
    if worth_keeping {
        keep.store(true, Ordering::Relaxed);
    }
    if let Ok(line) = serde_json::to_string(entry) {
        let _ = tx.send(Command::Line(line));
    }
}

fn write_loop(mut file: Flock<File>, rx: &mpsc::Receiver<Command>, path: &Path) {
    let mut failed = false;
    while let Ok(command) = rx.recv() {
        let result = match command {
            Command::Line(mut line) => {
                line.push('\n');
                // One write per line: the kernel has it even if the process is killed.
                file.write_all(line.as_bytes())
            }
            Command::Sync => file.sync_data(),
            Command::Close(done) => {
                let _ = file.sync_all();
                // The lock goes with the file: released before `close` returns, so the
                // session can be resumed at once.
                drop(file);
                let _ = done.send(());
                return;
            }
        };
        if let Err(e) = result
            && !failed
        {
            failed = true;
            tracing::error!("cannot write session file {}: {e}", path.display());
        }
    }
    // The writer was dropped without `close`: still make what was written durable.
    let _ = file.sync_all();
}

/// Records an agent's messages and queue changes into `writer` until `finish` is sent;
/// then drains what is left, syncs and closes the file.
pub fn record_events(
    agent: &Agent,
    writer: SessionWriter,
) -> (oneshot::Sender<()>, tokio::task::JoinHandle<()>) {
    let mut events = agent.subscribe(None);
    let (finish, mut finished) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        loop {
            tokio::select! {
                biased;
                event = events.recv() => match event {
                    Some(event) => record(&writer, &event),
                    None => break,
                },
                _ = &mut finished => {
                    while let Ok(event) = events.try_recv() {
                        record(&writer, &event);
                    }
                    break;
                }
            }
        }
        writer.close().await;
    });
    (finish, task)
}

fn record(writer: &SessionWriter, event: &AgentEvent) {
    match event {
        AgentEvent::MessageEnd { message } => writer.append(&Entry::Message {
            timestamp: now_ms(),
            message: message.clone(),
        }),
        AgentEvent::QueueUpdate {
            steering,
            follow_up,
        } => writer.append(&Entry::Queue {
            timestamp: now_ms(),
            steering: steering.clone(),
            follow_up: follow_up.clone(),
        }),
        AgentEvent::SettingUpdate { key, value } => writer.append(&Entry::Setting {
            timestamp: now_ms(),
            key: key.clone(),
            value: value.clone(),
        }),
        AgentEvent::TurnEnd { .. } | AgentEvent::AgentEnd { .. } => writer.sync(),
        _ => {}
    }
}
