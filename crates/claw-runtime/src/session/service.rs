//! The session service: the one owner of the session a process records. It opens the
//! session the flags chose into the agent (resumed or forked), switches to another one
//! (new, resumed, forked), records the agent into it and closes it; the client and the
//! headless modes both go through it, so each of these is written once.
//!
//! Switching holds the supervisor's deliveries with a [`SwitchHold`] guard: an error or
//! an early return drops it, so no path can leave the supervisor held. A switch that
//! succeeds keeps its guard until the caller shows the session ([`SessionService::ready`]).

use super::binding::SessionBinding;
use super::list::{SessionSummary, find_session, list_sessions};
use super::load::{SessionData, load};
use super::open::OpenedSession;
use super::record::record_events_with;
use super::sink::{SaveStatus, SideLogReport};
use super::writer::SessionWriter;
use super::{Entry, SessionError};
use crate::agent::{Agent, AgentError, AgentEvent, EventKind, Message, QueueKind, now_ms};
use crate::config::Settings;
use crate::runtime::SwitchHold;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

/// How saving a session goes, as its writer reports it.
pub type SaveWatch = watch::Receiver<SaveStatus>;

/// The session to switch to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionTarget {
    /// A fresh one.
    New,
    /// The one in this file, continued.
    Resume(PathBuf),
    /// A new one starting from a copy of the one in this file.
    Fork(PathBuf),
}

/// Where a resumed session's history and queued messages go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resume {
    /// Into the agent alone (the headless modes): the history is moved in, the queued
    /// messages are queued again, and nothing is held back.
    IntoAgent,
    /// Into the agent and onto a screen (the client): the history is shared with the
    /// caller ([`Entered::shown`], the agent's own messages, not a copy), the queued messages are left for the caller to offer back (dropped
    /// from the file once a run starts without them), and nothing is delivered to the
    /// agent before [`SessionService::ready`].
    OnScreen,
}

/// The session being recorded now.
#[derive(Debug)]
pub struct Entered {
    /// Its id.
    pub id: String,
    /// Its file.
    pub path: PathBuf,
    /// What it continues (its own history, or the one it copies), if anything; its
    /// messages went to the agent.
    pub resumed: Option<SessionData>,
    /// With [`Resume::OnScreen`], the history the agent was given, for the screen: the
    /// very messages the agent holds (empty otherwise).
    pub shown: Arc<[Message]>,
    /// Things to tell the user (torn line skipped, nothing to continue...).
    pub notes: Vec<String>,
    /// How saving it goes.
    pub saving: SaveWatch,
}

/// Why a switch did not happen (the session recorded before stays).
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    /// The agent is running.
    #[error(
        "A run is active: wait for it to finish or interrupt it (Esc) before switching sessions."
    )]
    Busy,
    /// Another process writes the session asked for.
    #[error("session {} is open in another claw-tui process", path.display())]
    Locked {
        /// Its file.
        path: PathBuf,
        /// Its id (empty when it cannot be read).
        id: String,
    },
    /// The session could not be opened or created.
    #[error(transparent)]
    Session(SessionError),
    /// The task opening it failed.
    #[error("cannot open the session: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// The session a process records, and the switches between sessions. Not shared: its
/// owner carries out one operation at a time.
pub struct SessionService {
    agent: Agent,
    binding: Option<SessionBinding>,
    data_dir: PathBuf,
    workspace: PathBuf,
    provider: String,
    /// False with `--no-session`: nothing is written.
    enabled: bool,
    recording: Option<Recording>,
    /// Held from a switch until the caller shows the session.
    hold: Option<SwitchHold>,
    /// `[session] record_requests`.
    record_requests: bool,
    /// Where the logs beside the session being recorded report how their writing goes
    /// (nobody hears it while none is).
    side_logs: watch::Sender<SideLogReport>,
}

/// The recorder task of the session being recorded.
struct Recording {
    id: String,
    finish: oneshot::Sender<()>,
    task: JoinHandle<SaveStatus>,
    requests: Option<Box<dyn super::SideRecorder>>,
}

impl SessionService {
    /// The sessions of `settings`' workspace for `agent`; `binding` ties them to the
    /// background runtime, if one runs. With `enabled` false nothing is written.
    pub fn new(
        agent: Agent,
        binding: Option<SessionBinding>,
        settings: &Settings,
        enabled: bool,
    ) -> Self {
        Self {
            agent,
            binding,
            data_dir: settings.data_dir.clone(),
            workspace: settings.workspace.clone(),
            provider: settings.provider.name.clone(),
            enabled,
            recording: None,
            hold: None,
            record_requests: settings.file.session.records_requests(),
            side_logs: watch::Sender::new(SideLogReport::unheard()),
        }
    }

