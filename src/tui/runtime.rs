//! The runtime side: one `select!` loop over terminal input, agent events and the inbox,
//! a frame scheduler (coalesced draws, at most 60 per second, none while nothing
//! changed, a 10 Hz tick only while work runs), and the executor of `Effect`s.

use super::app::App;
use super::app::view;
use super::export_file::export_html;
use super::highlight::Highlighter;
use super::msg::{Effect, Msg, QueuedText};
use super::session_host::{SessionHost, Target};
use super::terminal::{self, Term};
use super::theme::Theme;
use super::{Approvals, Background, attach, history};
use crate::agent::{
    Agent, AgentError, AgentEvent, EventSink, Message, NoticeLevel, QueueKind, ToolResult,
    ToolUpdates, UserMessage,
};
use crate::runtime::Supervisor;
use crate::runtime::context::mention::attach_skills;
use crate::setup::Controls;
use crate::tools::exec::EXEC_TOOL_NAME;
use crate::tools::policy::{AgentRole, ToolPolicy};
use crossterm::event::{Event, EventStream};
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use crossterm::{execute, queue};
use futures::StreamExt;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Shortest time between two frames after input (60 per second).
const FRAME: Duration = Duration::from_micros(16_667);
/// Shortest time between two frames that only show streamed output (30 per second): a
/// following chat scrolls, so each such frame rewrites the whole pane, and half the
/// frames halve what is written to the terminal without a visible difference.
const STREAM_FRAME: Duration = Duration::from_micros(33_333);
/// Spinner and elapsed-time period while work runs.
const TICK: Duration = Duration::from_millis(100);

/// How a prompt reaches the agent once its hooks let it through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PromptKind {
    /// Starts a run, or waits as a follow-up.
    Submit,
    /// Steers the run.
    Steer,
}

/// The terminal handed to someone else for a while.
enum Handover {
    /// The shell, until it resumes the process (Ctrl+Z).
    Suspend,
    /// `$EDITOR`, on this text, until it exits (Ctrl+G).
    Editor(String),
}

/// How the loop ended.
pub(super) enum Exit {
    /// The user quit.
    Quit,
    /// A signal asked the process to stop; the exit code to use.
    Signal(i32),
    /// The terminal went away (reads or writes fail with EIO or EPIPE).
    HangUp,
}

/// What the effects need: the agent, the inbox, the background runtime.
pub(super) struct Runtime {
    pub agent: Agent,
    pub supervisor: Option<Supervisor>,
    pub tx: UnboundedSender<Msg>,
    pub approvals: Approvals,
    pub background: Option<Arc<dyn Background>>,
    pub data_dir: PathBuf,
    pub workspace: PathBuf,
    pub highlighter: Highlighter,
    pub sessions: SessionHost,
    /// Hooks, checkpoints and plan mode, when the background runtime runs.
    controls: Option<Controls>,
    /// Prompts waiting for the prompt hooks, sent in order (only with prompt hooks).
    prompts: Option<UnboundedSender<(PromptKind, UserMessage)>>,
    /// Where `!command`s get the exec tool from (as the main agent gets it).
    pub policy: Option<ToolPolicy>,
    /// Where `/theme` looks for the user's themes.
    pub theme_dir: Option<PathBuf>,
    /// Cancels the shell commands the user ran (a fresh token after each cancel).
    shells: CancellationToken,
    agent_events: UnboundedReceiver<AgentEvent>,
    pending: VecDeque<Msg>,
    quit: bool,
    /// The terminal is to be handed over once the effects of this round are done.
    handover: Option<Handover>,
}

impl Runtime {
    /// A runtime for `agent`, answering into `tx`.
    pub fn new(
        agent: Agent,
        supervisor: Option<Supervisor>,
        tx: UnboundedSender<Msg>,
        approvals: Approvals,
        background: Option<Arc<dyn Background>>,
        settings: &crate::config::Settings,
        sessions: SessionHost,
    ) -> Self {
        // Subscribed before anything can start a run, so no event is missed.
        let agent_events = agent.subscribe(None);
        Self {
            agent_events,
            agent,
            supervisor,
            tx,
            approvals,
            background,
            data_dir: settings.data_dir.clone(),
            workspace: settings.workspace.clone(),
            highlighter: Highlighter::default(),
            sessions,
            controls: None,
            prompts: None,
            policy: None,
            theme_dir: super::theme::user_theme_dir(&settings.config_path),
            shells: CancellationToken::new(),
            pending: VecDeque::new(),
            quit: false,
            handover: None,
        }
    }

