//! Sessions in the client (runtime side): the session file being recorded, switching to
//! another one (`/new`, `/sessions`, a copy of one in use) and closing it on quit.

use super::MsgSender;
use super::msg::{LoadedSession, Msg, QueuedText, SessionRow};
use crate::agent::{Agent, AgentEvent, EventKind, NoticeLevel, now_ms};
use crate::cli::Cli;
use crate::config::Settings;
use crate::session::{
    self, Entry, EventRecording, OpenedSession, SessionData, SessionError, SessionWriter,
    record_events_with,
};
use crate::setup::SessionBinding;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::{Mutex, oneshot, watch};
use tokio::task::JoinHandle;

/// Which session to switch to.
pub(super) enum Target {
    /// A fresh one.
    New,
    /// The one in this file.
    Open(PathBuf),
    /// A new one starting from a copy of the one in this file.
    Fork(PathBuf),
}

/// The client's session: what is recorded and how to switch. Cheap to clone.
#[derive(Clone)]
pub(super) struct SessionHost {
    state: Arc<Mutex<HostState>>,
    binding: Option<SessionBinding>,
}

struct HostState {
    agent: Agent,
    data_dir: PathBuf,
    workspace: PathBuf,
    provider: String,
    /// False with `--no-session`: nothing is written.
    enabled: bool,
    recording: Option<Recording>,
}

/// How saving a session goes, as its writer reports it.
type SaveWatch = watch::Receiver<session::SaveStatus>;

struct Recording {
    id: String,
    finish: oneshot::Sender<()>,
    task: JoinHandle<session::SaveStatus>,
    status: SaveWatch,
}

impl SessionHost {
    /// A host for `agent`; `binding` ties sessions to the background runtime, if any.
    pub fn new(
        agent: Agent,
        binding: Option<SessionBinding>,
        settings: &Settings,
        enabled: bool,
    ) -> Self {
        Self {
            state: Arc::new(Mutex::new(HostState {
                agent,
                data_dir: settings.data_dir.clone(),
                workspace: settings.workspace.clone(),
                provider: settings.provider.name.clone(),
                enabled,
                recording: None,
            })),
            binding,
        }
    }

    /// Starts recording the session opened from the flags (`None`: sessions are off);
    /// returns what the chat shows first.
    pub async fn begin(&self, opened: Option<OpenedSession>) -> LoadedSession {
        let mut state = self.state.lock().await;
        let Some(mut opened) = opened else {
            return LoadedSession {
                quiet: true,
                ..LoadedSession::default()
            };
        };
        let loaded = match &mut opened.resumed {
            Some(data) => {
                restore(&state.agent, data);
                loaded_from(&state.agent, data, opened.writer.id())
            }
            None => LoadedSession {
                id: Some(opened.writer.id().to_owned()),
                quiet: opened.notes.is_empty(),
                notes: opened.notes,
                ..LoadedSession::default()
            },
        };
        let loaded = LoadedSession {
            path: Some(opened.writer.path().to_path_buf()),
            ..loaded
        };
        if let Some(binding) = &self.binding {
            // Released when the chat shows the session (`Effect::SessionReady`).
            binding.hold();
            binding.enter(&opened.writer, opened.resumed.as_ref());
        }
        let log = self.event_recording();
        record(&mut state, opened.writer, opened.resumed.as_ref(), &log);
        loaded
    }

    /// Tells `tx` when saving the session recorded now fails and when it works again
    /// (a session switched to is reported by the switch).
    pub async fn report_saving(&self, tx: &MsgSender) {
        let state = self.state.lock().await;
        if let Some(recording) = &state.recording {
            forward_saving(recording.status.clone(), tx.clone());
        }
    }

