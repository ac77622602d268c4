//! One ACP session: a claw-tui session of the client's `cwd`, on a runtime built by
//! `setup` as for every front-end, recorded by the session service; new, or loaded by
//! id with its history replayed to the client before anything else is sent.

use super::agent::{Base, settings_error};
use super::commands::{self, Builtin, Invocation};
use super::pump::{self, Job, PumpParts};
use crate::agent::{Agent, UserMessage};
use crate::commands::CommandSet;
use crate::mcp::McpManager;
use crate::runtime::cron::SchedulerHandle;
use crate::runtime::{AgentMode, SubagentManager, Supervisor};
use crate::session::{self, Resume, SessionChoice, SessionError, SessionService};
use crate::setup::{self, Controls};
use crate::tools::exec::{ApprovalDecision, Approver};
use crate::tools::message::{MessageSender, OutboundMessage};
use crate::visible::for_stderr;
use agent_client_protocol::v1::schema::{
    McpServer, PromptResponse, SessionConfigOption, SessionMode, SessionModeState,
    SessionNotification,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Which session `session/new` or `session/load` opens.
pub enum Opening {
    /// A fresh one.
    New,
    /// The one with this id, continued.
    Load(String),
}

/// What closing a session stops and waits for.
struct Closing {
    agent: Agent,
    subagents: SubagentManager,
    mcp: McpManager,
    sessions: SessionService,
    scheduler: Option<SchedulerHandle>,
    reporter: Option<JoinHandle<()>>,
    pump: JoinHandle<()>,
    stop: CancellationToken,
}

/// An open session.
pub struct AcpSession {
    /// Its id: the claw-tui session's.
    pub id: String,
    /// The client's `cwd`: where its tools work.
    pub workspace: PathBuf,
    supervisor: Supervisor,
    controls: Controls,
    commands: CommandSet,
    /// The models `session/set_config_option` may choose.
    models: Vec<String>,
    jobs: mpsc::UnboundedSender<Job>,
    closing: tokio::sync::Mutex<Option<Closing>>,
}

impl AcpSession {
    /// Opens a session in `cwd` with the client's `servers` added to the user's. The
    /// client hears the loaded history (as updates) before this returns.
    pub async fn open(
        base: &Base,
        opening: Opening,
        cwd: &Path,
        servers: Vec<McpServer>,
        cx: ConnectionTo<Client>,
    ) -> Result<Arc<Self>, Error> {
        let mut settings = base.settings(Some(cwd)).map_err(|e| settings_error(&e))?;
        let mut warnings = std::mem::take(&mut settings.warnings);
        warnings.extend(super::mcp::add_client_servers(&mut settings, servers));
        if base.no_session() && matches!(opening, Opening::Load(_)) {
            return Err(Error::new(
                ErrorCode::INVALID_PARAMS,
                "claw-tui acp runs with --no-session: there is no session to load",
            ));
        }
        let choice = SessionChoice {
            session: match &opening {
                Opening::Load(id) => Some(id.clone()),
                Opening::New => None,
            },
            no_session: base.no_session(),
            ..SessionChoice::default()
        };
        // Opened first: a session that cannot be had starts no runtime.
        let opened = session::open_session(&choice, &settings).map_err(session_error)?;
        let (jobs, jobs_rx) = mpsc::unbounded_channel();
        let approver = if settings.yes {
            Approver::AllowAll
        } else {
            asking(jobs.clone())
        };
        // What the `message` tool sends is a runtime event (which the pump reports on
        // stderr); there is nowhere else to deliver it.
        let outbound: MessageSender = Arc::new(|_: OutboundMessage| {});
        let main = setup::start_runtime(&settings, outbound, approver)
            .map_err(|e| Error::new(ErrorCode::INTERNAL_ERROR, e.to_string()))?;
        warnings.extend(main.warnings.iter().cloned());
        warnings.extend(main.mcp_plan.skipped_warnings());
        warnings.extend(main.trust.untrusted_warnings());
        for warning in &warnings {
            say!("claw-tui: warning: {}", for_stderr(warning));
        }
        crate::headless::wait_for_mcp_before_first_request(&main.agent, &main.mcp);
        let mode = opened
            .as_ref()
            .and_then(|o| o.resumed.as_ref())
            .and_then(|data| data.settings.get(crate::runtime::mode::MODE_SETTING))
            .and_then(|mode| mode.as_str()?.parse::<AgentMode>().ok());
        let agent = main.agent.clone();
        let mut sessions = SessionService::new(
            agent.clone(),
            Some(main.session_binding(&settings)),
            &settings,
            !base.no_session(),
        );
        let entered = opened.map(|opened| sessions.record(opened, Resume::IntoAgent));
        let id = match &entered {
            Some(entered) => entered.id.clone(),
            None => format!("unsaved-{:016x}", fastrand::u64(..)),
        };
        // The editor's file system and terminal, when the user asked for them and the
        // editor offers them.
        let client = base.client();
        let editor_warnings = [
            super::editor::use_files(&settings, &client, &main, &cx, &id),
            super::terminal::use_terminal(&settings, &client, &main, &cx, &id),
        ];
        for warning in editor_warnings.iter().flatten() {
            say!("claw-tui: warning: {}", for_stderr(warning));
        }
        let reporter = entered.map(|entered| {
            for note in &entered.notes {
                say!("claw-tui: {}", for_stderr(note));
            }
            crate::headless::saving::report(entered.saving, false)
        });
        // The mode the session was left in (the terminal client's Shift+Tab included).
        if let Some(mode) = mode.filter(|_| !settings.plan) {
            main.controls.modes.set(mode);
        }
        let workspace = settings.workspace.clone();
        if matches!(opening, Opening::Load(_)) {
            let history = agent.state().messages.to_vec();
            for update in super::history::replay(&history, &workspace).await {
                // A client gone mid-replay has nobody left to show it to.
                if cx
                    .send_notification(SessionNotification::new(id.clone(), update))
                    .is_err()
                {
                    break;
                }
            }
        }
        // Subscribed before the supervisor lets anything run: no event is missed.
        let events = agent.subscribe(None);
        let scheduler = main.start_cron_scheduler().unwrap_or_else(|e| {
            say!("claw-tui: warning: cron jobs will not fire: {e}");
            None
        });
        let stop = CancellationToken::new();
        let pump = tokio::spawn(pump::run(
            PumpParts {
                cx,
                session: id.clone().into(),
                supervisor: main.supervisor.clone(),
                workspace: main.controls.checkpoints.workspace().clone(),
                modes: main.controls.modes.clone(),
                events,
                runtime: main.events,
                stop: stop.clone(),
            },
            jobs_rx,
        ));
        // A loaded session's undelivered notifications go to the agent now.
        main.supervisor.release();
        let commands = commands::custom(&settings);
        let models = super::models::offered(&settings, &agent.state().model);
        Ok(Arc::new(Self {
            id,
            workspace,
            supervisor: main.supervisor,
            controls: main.controls,
            commands,
            models,
            jobs,
            closing: tokio::sync::Mutex::new(Some(Closing {
                agent,
                subagents: main.subagents,
                mcp: main.mcp,
                sessions,
                scheduler,
                reporter,
                pump,
                stop,
            })),
        }))
    }

    /// The modes, with the one the session is in.
    pub fn modes(&self) -> SessionModeState {
        let available = super::MODES
            .iter()
            .map(|(id, name, description)| {
                SessionMode::new(*id, *name).description((*description).to_owned())
            })
            .collect();
        SessionModeState::new(self.controls.modes.mode().name(), available)
    }

    /// The session's config options: the model.
    pub fn config_options(&self) -> Vec<SessionConfigOption> {
        super::models::options(&self.supervisor.agent().state().model, &self.models)
    }

    /// `session/set_config_option`: the model for the next run (as `/model` sets it),
    /// one of those offered.
    pub fn set_option(&self, id: &str, value: &str) -> Result<Vec<SessionConfigOption>, Error> {
        if id != super::models::MODEL_OPTION {
            return Err(Error::new(
                ErrorCode::INVALID_PARAMS,
                format!("unknown config option \"{id}\"; claw-tui offers \"model\""),
            ));
        }
        if !self.models.iter().any(|m| m == value) {
            return Err(Error::new(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "model \"{value}\" is not one offered: {}",
                    self.models.join(", ")
                ),
            ));
        }
        self.supervisor.agent().set_model(value);
        Ok(self.config_options())
    }

    /// Tells the client the slash commands it can offer.
    pub fn announce_commands(&self) {
        let update = commands::available(&self.commands);
        let _ = self.jobs.send(Job::Send(vec![update]));
    }

    /// Runs `message` (a command when it names one), answering `responder` when its
    /// turn ends.
    pub fn prompt(&self, message: UserMessage, responder: Responder<PromptResponse>) {
        let job = match commands::parse(&message.content, &self.commands) {
            Invocation::Prompt => Job::Prompt { message, responder },
            Invocation::Custom(prompt) => Job::Prompt {
                message: UserMessage {
                    content: prompt,
                    ..message
                },
                responder,
            },
            Invocation::Builtin(Builtin::Compact(focus)) => Job::Compact { focus, responder },
            Invocation::Builtin(command) => {
                let controls = self.controls.clone();
                let jobs = self.jobs.clone();
                // Checkpoint work reads and writes files: not in the dispatch loop.
                tokio::spawn(async move {
                    let job = commands::run(command, &controls, responder).await;
                    if let Err(mpsc::error::SendError(job)) = jobs.send(job) {
                        refuse_closed(job);
                    }
                });
                return;
            }
        };
        if let Err(mpsc::error::SendError(job)) = self.jobs.send(job) {
            refuse_closed(job);
        }
    }

    /// `session/cancel`.
    pub fn cancel(&self) {
        let _ = self.jobs.send(Job::Cancel);
    }

    /// `session/set_mode`: the same switch as the terminal client's Shift+Tab (the
    /// client hears `current_mode_update` from the agent's setting event).
    pub fn set_mode(&self, mode: AgentMode) {
        self.controls.modes.set(mode);
    }

    /// Stops the session: the run is aborted (what it streamed is recorded as aborted),
    /// its tools and subagents stopped, hooks and servers finished, and the file
    /// written. True when something could not be saved. Closing twice does nothing.
    pub async fn close(&self) -> bool {
        let Some(closing) = self.closing.lock().await.take() else {
            return false;
        };
        self.supervisor.abort();
        closing.agent.wait_for_idle().await;
        if let Some(scheduler) = closing.scheduler {
            scheduler.stop().await;
        }
        closing.subagents.shutdown().await;
        self.supervisor.stop().await;
        // The run's last events reach the client before the pump stops.
        let _ = closing.agent.state();
        closing.stop.cancel();
        let _ = closing.pump.await;
        self.controls.hooks.drain().await;
        closing.mcp.shutdown().await;
        let mut sessions = closing.sessions;
        let status = sessions.close().await;
        if let Some(reporter) = closing.reporter {
            let _ = reporter.await;
        }
        status.is_some_and(|status| crate::headless::saving::report_final(&status))
    }
}