    /// Hands the runtime the user's controls; with prompt hooks configured, prompts
    /// pass through them (in order) before they reach the agent.
    pub fn set_controls(&mut self, controls: Option<Controls>) {
        self.prompts = match (&controls, &self.supervisor) {
            (Some(c), Some(supervisor)) if c.hooks.has_prompt_hooks() => Some(
                super::control::prompt_gate(c.hooks.clone(), supervisor.clone(), self.tx.clone()),
            ),
            _ => None,
        };
        self.controls = controls;
    }

    /// Feeds a message to the app and carries out what it asks, until nothing is left.
    pub fn dispatch(&mut self, app: &mut App, term: &mut Term, msg: Msg) {
        self.pending.push_back(msg);
        while let Some(msg) = self.pending.pop_front() {
            for effect in app.update(msg) {
                self.execute(effect, term);
            }
        }
    }

    /// Runs a dashboard action on a blocking thread; a failure comes back as a notice.
    fn background(
        &mut self,
        what: &'static str,
        act: impl FnOnce(&dyn Background) -> Result<(), String> + Send + 'static,
    ) {
        let Some(background) = self.background.clone() else {
            let why = format!("cannot {what}: no background runtime is running in this session.");
            self.pending.push_back(Msg::Notice(NoticeLevel::Error, why));
            return;
        };
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = act(background.as_ref()) {
                let _ = tx.send(Msg::Notice(
                    NoticeLevel::Error,
                    format!("cannot {what}: {e}"),
                ));
            }
        });
    }

    /// Carries out one effect.
    pub fn execute(&mut self, effect: Effect, term: &mut Term) {
        let agent = self.agent.clone();
        let effect = match (&self.prompts, effect) {
            (Some(gate), Effect::Prompt(text) | Effect::FollowUp(text)) => {
                let _ = gate.send((PromptKind::Submit, UserMessage::new(text)));
                return;
            }
            (Some(gate), Effect::PromptMessage(message)) => {
                let _ = gate.send((PromptKind::Submit, message));
                return;
            }
            (Some(gate), Effect::Steer(text)) => {
                let _ = gate.send((PromptKind::Steer, UserMessage::new(text)));
                return;
            }
            (_, effect) => effect,
        };
        match effect {
            // The supervisor decides between a run and a follow-up under its own lock.
            Effect::Prompt(text) | Effect::FollowUp(text) if self.supervisor.is_some() => {
                if let Some(s) = &self.supervisor {
                    s.submit(text);
                }
            }
            Effect::Prompt(text) => match agent.prompt(text.clone()) {
                Ok(()) => {}
                // The agent started meanwhile: the text waits its turn.
                Err(AgentError::Busy) => agent.follow_up(text),
                Err(e) => self
                    .pending
                    .push_back(Msg::Notice(NoticeLevel::Error, e.to_string())),
            },
            Effect::FollowUp(text) => agent.follow_up(text),
            Effect::AttachSkills { text, skills } => {
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let result = attach_skills(&text, &skills);
                    let _ = tx.send(Msg::SkillsAttached { text, result });
                });
            }
            Effect::ExportHtml {
                session,
                code_theme,
            } => {
                let (data_dir, workspace) = (self.data_dir.clone(), self.workspace.clone());
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let said = match export_html(&data_dir, &workspace, session, &code_theme) {
                        Ok(path) => Msg::Notice(
                            NoticeLevel::Info,
                            format!("Exported the session to {}", path.display()),
                        ),
                        Err(e) => Msg::Notice(NoticeLevel::Error, format!("cannot export: {e}")),
                    };
                    let _ = tx.send(said);
                });
            }
            Effect::LoadImages { text, paths } => {
                let workspace = self.workspace.clone();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let result = attach::load_all(&workspace, &paths);
                    let _ = tx.send(Msg::ImagesLoaded { text, result });
                });
            }
            Effect::PromptMessage(message) => match &self.supervisor {
                Some(s) => {
                    s.submit_message(message);
                }
                None => {
                    let user = Message::User(message);
                    if let Err(AgentError::Busy) = agent.prompt_messages(vec![user.clone()]) {
                        agent.queue(QueueKind::FollowUp, user);
                    }
                }
            },
            Effect::Steer(text) => match &self.supervisor {
                Some(s) => {
                    s.steer(text);
                }
                None => agent.steer(text),
            },
            Effect::Abort => self.abort(),
            Effect::InterruptTools => {
                agent.interrupt_tools();
            }
            Effect::RestoreQueued => {
                // Steering first: it would have gone in first.
                let mut texts = Vec::new();
                for kind in [QueueKind::Steering, QueueKind::FollowUp] {
                    texts.extend(agent.clear_queue(Some(kind)).iter().map(|m| QueuedText {
                        kind,
                        text: m.preview_text(),
                    }));
                }
                self.pending.push_back(Msg::QueueRestored(texts));
            }
            Effect::Quit => self.quit = true,
            Effect::Suspend => self.handover = Some(Handover::Suspend),
            Effect::OpenEditor(text) => self.handover = Some(Handover::Editor(text)),
            Effect::SaveHistory(text) => {
                let dir = self.data_dir.clone();
                tokio::task::spawn_blocking(move || {
                    if let Err(e) = history::append(&dir, &text) {
                        tracing::warn!("cannot save the history: {e}");
                    }
                });
            }
            Effect::ListFiles => {
                let root = self.workspace.clone();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = tx.send(Msg::WorkspaceFiles(history::list_files(&root)));
                });
            }
            Effect::ListModels => {
                super::model_list::fetch(self.agent.provider(), self.tx.clone());
            }
            Effect::Highlight(request) => self.highlighter.request(request, &self.tx),
            Effect::Copy(text) => {
                if let Err(e) = terminal::copy_osc52(term.backend_mut(), &text) {
                    self.pending
                        .push_back(Msg::Notice(NoticeLevel::Error, format!("cannot copy: {e}")));
                }
            }
            Effect::SetModel(name) => agent.set_model(name),
            Effect::SetThinking(level) => agent.set_thinking_level(level),
            Effect::SetQueueMode(kind, mode) => agent.set_queue_mode(kind, mode),
            Effect::SetToolExecution(mode) => agent.set_tool_execution(mode),
            Effect::Shell { id, command } => self.shell(id, command),
            Effect::CancelShells => {
                std::mem::replace(&mut self.shells, CancellationToken::new()).cancel();
            }
            Effect::SetTheme(name) => {
                let dir = self.theme_dir.clone();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let loaded = Theme::load(&name, dir.as_deref()).map_err(|e| e.to_string());
                    let no_color =
                        super::theme::no_color_requested(std::env::var("NO_COLOR").ok().as_deref());
                    let loaded = loaded.map(|t| if no_color { t.without_color() } else { t });
                    let _ = tx.send(Msg::ThemeLoaded(loaded.map(Box::new)));
                });
            }
            Effect::ListSessionChoices => self.sessions.list_choices(&self.tx),
            Effect::OpenSessionById(prefix) => self.sessions.open_by_id(prefix, &self.tx),
            Effect::Compact(focus) => {
                let started = match &self.supervisor {
                    Some(s) => s.compact(focus),
                    None => agent.compact(focus),
                };
                if let Err(e) = started {
                    let why = format!("Cannot compact now: {e}");
                    self.pending
                        .push_back(Msg::Notice(NoticeLevel::Warning, why));
                }
            }
            Effect::NewSession => self.sessions.switch(Target::New, &self.tx),
            Effect::ListSessions => self.sessions.list(&self.tx),
            Effect::LoadRequests { open } => self.sessions.send_requests(open, &self.tx),
            Effect::OpenSession { path, fork } => {
                let target = if fork {
                    Target::Fork(path)
                } else {
                    Target::Open(path)
                };
                self.sessions.switch(target, &self.tx);
            }
            Effect::SessionReady => self.sessions.release(),
            Effect::Approve { id, decision } => self.approvals.resolve(&id, decision),
            Effect::CancelSubagent(id) => {
                self.background("cancel the subagent", move |b| b.cancel_subagent(&id))
            }
            Effect::PauseCron(id) => self.background("pause the job", move |b| b.pause_cron(&id)),
            Effect::ResumeCron(id) => {
                self.background("resume the job", move |b| b.resume_cron(&id))
            }
            Effect::TrustProjectMcp(trusted) => self
                .background("answer about the project's MCP servers", move |b| {
                    b.trust_project_mcp(trusted)
                }),
            Effect::DeleteCron(id) => {
                self.background("delete the job", move |b| b.delete_cron(&id))
            }
            Effect::SetMouseCapture(on) => {
                if let Err(e) = terminal::set_mouse(on) {
                    tracing::warn!("cannot change mouse capture: {e}");
                }
            }
            effect @ (Effect::SetMode(_)
            | Effect::Undo(_)
            | Effect::Rewind { .. }
            | Effect::SessionDiff) => match &self.controls {
                Some(controls) => super::control::execute(controls, effect, &self.tx),
                None => self.pending.push_back(Msg::Notice(
                    NoticeLevel::Warning,
                    "Undo, rewind, diff and plan mode need the background runtime, which \
                     this client runs without."
                        .into(),
                )),
            },
        }
    }

    /// Runs a shell command the user typed with the exec tool as the policy gives it to
    /// the main agent (approval, sandbox, limits); its events go to the app as
    /// `Msg::Shell`.
    fn shell(&mut self, id: String, command: String) {
        let tx = self.tx.clone();
        let send = move |event: AgentEvent| {
            let _ = tx.send(Msg::Shell(event));
        };
        let tool = self
            .policy
            .as_ref()
            .and_then(|p| p.tool_for(&AgentRole::Main, EXEC_TOOL_NAME));
        let args = serde_json::json!({ "command": command });
        send(AgentEvent::ToolExecutionStart {
            tool_call_id: id.clone(),
            tool_name: EXEC_TOOL_NAME.to_owned(),
            args: args.clone(),
        });
        let Some(tool) = tool else {
            let why = if self.policy.is_some() {
                "exec is disabled in this configuration ([tools] disabled), so ! commands cannot run."
            } else {
                "! commands need the tool policy, which this client was started without."
            };
            let result = ToolResult::error(why);
            send(AgentEvent::ToolExecutionEnd {
                tool_call_id: id,
                tool_name: EXEC_TOOL_NAME.to_owned(),
                is_error: true,
                result,
            });
            return;
        };
        let cancel = self.shells.child_token();
        let forward = send.clone();
        tokio::spawn(async move {
            let sink = EventSink::new(forward);
            let updates = ToolUpdates::new(sink, &id, EXEC_TOOL_NAME);
            let result = tool.execute(&id, args, cancel, updates.clone()).await;
            updates.close();
            send(AgentEvent::ToolExecutionEnd {
                tool_call_id: id,
                tool_name: EXEC_TOOL_NAME.to_owned(),
                is_error: result.is_error,
                result,
            });
        });
    }

    /// Aborts the active run (through the supervisor, which then starts nothing on its
    /// own until the next input).
    pub fn abort(&self) {
        match &self.supervisor {
            Some(s) => s.abort(),
            None => self.agent.abort(),
        }
    }

    /// Lets the shell or the editor have the terminal until it gives it back, with input
    /// suspended (see `run`); the editor runs on a blocking thread, so no runtime worker
    /// waits on it.
    async fn hand_over(&mut self, handover: Handover) {
        match handover {
            Handover::Suspend => {
                if let Err(e) = terminal::suspend() {
                    tracing::warn!("suspend failed: {e}");
                }
            }
            Handover::Editor(text) => {
                let result = tokio::task::spawn_blocking(move || terminal::edit_externally(&text))
                    .await
                    .unwrap_or_else(|e| Err(format!("the editor could not be run: {e}")));
                self.pending.push_back(Msg::EditorDone(result));
            }
        }
    }

    /// Draws one frame inside a synchronized update.
    fn draw(&mut self, app: &mut App, term: &mut Term) -> std::io::Result<()> {
        let effects = app.update(Msg::Frame);
        for effect in effects {
            self.execute(effect, term);
        }
        queue!(term.backend_mut(), BeginSynchronizedUpdate)?;
        term.draw(|frame| view(app, frame))?;
        execute!(term.backend_mut(), EndSynchronizedUpdate)?;
        Ok(())
    }

    /// Runs until the user quits, a signal arrives or the terminal goes away.
    pub async fn run(
        &mut self,
        app: &mut App,
        term: &mut Term,
        inbox: &mut UnboundedReceiver<Msg>,
    ) -> std::io::Result<Exit> {
        match self.serve(app, term, inbox).await {
            Err(e) if terminal::is_hangup(&e) => {
                terminal::hung_up();
                tracing::info!("the terminal is gone ({e}); saving and exiting");
                Ok(Exit::HangUp)
            }
            other => other,
        }
    }

    async fn serve(
        &mut self,
        app: &mut App,
        term: &mut Term,
        inbox: &mut UnboundedReceiver<Msg>,
    ) -> std::io::Result<Exit> {
        let mut input = EventStream::new();
        let mut sigterm = signal(SignalKind::terminate())?;
        let mut sighup = signal(SignalKind::hangup())?;
        let mut last_tick = Instant::now();
        self.draw(app, term)?;
        if let Some(background) = &self.background {
            background.first_frame();
        }
        let mut last_draw = Instant::now();
        loop {
            let draw_at = app
                .needs_draw()
                .then(|| (last_draw + frame_gap(app)).max(Instant::now()));
            let tick_at = if app.busy() {
                Some(last_tick + TICK)
            } else {
                app.next_deadline().map(Instant::from_std)
            };
            tokio::select! {
                biased;
                _ = sigterm.recv() => return Ok(Exit::Signal(128 + 15)),
                _ = sighup.recv() => {
                    // The terminal is gone, or going: nothing more is written to it.
                    terminal::hung_up();
                    return Ok(Exit::Signal(128 + 1));
                }
                event = input.next() => match event {
                    Some(Ok(event)) => self.pending.push_back(Msg::Term(event)),
                    Some(Err(e)) => return Err(e),
                    None => return Ok(Exit::Quit),
                },
                event = self.agent_events.recv() => {
                    if let Some(event) = event {
                        self.pending.push_back(Msg::Agent(event));
                    }
                }
                msg = inbox.recv() => {
                    if let Some(msg) = msg {
                        self.pending.push_back(msg);
                    }
                }
                () = sleep_until(draw_at) => {}
                () = sleep_until(tick_at) => {
                    last_tick = Instant::now();
                    self.pending.push_back(Msg::Tick);
                }
            }
            // Everything already queued is applied before the next frame.
            while let Ok(event) = self.agent_events.try_recv() {
                self.pending.push_back(Msg::Agent(event));
            }
            while let Ok(msg) = inbox.try_recv() {
                self.pending.push_back(msg);
            }
            while let Some(msg) = self.pending.pop_front() {
                for effect in app.update(msg) {
                    self.execute(effect, term);
                }
            }
            if self.quit {
                return Ok(Exit::Quit);
            }
            if let Some(handover) = self.handover.take() {
                // Input is suspended while another program has the terminal: the stream
                // is not polled until it is back, and its reader thread reads the terminal
                // only for a poll that found nothing, while the last poll delivered the
                // key that asked for this. So every key typed meanwhile goes to that
                // program, and the same stream resumes afterwards. (Dropping it and
                // starting a fresh one would leave the old one's wake-up behind, which
                // can make the new reader miss the next keys.)
                self.hand_over(handover).await;
                // `Terminal::clear` would ask the terminal for the cursor position and wait
                // for the answer; clearing directly and drawing an empty frame resets
                // ratatui's idea of the screen just the same.
                execute!(term.backend_mut(), Clear(ClearType::All))?;
                term.draw(|_| {})?;
                let size = term.size()?;
                self.dispatch(app, term, Msg::Term(Event::Resize(size.width, size.height)));
            }
            if app.needs_draw() && Instant::now() >= last_draw + frame_gap(app) {
                self.draw(app, term)?;
                last_draw = Instant::now();
            }
        }
    }
}

/// The user's own input, and the end of a run (its last tokens), are drawn at the
/// full frame rate; output streaming in is drawn at the lower one.
fn frame_gap(app: &App) -> Duration {
    if app.input_changed() || !app.status().running() {
        FRAME
    } else {
        STREAM_FRAME
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