    /// Lists the workspace's sessions into the picker (off the UI thread).
    pub fn list(&self, tx: &MsgSender) {
        let state = self.state.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let (enabled, data_dir, workspace) = {
                let s = state.lock().await;
                (s.enabled, s.data_dir.clone(), s.workspace.clone())
            };
            if !enabled {
                let _ = tx.send(Msg::Notice(
                    NoticeLevel::Info,
                    "Sessions are off in this run (--no-session).".into(),
                ));
                return;
            }
            let rows = tokio::task::spawn_blocking(move || {
                session::list_sessions(&data_dir, &workspace)
                    .into_iter()
                    .map(|s| SessionRow {
                        id: s.id,
                        path: s.path,
                        created: at(s.created),
                        last_activity: at(s.last_activity),
                        first_prompt: s.first_prompt,
                        message_count: s.message_count,
                        waiting: s.waiting,
                    })
                    .collect()
            })
            .await
            .unwrap_or_default();
            let _ = tx.send(Msg::Sessions(rows));
        });
    }

    /// Lists the workspace's sessions for `/sessions ID` completion (off the UI thread):
    /// each id with its age, how many results wait in it, and its first prompt.
    pub fn list_choices(&self, tx: &MsgSender) {
        let state = self.state.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let (enabled, data_dir, workspace) = {
                let s = state.lock().await;
                (s.enabled, s.data_dir.clone(), s.workspace.clone())
            };
            if !enabled {
                return;
            }
            let choices = tokio::task::spawn_blocking(move || {
                let now = SystemTime::now();
                session::list_sessions(&data_dir, &workspace)
                    .into_iter()
                    .map(|s| {
                        let mut about = vec![crate::tui::overlay::ago(now, at(s.last_activity))];
                        if s.waiting > 0 {
                            about.push(format!("{} waiting", s.waiting));
                        }
                        let prompt = s.first_prompt.as_deref().unwrap_or("(no prompt yet)");
                        about.push(crate::headless::clip(&prompt.replace('\n', " "), 50));
                        (short(&s.id).to_owned(), about.join(" · "))
                    })
                    .collect()
            })
            .await
            .unwrap_or_default();
            let _ = tx.send(Msg::SessionChoices(choices));
        });
    }

    /// Switches to the session whose id starts with `prefix` (`/sessions ID`).
    pub fn open_by_id(&self, prefix: String, tx: &MsgSender) {
        let host = self.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let (data_dir, workspace) = {
                let s = host.state.lock().await;
                (s.data_dir.clone(), s.workspace.clone())
            };
            let found = tokio::task::spawn_blocking(move || {
                session::find_session(&data_dir, &workspace, &prefix)
            })
            .await;
            match found {
                Ok(Ok(path)) => host.switch(Target::Open(path), &tx),
                Ok(Err(e)) => {
                    let _ = tx.send(Msg::SessionFailed(e.to_string()));
                }
                Err(e) => {
                    let _ = tx.send(Msg::SessionFailed(format!(
                        "cannot look for the session: {e}"
                    )));
                }
            }
        });
    }

    /// Switches to `target` in the background; the chat hears back through `tx`.
    pub fn switch(&self, target: Target, tx: &MsgSender) {
        let host = self.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            match host.switch_now(target).await {
                Ok((loaded, status)) => {
                    let _ = tx.send(Msg::SessionLoaded(Box::new(loaded)));
                    // After the chat shows the new session, which forgets the old
                    // one's trouble: nothing this one reports comes before it.
                    if let Some(status) = status {
                        forward_saving(status, tx);
                    }
                }
                Err(msg) => {
                    let _ = tx.send(msg);
                }
            }
        });
    }

    /// The session switched to, and how saving it goes (`None`: sessions are off).
    async fn switch_now(&self, target: Target) -> Result<(LoadedSession, Option<SaveWatch>), Msg> {
        let mut state = self.state.lock().await;
        // Held first, so nothing starts a run between the check and the switch.
        if let Some(binding) = &self.binding {
            binding.hold();
        }
        let opened = self.open_target(&state, target).await;
        let (writer, mut data) = match opened {
            Ok(opened) => opened,
            Err(msg) => {
                self.release();
                return Err(msg);
            }
        };
        let agent = state.agent.clone();
        let Some(writer) = writer else {
            // Sessions are off: only the conversation is cleared.
            agent.reset().await;
            return Ok((LoadedSession::default(), None));
        };
        if let Some(binding) = &self.binding {
            // While the old file is still open: it hears its final pending list.
            binding.enter(&writer, data.as_ref());
        }
        stop_recording(&mut state).await;
        agent.reset().await;
        let loaded = match &mut data {
            Some(data) => {
                restore(&agent, data);
                loaded_from(&agent, data, writer.id())
            }
            None => LoadedSession {
                id: Some(writer.id().to_owned()),
                ..LoadedSession::default()
            },
        };
        let loaded = LoadedSession {
            path: Some(writer.path().to_path_buf()),
            ..loaded
        };
        let status = writer.status();
        let log = self.event_recording();
        record(&mut state, writer, data.as_ref(), &log);
        Ok((loaded, Some(status)))
    }

    /// The file to switch to, locked, and what it holds (`None` writer: sessions off).
    async fn open_target(
        &self,
        state: &HostState,
        target: Target,
    ) -> Result<(Option<SessionWriter>, Option<SessionData>), Msg> {
        if state.agent.state().is_streaming {
            return Err(error(
                "A run is active: wait for it to finish or interrupt it (Esc) before switching sessions.",
            ));
        }
        if !state.enabled {
            return Ok((None, None));
        }
        let model = state.agent.state().model.clone();
        let (data_dir, workspace) = (state.data_dir.clone(), state.workspace.clone());
        let provider = state.provider.clone();
        let opened = tokio::task::spawn_blocking(move || match target {
            Target::New => SessionWriter::create(&data_dir, &workspace, &provider, &model)
                .map(|writer| (writer, None)),
            Target::Open(path) => {
                SessionWriter::resume_file(&path).map(|(writer, data)| (writer, Some(data)))
            }
            Target::Fork(path) => session::load(&path).and_then(|data| {
                SessionWriter::fork(&data, &data_dir, &workspace, &provider, &model)
                    .map(|writer| (writer, Some(data)))
            }),
        })
        .await
        .map_err(|e| error(&format!("cannot open the session: {e}")))?;
        match opened {
            Ok((writer, data)) => Ok((Some(writer), data)),
            Err(SessionError::Locked { path }) => {
                let path = PathBuf::from(path);
                let id = session::load(&path)
                    .map(|d| d.id().to_owned())
                    .unwrap_or_default();
                Err(Msg::SessionLocked { path, id })
            }
            Err(e) => Err(error(&e.to_string())),
        }
    }

    /// The chat shows the session: what waits for it may start now.
    pub fn release(&self) {
        if let Some(binding) = &self.binding {
            binding.release();
        }
    }

    /// What the recorder logs besides the session (see `SessionBinding`).
    fn event_recording(&self) -> EventRecording {
        self.binding
            .as_ref()
            .map_or_else(|| EventRecording::agent_only(true), |b| b.event_recording())
    }

    /// Stops recording: everything recorded is synced and the file closed.
    pub async fn close(&self) {
        let mut state = self.state.lock().await;
        stop_recording(&mut state).await;
    }
}

