//! The runtime side: one `select!` loop over terminal input, agent events and the inbox,
//! a frame scheduler (coalesced draws, at most 60 per second, none while nothing
//! changed, a 10 Hz tick only while work runs); the executor of `Effect`s is in
//! `runtime/effects.rs`.

mod effects;

use super::Approvals;
use super::background::Background;
use super::input::TermInput;
use super::session_host::SessionHost;
use super::terminal::{self, Term};
use crate::agent::{Agent, AgentEvent};
use crate::runtime::Supervisor;
use crate::setup::Controls;
use crate::signals::{StopSignals, Suspends};
use crate::tools::policy::ToolPolicy;
use crate::tui::highlight::Highlighter;
use crate::tui::msg::Msg;
use crate::tui::{App, view};
use crossterm::event::Event;
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use crossterm::{execute, queue};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

/// Shortest time between two frames after input (60 per second).
const FRAME: Duration = Duration::from_micros(16_667);
/// Shortest time between two frames that only show streamed output (30 per second): a
/// following chat scrolls, so each such frame rewrites the whole pane, and half the
/// frames halve what is written to the terminal without a visible difference.
const STREAM_FRAME: Duration = Duration::from_micros(33_333);
/// Spinner and elapsed-time period while work runs.
const TICK: Duration = Duration::from_millis(100);

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

/// What the client's runtime works with: the agent and its supervisor, the inbox, the
/// background runtime, the sessions.
pub(super) struct Parts {
    pub agent: Agent,
    pub supervisor: Supervisor,
    pub tx: UnboundedSender<Msg>,
    pub approvals: Approvals,
    pub background: Arc<dyn Background>,
    pub sessions: SessionHost,
    pub controls: Controls,
    pub policy: ToolPolicy,
    /// SIGTSTP from outside, taken over before the terminal was.
    pub suspends: Suspends,
    /// Told the session's id each time the session on screen changes (the clients
    /// attached to it follow).
    pub on_session: Option<SessionHook>,
}

/// What the session's attached clients are told when the session on screen changes.
pub(super) type SessionHook = Arc<dyn Fn(Option<String>) + Send + Sync>;

/// What the effects need: the agent, the inbox, the background runtime.
pub(super) struct Runtime {
    agent: Agent,
    /// The owner of the agent's runs: prompts, steering and aborts go through it.
    supervisor: Supervisor,
    tx: UnboundedSender<Msg>,
    approvals: Approvals,
    background: Arc<dyn Background>,
    data_dir: PathBuf,
    workspace: PathBuf,
    highlighter: Highlighter,
    sessions: SessionHost,
    /// Hooks, checkpoints and plan mode.
    controls: Controls,
    /// Where `!command`s get the exec tool from (as the main agent gets it).
    policy: ToolPolicy,
    /// Where `/theme` looks for the user's themes.
    theme_dir: Option<PathBuf>,
    /// Cancels the shell commands the user ran (a fresh token after each cancel).
    shells: super::shell::Shells,
    /// Copies through the terminal (and whether tmux's needs were said).
    clipboard: super::clipboard::Clipboard,
    agent_events: UnboundedReceiver<AgentEvent>,
    pending: VecDeque<Msg>,
    quit: bool,
    /// The terminal is to be handed over once the effects of this round are done.
    handover: Option<Handover>,
    /// SIGTSTP from outside: handled like Ctrl+Z.
    suspends: Suspends,
    on_session: Option<SessionHook>,
}

impl Runtime {
    /// A runtime over `parts`.
    pub fn new(parts: Parts, settings: &crate::config::Settings) -> Self {
        // Subscribed before anything can start a run, so no event is missed.
        let agent_events = parts.agent.subscribe(None);
        Self {
            agent_events,
            agent: parts.agent,
            supervisor: parts.supervisor,
            tx: parts.tx,
            approvals: parts.approvals,
            background: parts.background,
            data_dir: settings.data_dir.clone(),
            workspace: settings.workspace.clone(),
            highlighter: Highlighter::default(),
            sessions: parts.sessions,
            controls: parts.controls,
            policy: parts.policy,
            theme_dir: crate::theme::user_theme_dir(&settings.config_path),
            shells: super::shell::Shells::default(),
            clipboard: super::clipboard::Clipboard::default(),
            pending: VecDeque::new(),
            quit: false,
            handover: None,
            suspends: parts.suspends,
            on_session: parts.on_session,
        }
    }

