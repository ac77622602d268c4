//! The run in progress, on disk: a side file (`<session>.streaming`) that exists only
//! while a run is active. It starts with a `run_start` line; each assistant message
//! adds `message_start`, batches of the deltas streamed so far (flushed every
//! [`FLUSH_EVERY`], not per delta, so a long answer costs a few writes a second and its
//! text once), and `message_end` once the message is in the session file. The file is
//! removed when the run ends. Finding it when a session is resumed means the process
//! died mid-run: what had been streamed becomes an aborted message in the session, so
//! nothing that reached the screen is lost and the history says the run was cut short.

use crate::agent::event::{apply_delta, finish_partial};
use crate::agent::{AssistantMessage, MessageDelta, StopReason};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often the deltas of a streaming answer are written to the side file.
pub const FLUSH_EVERY: Duration = Duration::from_millis(250);

/// Unwritten deltas beyond this size are written at once.
pub(super) const FLUSH_BYTES: usize = 64 * 1024;

/// The error text of a message recovered from the side file, when text had arrived.
pub const STOPPED_WHILE_STREAMING: &str =
    "claw-tui stopped while this answer was streaming; what had arrived is kept";
/// The error text of the message that marks a run cut short before its answer came.
pub const STOPPED_BEFORE_ANSWER: &str =
    "claw-tui stopped during this run, before its answer arrived";

/// One line of the side file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum StreamLine {
    /// A run started.
    RunStart {
        /// When.
        timestamp: u64,
    },
    /// An assistant message started streaming.
    MessageStart {
        /// Its model.
        model: String,
        /// Its timestamp (the recorded message carries the same).
        timestamp: u64,
    },
    /// Deltas of the streaming message, in order.
    Deltas {
        /// The deltas.
        deltas: Vec<MessageDelta>,
    },
    /// The message is complete and in the session file.
    MessageEnd,
}

/// What the writer thread does with the side file.
pub(super) enum StreamCommand {
    /// Starts the file with this line (a run began).
    Begin(String),
    /// Appends a line.
    Append(String),
    /// Removes the file (the run ended).
    End,
}

/// The side file, as the writer thread keeps it.
pub(super) struct StreamFile {
    path: PathBuf,
    file: Option<File>,
    /// Whether a failure was already logged (a full disk fails every write).
    warned: bool,
}

impl StreamFile {
    pub(super) fn new(path: PathBuf) -> Self {
        Self {
            path,
            file: None,
            warned: false,
        }
    }

    pub(super) fn apply(&mut self, command: StreamCommand) {
        let result = match command {
            StreamCommand::Begin(line) => super::file::create_side(&self.path)
                .and_then(|mut file| {
                    file.write_all(line.as_bytes())?;
                    Ok(file)
                })
                .map(|file| self.file = Some(file)),
            StreamCommand::Append(line) => match self.file.as_mut() {
                Some(file) => file.write_all(line.as_bytes()),
                None => Ok(()),
            },
            StreamCommand::End => {
                self.file = None;
                match std::fs::remove_file(&self.path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                }
            }
        };
        if let Err(e) = result
            && !std::mem::replace(&mut self.warned, true)
        {
            // Best effort: the session file itself reports its own write errors.
            tracing::warn!(
                "cannot record the streaming answer in {}: {e}",
                self.path.display()
            );
        }
    }
}

/// A run the process did not live to finish, read back from its side file.
#[derive(Debug)]
pub(super) struct Interrupted {
    /// The aborted message to record: what was streamed (maybe nothing).
    pub message: AssistantMessage,
    /// Whether an answer was streaming (else the run stopped between messages).
    pub streaming: bool,
}

/// Reads the side file at `path`, if there is one: `None` when no run was cut short.
/// Damaged lines (the last one torn by the crash) are skipped.
pub(super) fn recover(path: &Path) -> Option<Interrupted> {
    let file = File::open(path).ok()?;
    let mut started = false;
    let mut open: Option<(AssistantMessage, Vec<String>)> = None;
    for line in BufReader::new(file).split(b'\n') {
        let Ok(line) = line else { break };
        match serde_json::from_slice::<StreamLine>(&line) {
            Ok(StreamLine::RunStart { .. }) => started = true,
            Ok(StreamLine::MessageStart { model, timestamp }) => {
                let mut message = AssistantMessage::empty(model);
                message.timestamp = timestamp;
                open = Some((message, Vec::new()));
            }
            Ok(StreamLine::Deltas { deltas }) => {
                if let Some((message, raw_args)) = open.as_mut() {
                    for delta in &deltas {
                        apply_delta(message, raw_args, delta);
                    }
                }
            }
            Ok(StreamLine::MessageEnd) => open = None,
            Err(_) => {}
        }
    }
    if !started && open.is_none() {
        return None;
    }
    let streaming = open.is_some();
    let mut message = match open {
        Some((mut message, raw_args)) => {
            finish_partial(&mut message, &raw_args);
            message
        }
        None => AssistantMessage::empty(""),
    };
    message.stop_reason = StopReason::Aborted;
    let streamed_anything = !message.content.is_empty();
    message.error_message = Some(
        if streamed_anything {
            STOPPED_WHILE_STREAMING
        } else {
            STOPPED_BEFORE_ANSWER
        }
        .to_owned(),
    );
    Some(Interrupted { message, streaming })
}