/// Records the agent into `writer` (already entered, when there is a runtime).
fn record(
    state: &mut HostState,
    writer: SessionWriter,
    data: Option<&SessionData>,
    log: &EventRecording,
) {
    if data.is_some_and(|d| !d.steering.is_empty() || !d.follow_up.is_empty()) {
        forget_queue_when_a_run_starts(&state.agent, &writer);
    }
    let id = writer.id().to_owned();
    let status = writer.status();
    let (finish, task) = record_events_with(&state.agent, writer, log);
    state.recording = Some(Recording {
        id,
        finish,
        task,
        status,
    });
}

/// Sends the chat a message when saving starts failing and when it works again, until
/// the writer is closed.
fn forward_saving(mut status: SaveWatch, tx: MsgSender) {
    tokio::spawn(async move {
        let (mut reported, mut failing) = (0, false);
        loop {
            let now = status.borrow_and_update().clone();
            if now.failures > reported {
                reported = now.failures;
                failing = true;
                let error = now.error.clone().unwrap_or_else(|| "a write failed".into());
                let _ = tx.send(Msg::SessionSave(Some(error)));
            }
            if failing && now.error.is_none() {
                failing = false;
                let _ = tx.send(Msg::SessionSave(None));
            }
            if status.changed().await.is_err() {
                return;
            }
        }
    });
}