    /// A session came on screen: the attached clients follow it.
    fn observe(&self, msg: &Msg) {
        if let (Msg::Sessions(crate::tui::sessions::Msg::Loaded(loaded)), Some(hook)) =
            (msg, &self.on_session)
        {
            hook(loaded.id.clone());
        }
    }

    /// The owner of the agent's runs.
    pub fn supervisor(&self) -> &Supervisor {
        &self.supervisor
    }

    /// Feeds a message to the app and carries out what it asks, until nothing is left.
    pub fn dispatch(&mut self, app: &mut App, term: &mut Term, msg: Msg) {
        self.pending.push_back(msg);
        while let Some(msg) = self.pending.pop_front() {
            self.observe(&msg);
            for effect in app.update(msg) {
                self.execute(effect, term);
            }
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
                let mut editing =
                    tokio::task::spawn_blocking(move || terminal::edit_externally(&text));
                let result = loop {
                    tokio::select! {
                        done = &mut editing => break done,
                        // The editor has the terminal: there is nothing to give back, so
                        // the process only stops (the editor's own group gets its stop
                        // from the shell's job control, not from this).
                        () = self.suspends.recv() => {
                            if let Err(e) = crate::signals::stop_process() {
                                tracing::warn!("cannot stop on SIGTSTP: {e}");
                            }
                        }
                    }
                };
                let result = result
                    .unwrap_or_else(|e| Err(crate::tui::msg::EditorError::NotRun(Arc::new(e))));
                self.pending.push_back(Msg::EditorDone(result));
            }
        }
    }

    /// Hands the terminal over (see [`Self::hand_over`]) and, once it is back, redraws
    /// the whole screen.
    async fn take_turn(
        &mut self,
        handover: Handover,
        app: &mut App,
        term: &mut Term,
    ) -> std::io::Result<()> {
        // Input is suspended while another program has the terminal: the terminal
        // is read only while `input.next()` is awaited, and it is not until the
        // terminal is back, so every key typed meanwhile goes to that program. After
        // a SIGTSTP from outside, a read from the background would only stop the
        // process again (SIGTTIN), so the keys stay the shell's until the client is
        // in the foreground again.
        self.hand_over(handover).await;
        // `Terminal::clear` would ask the terminal for the cursor position and wait
        // for the answer; clearing directly and drawing an empty frame resets
        // ratatui's idea of the screen just the same.
        execute!(term.backend_mut(), Clear(ClearType::All))?;
        term.draw(|_| {})?;
        let size = term.size()?;
        self.dispatch(app, term, Msg::Term(Event::Resize(size.width, size.height)));
        Ok(())
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

    /// Runs until the user quits, one of the `stop` signals arrives or the terminal
    /// goes away.
    pub async fn run(
        &mut self,
        app: &mut App,
        term: &mut Term,
        inbox: &mut UnboundedReceiver<Msg>,
        stop: &mut StopSignals,
    ) -> std::io::Result<Exit> {
        match self.serve(app, term, inbox, stop).await {
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
        stop: &mut StopSignals,
    ) -> std::io::Result<Exit> {
        let mut input = TermInput::open()?;
        let mut last_tick = Instant::now();
        self.draw(app, term)?;
        self.background.first_frame();
        let mut last_draw = Instant::now();
        let mut suspend = false;
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
                // SIGHUP too: whether the terminal is still there is found out when it is
                // given back (a write to a hung-up one fails, and nothing more is tried).
                code = stop.recv() => return Ok(Exit::Signal(code)),
                // SIGTSTP from outside: the terminal is given back as for Ctrl+Z, once
                // what is queued is applied.
                () = self.suspends.recv() => suspend = true,
                event = input.next() => match event {
                    Some(Ok(event)) => self.pending.push_back(Msg::Term(event)),
                    Some(Err(e)) => return Err(e),
                    // The terminal's input ended: the window closed before (or instead
                    // of) an EIO or SIGHUP telling so. Quitting is a key, never this.
                    None => {
                        terminal::hung_up();
                        return Ok(Exit::HangUp);
                    }
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
                self.observe(&msg);
                for effect in app.update(msg) {
                    self.execute(effect, term);
                }
            }
            if self.quit {
                return Ok(Exit::Quit);
            }
            if std::mem::take(&mut suspend) {
                self.take_turn(Handover::Suspend, app, term).await?;
            }
            if let Some(handover) = self.handover.take() {
                self.take_turn(handover, app, term).await?;
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
