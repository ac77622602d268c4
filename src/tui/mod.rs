//! The full-screen terminal client, Elm-style.
//!
//! `App` is the model; `App::update(Msg) -> Vec<Effect>` changes it without I/O; the pure
//! [`view::view`] draws it; the runtime (`runtime.rs`) runs one `select!` loop over the
//! terminal, the agent's events and the [`Inbox`], executes effects, and draws at most 60
//! frames a second, only when something changed.
//!
//! Entry point: [`run`]. Other parts of the program talk to the client through an
//! [`Inbox`]: the `message` tool's sender, the exec approval asker, and [`Msg`]s such as
//! `Subagents`, `CronJobs` and `Subagent` events from the background runtime.

pub mod app;
pub mod calls;
pub mod composer;
pub mod entry;
mod events;
pub mod highlight;
pub mod history;
pub mod keymap;
pub mod layout;
pub mod markdown;
pub mod msg;
mod runtime;
pub mod slash;
pub mod terminal;
pub mod theme;
pub mod transcript;
mod update;
pub mod view;
pub mod wrap;

pub use app::{App, AppConfig, Overlay};
pub use msg::{CronRow, CronRunStatus, Effect, Msg, SubagentRow, SubagentStatus};
pub use view::view;

use crate::agent::{Agent, NoticeLevel};
use crate::config::Settings;
use crate::headless::{EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE};
use crate::tools::exec::{ApprovalAsker, ApprovalDecision, ApprovalRequest};
use crate::tools::message::{MessageSender, OutboundMessage};
use crossterm::event::Event;
use keymap::KeyMap;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use theme::{Theme, no_color_requested, user_theme_dir};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;

/// Sends messages into the running client from any thread or task.
pub type MsgSender = UnboundedSender<Msg>;

/// Controls the background runtime (subagents, cron) from the dashboard.
pub trait Background: Send + Sync {
    /// Cancels a subagent.
    fn cancel_subagent(&self, id: &str) -> Result<(), String>;
    /// Pauses a cron job.
    fn pause_cron(&self, id: &str) -> Result<(), String>;
    /// Resumes a paused cron job.
    fn resume_cron(&self, id: &str) -> Result<(), String>;
    /// Deletes a cron job.
    fn delete_cron(&self, id: &str) -> Result<(), String>;
}

/// Approval requests waiting for the user, by tool call id.
#[derive(Clone, Default)]
pub struct Approvals {
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>>,
}

impl Approvals {
    fn insert(&self, id: String, tx: oneshot::Sender<ApprovalDecision>) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(id, tx);
        }
    }

    /// Answers the request `id` (ignored when nobody waits for it any more).
    pub fn resolve(&self, id: &str, decision: ApprovalDecision) {
        let sender = self.waiting.lock().ok().and_then(|mut w| w.remove(id));
        if let Some(tx) = sender {
            let _ = tx.send(decision);
        }
    }
}

/// The client's inbox: create it first, hand its senders to the tools and the
/// background runtime, then pass it to [`run`].
pub struct Inbox {
    tx: MsgSender,
    rx: UnboundedReceiver<Msg>,
    approvals: Approvals,
}

impl Default for Inbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Inbox {
    /// An empty inbox.
    pub fn new() -> Self {
        let (tx, rx) = unbounded_channel();
        Self {
            tx,
            rx,
            approvals: Approvals::default(),
        }
    }

    /// A sender of [`Msg`]s (subagent rows, cron rows, notices...).
    pub fn sender(&self) -> MsgSender {
        self.tx.clone()
    }

    /// The `message` tool's sender: each message becomes a card in the chat.
    pub fn message_sender(&self) -> MessageSender {
        let tx = self.tx.clone();
        Arc::new(move |m: OutboundMessage| {
            let _ = tx.send(Msg::Outbound(m));
        })
    }

    /// Asks the user through the approval overlay (denies when the client is gone);
    /// with `approve_all` (`--yes`) allows every request without asking.
    pub fn approval_asker(&self, approve_all: bool) -> ApprovalAsker {
        let tx = self.tx.clone();
        let approvals = self.approvals.clone();
        Arc::new(move |request: ApprovalRequest| {
            if approve_all {
                return Box::pin(async { ApprovalDecision::Allow });
            }
            let (answer_tx, answer_rx) = oneshot::channel();
            approvals.insert(request.id.clone(), answer_tx);
            let delivered = tx.send(Msg::Approval(request)).is_ok();
            Box::pin(async move {
                if !delivered {
                    return ApprovalDecision::Deny;
                }
                answer_rx.await.unwrap_or(ApprovalDecision::Deny)
            })
        })
    }
}

/// What [`run`] takes besides the settings and the agent.
#[derive(Default)]
pub struct Options {
    /// A prompt sent at start.
    pub prompt: Option<String>,
    /// Warnings to show in the chat at start.
    pub warnings: Vec<String>,
    /// The background runtime, for the dashboard's actions.
    pub background: Option<Arc<dyn Background>>,
    /// A `[keys]` table overriding the default bindings.
    pub keys: Option<toml::Table>,
}