/// The queued texts were offered back in the composer, not to the agent: once a run
/// starts without them having been queued again, they are no longer pending.
fn forget_queue_when_a_run_starts(agent: &Agent, writer: &SessionWriter) {
    let mut events = agent.subscribe(Some(&[EventKind::AgentStart, EventKind::QueueUpdate]));
    let appender = writer.appender();
    tokio::spawn(async move {
        if let Some(AgentEvent::AgentStart) = events.recv().await {
            appender.append(&Entry::Queue {
                timestamp: now_ms(),
                steering: Vec::new(),
                follow_up: Vec::new(),
            });
        }
    });
}

async fn stop_recording(state: &mut HostState) {
    if let Some(recording) = state.recording.take() {
        tracing::info!("closing session {}", recording.id);
        // `state()` returns only after the last event was handed to the recorder.
        let _ = state.agent.state();
        let _ = recording.finish.send(());
        let _ = recording.task.await;
    }
}

/// Puts `data`'s history and its compaction back into the agent: the model sees what
/// it saw before.
fn restore(agent: &Agent, data: &SessionData) {
    if let Err(e) = agent.restore_history(data.messages.clone(), data.compaction().cloned()) {
        tracing::error!("cannot restore the session: {e}");
    }
}

/// What the chat shows for `data` continued in the session `id` (its own, or a copy),
/// once `agent` holds its history. The messages move to the chat (`data` keeps none):
/// with the agent's copy, a long history is held twice, not three times.
fn loaded_from(agent: &Agent, data: &mut SessionData, id: &str) -> LoadedSession {
    let mut notes: Vec<String> = data.warnings.clone();
    let copy = data.id() != id;
    if copy {
        notes.push(format!(
            "Continuing in a new session {} with a copy of session {}'s {} messages.",
            short(id),
            short(data.id()),
            data.messages.len()
        ));
    } else if !data.pending_notifications.is_empty() {
        notes.push(format!(
            "{} notification(s) arrived for this session while it was not open; delivering them now.",
            data.pending_notifications.len()
        ));
    }
    LoadedSession {
        id: Some(id.to_owned()),
        messages: std::mem::take(&mut data.messages),
        queued: data
            .steering
            .iter()
            .map(QueuedText::steer)
            .chain(data.follow_up.iter().map(QueuedText::follow_up))
            .collect(),
        path: None,
        resumed: !copy,
        quiet: false,
        notes,
        nested: session::read_subagent_calls(&data.path),
        compactions: data.compactions.clone(),
        context: Some(agent.context_usage()),
    }
}

fn short(id: &str) -> &str {
    &id[..id.len().min(8)]
}

fn error(text: &str) -> Msg {
    Msg::SessionFailed(text.to_owned())
}

fn at(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}

/// Opens the session the flags ask for. One written by another process is offered as a
/// copy on the terminal (before the screen is taken); `--fork` takes the copy unasked.
pub(super) fn open_for_client(
    cli: &Cli,
    settings: &Settings,
) -> Result<Option<OpenedSession>, String> {
    match session::open_session(cli, settings) {
        Err(SessionError::Locked { path }) if !cli.fork => {
            eprint!(
                "claw-tui: session {path} is open in another claw-tui process.\n\
                 Continue in a new session that starts from a copy of its history? [Y/n] "
            );
            let mut answer = String::new();
            let read = std::io::stdin()
                .read_line(&mut answer)
                .map_err(|e| format!("cannot read the answer: {e}"))?;
            let answer = answer.trim().to_lowercase();
            // End of input is no answer, not a yes.
            if read == 0 || !(answer.is_empty() || answer == "y" || answer == "yes") {
                return Err(format!(
                    "session {path} was not opened; close the other claw-tui first, or pass --fork"
                ));
            }
            let forked = Cli {
                fork: true,
                ..cli.clone()
            };
            session::open_session(&forked, settings).map_err(|e| e.to_string())
        }
        other => other.map_err(|e| e.to_string()),
    }
}