    /// Where the runtime's calls are recorded beside the session, when they are.
    pub fn request_tap(&self) -> Option<crate::llm::RequestTap> {
        let tap = self.binding.as_ref()?.requests()?;
        (self.enabled && self.record_requests).then(|| tap.clone())
    }

    /// Where a log beside the session being recorded reports how writing it goes: the
    /// report of each session as it starts being recorded (the subagents' calls, which
    /// are written apart from the session, follow it).
    pub fn side_log_reports(&self) -> watch::Receiver<SideLogReport> {
        self.side_logs.subscribe()
    }

    /// False with `--no-session`.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Starts recording `opened` (the session the flags chose): its history goes into
    /// the agent as `resume` says, and the runtime reports to it.
    pub fn record(&mut self, mut opened: OpenedSession, resume: Resume) -> Entered {
        let mut shown = empty();
        if let Some(data) = &mut opened.resumed {
            let (messages, restored) = restore(&self.agent, data, resume);
            if let Err(e) = restored {
                opened.notes.push(not_restored(&e));
            }
            if resume == Resume::OnScreen {
                shown = messages;
            }
        }
        if let Some(binding) = &self.binding {
            if resume == Resume::OnScreen {
                self.hold = Some(binding.hold());
            }
            binding.enter(&opened.writer, opened.resumed.as_ref());
        }
        let mut entered = self.start(opened.writer, opened.resumed, opened.notes, resume);
        entered.shown = shown;
        entered
    }

    /// Switches to `target`: the session recorded until now is closed, the agent
    /// starts over with the target's history (on screen), and nothing is delivered
    /// before [`SessionService::ready`]. `None`: sessions are off, the conversation was
    /// only cleared. On an error nothing changed and nothing is held.
    pub async fn switch(&mut self, target: SessionTarget) -> Result<Option<Entered>, SwitchError> {
        // Held first, so nothing starts a run between the check and the switch.
        let hold = self.binding.as_ref().map(SessionBinding::hold);
        if self.agent.state().is_streaming {
            return Err(SwitchError::Busy);
        }
        if !self.enabled {
            self.agent.reset().await;
            self.hold = hold;
            return Ok(None);
        }
        let (writer, mut data) = self.open_target(target).await?;
        if let Some(binding) = &self.binding {
            // While the old file is still open: it hears its final pending list.
            binding.enter(&writer, data.as_ref());
        }
        self.stop_recording().await;
        self.agent.reset().await;
        let mut notes = Vec::new();
        let mut shown = empty();
        if let Some(data) = &mut data {
            let (messages, restored) = restore(&self.agent, data, Resume::OnScreen);
            if let Err(e) = restored {
                notes.push(not_restored(&e));
            }
            shown = messages;
        }
        // The old guard goes only now that the new one is in place.
        self.hold = hold;
        let mut entered = self.start(writer, data, notes, Resume::OnScreen);
        entered.shown = shown;
        Ok(Some(entered))
    }

    /// The session is on screen: what waits for it is delivered now.
    pub fn ready(&mut self) {
        self.hold = None;
    }

    /// Stops recording: everything recorded is synced and the file closed. Returns how
    /// saving went (`None`: nothing was recorded).
    pub async fn close(&mut self) -> Option<SaveStatus> {
        self.stop_recording().await
    }

    /// The workspace's sessions, most recent first (`None`: sessions are off).
    pub async fn list(&self) -> Option<Vec<SessionSummary>> {
        if !self.enabled {
            return None;
        }
        let (data_dir, workspace) = (self.data_dir.clone(), self.workspace.clone());
        let listed = tokio::task::spawn_blocking(move || list_sessions(&data_dir, &workspace));
        Some(listed.await.unwrap_or_default())
    }

    /// The file of the workspace's session whose id starts with `prefix`.
    pub async fn find(&self, prefix: String) -> Result<PathBuf, SwitchError> {
        let (data_dir, workspace) = (self.data_dir.clone(), self.workspace.clone());
        tokio::task::spawn_blocking(move || find_session(&data_dir, &workspace, &prefix))
            .await?
            .map_err(SwitchError::Session)
    }

    /// The file to switch to, locked, and what it holds.
    async fn open_target(
        &self,
        target: SessionTarget,
    ) -> Result<(SessionWriter, Option<SessionData>), SwitchError> {
        let model = self.agent.state().model.clone();
        let (data_dir, workspace) = (self.data_dir.clone(), self.workspace.clone());
        let provider = self.provider.clone();
        let opened = tokio::task::spawn_blocking(move || {
            open_target(target, &data_dir, &workspace, &provider, &model)
        });
        opened.await?
    }