/// The workspace with the home directory shortened to `~`.
fn display_path(path: &Path) -> String {
    if let Some(dirs) = directories::BaseDirs::new()
        && let Ok(rest) = path.strip_prefix(dirs.home_dir())
    {
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}

/// Sends tracing output to `claw-tui.log` in the state dir (never to the screen).
fn init_logging(state_dir: &Path) {
    let level = match std::env::var("CLAW_TUI_LOG").ok().as_deref() {
        Some("trace") => tracing::Level::TRACE,
        Some("debug") => tracing::Level::DEBUG,
        Some("warn") => tracing::Level::WARN,
        Some("error") => tracing::Level::ERROR,
        _ => tracing::Level::INFO,
    };
    let file = std::fs::create_dir_all(state_dir).and_then(|()| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(state_dir.join("claw-tui.log"))
    });
    if let Ok(file) = file {
        let _ = tracing_subscriber::fmt()
            .with_writer(Mutex::new(file))
            .with_ansi(false)
            .with_max_level(level)
            .try_init();
    }
}

/// The configuration of the app for `settings`.
fn app_config(settings: &Settings, theme: Theme, keymap: KeyMap, model: String) -> AppConfig {
    let mut models: Vec<String> = vec![model.clone()];
    for entry in settings.file.providers.values() {
        if let Some(m) = &entry.model
            && !models.contains(m)
        {
            models.push(m.clone());
        }
    }
    AppConfig {
        theme,
        keymap,
        provider: settings.provider.name.clone(),
        model,
        models,
        context_window: settings.provider.context_window,
        workspace: display_path(&settings.workspace),
        thinking: settings.thinking,
        tool_execution: settings.tool_execution,
        mouse_capture: true,
        time_zone: None,
    }
}

/// Runs the full-screen client until the user quits; returns the process exit code.
///
/// Needs a terminal on stdin/stdout. Builds its own Tokio runtime.
pub fn run(settings: &Settings, agent: Agent, inbox: Inbox, options: Options) -> i32 {
    let theme = match Theme::load(&settings.theme, user_theme_dir(&settings.config_path).as_deref()) {
        Ok(theme) => theme,
        Err(e) => {
            eprintln!("claw-tui: {e}");
            return EXIT_USAGE;
        }
    };
    let theme = if no_color_requested(std::env::var("NO_COLOR").ok().as_deref()) {
        theme.without_color()
    } else {
        theme
    };
    let keymap = match &options.keys {
        Some(table) => match KeyMap::from_table(table) {
            Ok(map) => map,
            Err(e) => {
                eprintln!("claw-tui: {e}");
                return EXIT_USAGE;
            }
        },
        None => KeyMap::default(),
    };
    init_logging(&settings.state_dir);
    let config = app_config(settings, theme, keymap, agent.state().model.clone());
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("claw-tui: cannot start the async runtime: {e}");
            return EXIT_USAGE;
        }
    };
    let data_dir = settings.data_dir.clone();
    let workspace = settings.workspace.clone();
    let code = runtime.block_on(async move {
        terminal::install_panic_hook();
        if let Err(e) = terminal::enter(config.mouse_capture) {
            terminal::leave();
            eprintln!(
                "claw-tui: cannot set up the terminal ({e}). Run claw-tui in an interactive \
                 terminal, or use -p \"PROMPT\" for a one-shot answer."
            );
            return EXIT_USAGE;
        }
        let mut term = match terminal::terminal() {
            Ok(term) => term,
            Err(e) => {
                terminal::leave();
                eprintln!("claw-tui: cannot open the terminal: {e}");
                return EXIT_USAGE;
            }
        };
        let Inbox { tx, mut rx, approvals } = inbox;
        let mut rt = runtime::Runtime::new(agent.clone(), tx.clone(), approvals, options.background, data_dir.clone(), workspace);
        let mut app = App::new(config);
        if let Ok(size) = term.size() {
            rt.dispatch(&mut app, &mut term, Msg::Term(Event::Resize(size.width, size.height)));
        }
        for warning in options.warnings {
            rt.dispatch(&mut app, &mut term, Msg::Notice(NoticeLevel::Warning, warning));
        }
        // A small file, read before the first key can ask for it.
        match history::load(&data_dir) {
            Ok(entries) => rt.dispatch(&mut app, &mut term, Msg::HistoryLoaded(entries)),
            Err(e) => tracing::warn!("cannot read the history: {e}"),
        }
        if let Some(prompt) = options.prompt.filter(|p| !p.trim().is_empty()) {
            rt.execute(Effect::Prompt(prompt), &mut term);
        }
        let result = rt.run(&mut app, &mut term, &mut rx).await;
        agent.abort();
        terminal::leave();
        match result {
            Ok(runtime::Exit::Quit) => EXIT_OK,
            Ok(runtime::Exit::Signal(code)) => code,
            Err(e) => {
                eprintln!("claw-tui: the terminal failed: {e}");
                EXIT_RUN_FAILED
            }
        }
    });
    // Tools may still be running (an exec that ignores cancellation); do not wait on them.
    runtime.shutdown_background();
    code
}
