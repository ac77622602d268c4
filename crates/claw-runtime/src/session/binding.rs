//! What ties a session to the background runtime: the supervisor's notifications, the
//! subagents' and cron jobs' origin, and whatever else follows the active session (the
//! hooks' session id and the checkpoints, which live above this layer and are handed in
//! by whoever builds the runtime).

use super::SideLogReport;
use super::{SessionData, SessionRouter, SessionWriter};
use crate::agent::Agent;
use crate::config::Settings;
use crate::llm::RequestTap;
use crate::runtime::cron::CronService;
use crate::runtime::{SubagentManager, Supervisor, SwitchHold};
use futures::future::BoxFuture;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Something else that follows the active session, told each time a session becomes
/// it: the session's writer and the data dir. It returns warnings to log.
pub type SessionFollower = Arc<dyn Fn(&SessionWriter, &Path) -> Vec<String> + Send + Sync>;

/// A log a layer above this one keeps beside the session (the request log), started
/// when a session becomes the active one and closed when it stops being it.
pub trait SideRecorder: Send + Sync {
    /// Stops recording and waits until everything reported is on disk.
    fn close(self: Box<Self>) -> BoxFuture<'static, ()>;
}

/// Starts the request log of the session file given: the runtime's tap, the session
/// file, the main agent (whose turns number the calls), and where trouble writing it
/// goes (the session's saving status).
pub type RequestLogStart =
    Arc<dyn Fn(&RequestTap, &Path, &Agent, SideLogReport) -> Box<dyn SideRecorder> + Send + Sync>;

/// What a session needs from the runtime: the parts whose work goes back to it.
#[derive(Clone)]
pub struct SessionBinding {
    supervisor: Supervisor,
    subagents: SubagentManager,
    cron: Option<CronService>,
    follower: SessionFollower,
    data_dir: PathBuf,
    workspace: PathBuf,
    /// Where the runtime's HTTP calls are reported, and how their log is started.
    requests: Option<(RequestTap, RequestLogStart)>,
    events: super::EventRecording,
}

impl SessionBinding {
    /// Ties sessions of `settings`' workspace to these parts of the runtime, and tells
    /// `follower` each time a session becomes the active one.
    pub fn new(
        supervisor: Supervisor,
        subagents: SubagentManager,
        cron: Option<CronService>,
        follower: SessionFollower,
        settings: &Settings,
    ) -> Self {
        Self {
            supervisor,
            subagents,
            cron,
            follower,
            data_dir: settings.data_dir.clone(),
            workspace: settings.workspace.clone(),
            requests: None,
            events: super::EventRecording::agent_only(settings.file.session.records_events()),
        }
    }

    /// The same, logging the runtime's events (`runtime`) into each session's event
    /// log besides the agent's.
    pub fn with_runtime_events(mut self, runtime: crate::runtime::RuntimeEventSender) -> Self {
        self.events.runtime = Some(runtime);
        self.events.cron_jobs = self.cron.as_ref().map(CronService::subscribe);
        self
    }

    /// What a session's recorder logs besides the session: its events, as `[session]
    /// record_events` says, the runtime's among them.
    pub fn event_recording(&self) -> super::EventRecording {
        self.events.clone()
    }

    /// The same binding, with the runtime's calls recorded beside each session by the
    /// log `start` starts.
    pub fn with_requests(mut self, tap: RequestTap, start: RequestLogStart) -> Self {
        self.requests = Some((tap, start));
        self
    }

    /// Where the runtime's HTTP calls are reported, if they are.
    pub fn requests(&self) -> Option<&RequestTap> {
        self.requests.as_ref().map(|(tap, _)| tap)
    }

    /// Starts the request log beside the session file `session`, if calls are recorded.
    pub(super) fn start_request_log(
        &self,
        session: &Path,
        main: &Agent,
        report: SideLogReport,
    ) -> Option<Box<dyn SideRecorder>> {
        let (tap, start) = self.requests.as_ref()?;
        Some(start(tap, session, main, report))
    }

    /// Makes `writer`'s session the active one: notifications addressed to it are
    /// delivered (the undelivered ones in `resumed`, its file as read, first, once the
    /// supervisor is released), those for other sessions are recorded in them, and
    /// subagents and cron jobs started from now on report back to it. A copy (`resumed`
    /// is another session's) starts with nothing pending: those stay with the original.
    pub fn enter(&self, writer: &SessionWriter, resumed: Option<&SessionData>) {
        let id = writer.id().to_owned();
        for warning in (self.follower)(writer, &self.data_dir) {
            tracing::warn!("{warning}");
        }
        self.subagents.set_origin(id.clone());
        if let Some(cron) = &self.cron {
            cron.set_origin(Some(id.clone()));
        }
        let (pending, inbox_offset) = match resumed {
            Some(data) if data.id() == id => {
                (data.pending_notifications.clone(), data.inbox_offset)
            }
            _ => (Vec::new(), 0),
        };
        let router = SessionRouter::new(
            id,
            writer.appender(),
            &self.data_dir,
            &self.workspace,
            inbox_offset,
        );
        self.supervisor.attach(Arc::new(router), pending);
    }

    /// Holds notifications back while the agent's history is being replaced, until the
    /// guard is dropped.
    pub fn hold(&self) -> SwitchHold {
        self.supervisor.hold_for_switch()
    }
}