    /// Records the agent into `writer` (already entered, when there is a runtime).
    fn start(
        &mut self,
        writer: SessionWriter,
        resumed: Option<SessionData>,
        notes: Vec<String>,
        resume: Resume,
    ) -> Entered {
        let queued = resumed
            .as_ref()
            .is_some_and(|d| !d.steering.is_empty() || !d.follow_up.is_empty());
        if resume == Resume::OnScreen && queued {
            forget_queue_when_a_run_starts(&self.agent, &writer);
        }
        let (id, path, saving) = (
            writer.id().to_owned(),
            writer.path().to_path_buf(),
            writer.status(),
        );
        let report = writer.side_log_report();
        self.side_logs.send_replace(report.clone());
        let requests = match (self.request_tap(), &self.binding) {
            (Some(_), Some(binding)) => binding.start_request_log(&path, &self.agent, report),
            _ => None,
        };
        let log = self.binding.as_ref().map_or_else(
            || super::EventRecording::agent_only(true),
            SessionBinding::event_recording,
        );
        let (finish, task) = record_events_with(&self.agent, writer, &log);
        self.recording = Some(Recording {
            id: id.clone(),
            finish,
            task,
            requests,
        });
        Entered {
            id,
            path,
            resumed,
            shown: empty(),
            notes,
            saving,
        }
    }

    async fn stop_recording(&mut self) -> Option<SaveStatus> {
        // Let go of its report: its status ends once its writer and logs are done.
        self.side_logs.send_replace(SideLogReport::unheard());
        let recording = self.recording.take()?;
        tracing::info!("closing session {}", recording.id);
        // `state()` returns only after the last event was handed to the recorder.
        let _ = self.agent.state();
        let _ = recording.finish.send(());
        let saved = recording.task.await.unwrap_or_else(|e| SaveStatus {
            error: Some(format!("the session recorder stopped: {e}")),
            unsaved: 0,
            failures: 1,
            ..SaveStatus::default()
        });
        if let Some(requests) = recording.requests {
            requests.close().await;
        }
        Some(saved)
    }
}

/// Opens `target` (blocking file I/O); a locked file is told apart, with its id.
fn open_target(
    target: SessionTarget,
    data_dir: &Path,
    workspace: &Path,
    provider: &str,
    model: &str,
) -> Result<(SessionWriter, Option<SessionData>), SwitchError> {
    let opened = match target {
        SessionTarget::New => {
            SessionWriter::create(data_dir, workspace, provider, model).map(|w| (w, None))
        }
        SessionTarget::Resume(path) => {
            SessionWriter::resume_file(&path).map(|(writer, data)| (writer, Some(data)))
        }
        SessionTarget::Fork(path) => load(&path).and_then(|data| {
            SessionWriter::fork(&data, data_dir, workspace, provider, model)
                .map(|writer| (writer, Some(data)))
        }),
    };
    opened.map_err(|e| match e {
        SessionError::Locked { path } => {
            let path = PathBuf::from(path);
            let id = load(&path).map(|d| d.id().to_owned()).unwrap_or_default();
            SwitchError::Locked { path, id }
        }
        e => SwitchError::Session(e),
    })
}

/// Puts `data`'s history and its compaction back into the agent (the model sees what
/// it saw before) as `resume` says; returns the messages (shared with the agent, which
/// never writes to them) and whether the agent took them.
fn restore(
    agent: &Agent,
    data: &mut SessionData,
    resume: Resume,
) -> (Arc<[Message]>, Result<(), AgentError>) {
    let compaction = data.compaction().cloned();
    // Moved, not copied: it may be long, and the screen shows these same messages.
    let messages: Arc<[Message]> = std::mem::take(&mut data.messages).into();
    let restored = agent.restore_shared(messages.clone(), compaction);
    if resume == Resume::IntoAgent {
        for text in &data.steering {
            agent.queue(QueueKind::Steering, Message::user(text.clone()));
        }
        for text in &data.follow_up {
            agent.queue(QueueKind::FollowUp, Message::user(text.clone()));
        }
    }
    (messages, restored)
}

/// No messages (an empty shared history costs no allocation).
fn empty() -> Arc<[Message]> {
    Arc::new([])
}

/// What the user is told when a session's history could not be put back.
fn not_restored(e: &AgentError) -> String {
    tracing::error!("cannot restore the session: {e}");
    format!("cannot restore the session: {e}")
}

/// The queued texts were offered back to the user, not to the agent: once a run starts
/// without them having been queued again, they are no longer pending.
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