/// The approver of a session: each request goes to its pump, which asks the client.
/// A session that has closed answers no.
fn asking(jobs: mpsc::UnboundedSender<Job>) -> Approver {
    Approver::Ask(Arc::new(move |request| {
        let jobs = jobs.clone();
        Box::pin(async move {
            let (answer, decision) = oneshot::channel();
            if jobs.send(Job::Ask { request, answer }).is_err() {
                return ApprovalDecision::Deny;
            }
            decision.await.unwrap_or(ApprovalDecision::Deny)
        })
    }))
}

/// A prompt for a session that is closing: answered at once.
fn refuse_closed(job: Job) {
    let responder = match job {
        Job::Prompt { responder, .. }
        | Job::Reply { responder, .. }
        | Job::Compact { responder, .. } => responder,
        Job::Cancel | Job::Ask { .. } | Job::Send(_) => return,
    };
    let _ = responder.respond_with_error(Error::new(
        ErrorCode::INVALID_PARAMS,
        "the session is closing",
    ));
}

/// The error for a session that cannot be opened.
fn session_error(error: SessionError) -> Error {
    let code = match &error {
        SessionError::NotFound(_) => ErrorCode::RESOURCE_NOT_FOUND,
        SessionError::Locked { .. } => ErrorCode::INVALID_PARAMS,
        _ => ErrorCode::INTERNAL_ERROR,
    };
    Error::new(code, error.to_string())
}
