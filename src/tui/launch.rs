//! Starting the client: theme, keys and logging first (errors before the screen is
//! taken), then the terminal, the runtime loop, and a clean exit.

use super::adapt::{ProjectMcp, RuntimeControls, cron_rows};
use super::app::{App, AppConfig};
use super::keymap::KeyMap;
use super::msg::{Effect, LoadedSession, Msg};
use super::session_host::{SessionHost, open_for_client};
use super::subagent_log::SubagentLog;
use super::theme::{Theme, no_color_requested, user_theme_dir};
use super::{Inbox, MsgSender, Options, history, runtime, terminal};
use crate::agent::{Agent, NoticeLevel};
use crate::cli::Cli;
use crate::config::Settings;
use crate::headless::{EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE};
use crossterm::event::Event;
use std::path::Path;
use std::sync::Arc;

/// How long quitting waits for an interrupted run to settle, so its last messages are
/// recorded (a tool that ignores cancellation is not waited for).
const QUIT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The workspace with the home directory shortened to `~`.
fn display_path(path: &Path) -> String {
    if let Some(dirs) = directories::BaseDirs::new()
        && let Ok(rest) = path.strip_prefix(dirs.home_dir())
    {
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}

/// Theme (with `NO_COLOR`), keys and the rest of the app's configuration; an error is
/// for the user to fix before the client starts. `keys` replaces the config file's
/// `[keys]` table when given.
pub(crate) fn app_config(
    settings: &Settings,
    keys: Option<&toml::Table>,
    model: String,
) -> Result<AppConfig, String> {
    let theme = Theme::load(
        &settings.theme,
        user_theme_dir(&settings.config_path).as_deref(),
    )
    .map_err(|e| e.to_string())?;
    let theme = if no_color_requested(std::env::var("NO_COLOR").ok().as_deref()) {
        theme.without_color()
    } else {
        theme
    };
    let keymap = KeyMap::from_table(keys.unwrap_or(&settings.file.keys))?;
    let mut models: Vec<String> = vec![model.clone()];
    for entry in settings.file.providers.values() {
        if let Some(m) = &entry.model
            && !models.contains(m)
        {
            models.push(m.clone());
        }
    }
    let mut config = AppConfig::new(settings.provider.name.clone(), model);
    config.theme = theme;
    config.keymap = keymap;
    config.models = models;
    config.context_window = settings.provider.context_window;
    if settings.provider.prices.is_some() {
        config.priced_models = vec![settings.provider.model.clone()];
    }
    config.offline = settings.provider.api == crate::config::Api::Demo;
    config.base_url = settings.provider.base_url.clone();
    config.sandbox = sandbox_words(&settings.file.exec);
    config.themes = theme_names(user_theme_dir(&settings.config_path).as_deref());
    config.compaction = settings.compaction.clone();
    config.workspace = display_path(&settings.workspace);
    config.thinking = settings.thinking;
    config.tool_execution = settings.tool_execution;
    config.mouse_capture = settings.file.ui.mouse.unwrap_or(true);
    Ok(config)
}

/// The custom commands of the settings' workspace beside the skills and instructions
/// files the runtime found; a command file named like a built-in is not used.
fn user_files(
    settings: &Settings,
    context: Arc<crate::runtime::context::ProjectContext>,
) -> super::UserFiles {
    let builtin: Vec<&str> = super::slash::COMMANDS
        .iter()
        .map(|(name, _, _)| name.trim_start_matches('/'))
        .chain(["exit"])
        .collect();
    let config_dir = crate::setup::config_dir(settings);
    let commands = crate::commands::discover_commands(
        &settings.workspace,
        &config_dir,
        crate::runtime::context::home_dir().as_deref(),
        &builtin,
    );
    super::UserFiles {
        context,
        commands: Arc::new(commands),
    }
}

/// How commands are sandboxed, as `/status` says it.
fn sandbox_words(exec: &crate::tools::exec::ExecConfig) -> String {
    use crate::tools::exec::{NetworkMode, SandboxMode};
    let mut words = vec![
        match exec.sandbox {
            SandboxMode::WorkspaceWrite => "workspace-write (Landlock)",
            SandboxMode::Off => "off (no Landlock, no namespaces)",
        }
        .to_owned(),
    ];
    if exec.sandbox == SandboxMode::WorkspaceWrite {
        words.push(match exec.network {
            NetworkMode::Allow => "network allowed".to_owned(),
            NetworkMode::Deny => "network denied".to_owned(),
        });
        if exec.pid_namespace {
            words.push("own pid namespace".to_owned());
        }
    }
    let approval = serde_json::to_value(exec.approval)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    words.push(format!("approval {approval}"));
    words.join(" · ")
}

/// The built-in themes and the user's theme files (`themes/NAME.toml`), for `/theme`.
fn theme_names(user_dir: Option<&Path>) -> Vec<String> {
    let mut names: Vec<String> = super::theme::BUILTIN_THEMES
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .collect();
    let files = user_dir.and_then(|dir| std::fs::read_dir(dir).ok());
    for entry in files.into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "toml")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
            && !names.iter().any(|n| n == stem)
        {
            names.push(stem.to_owned());
        }
    }
    names
}

/// Forwards the runtime's events and cron job lists into the inbox.
/// Subagents' finished calls are kept beside the session that started them.
fn forward_runtime(options: &mut Options, tx: &MsgSender, settings: &Settings) {
    if let Some(mut events) = options.runtime_events.take() {
        let tx = tx.clone();
        let mut log = SubagentLog::new(settings.data_dir.clone(), settings.workspace.clone());
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                log.observe(&event);
                if tx.send(Msg::from(event)).is_err() {
                    return;
                }
            }
        });
    }
    if let Some(mut jobs) = options.cron_jobs.take() {
        let tx = tx.clone();
        tokio::spawn(async move {
            loop {
                let msg = cron_rows(&jobs.borrow_and_update());
                if tx.send(msg).is_err() || jobs.changed().await.is_err() {
                    return;
                }
            }
        });
    }
}

fn tokio_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// Runs the full-screen client over `agent` until the user quits; returns the exit code.
///
/// Needs a terminal on stdin/stdout. Builds its own Tokio runtime. The agent is used
/// directly unless `options.supervisor` owns its runs.
pub fn run(settings: &Settings, agent: Agent, inbox: Inbox, options: Options) -> i32 {
    let config = match app_config(settings, options.keys.as_ref(), agent.state().model.clone()) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("claw-tui: {e}");
            return EXIT_USAGE;
        }
    };
    crate::logging::init_file_logging(&settings.state_dir);
    let runtime = match tokio_runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("claw-tui: {e}");
            return EXIT_USAGE;
        }
    };
    let sessions = SessionHost::new(agent.clone(), None, settings, false);
    let session = (
        sessions,
        LoadedSession {
            quiet: true,
            ..LoadedSession::default()
        },
    );
    let code = runtime.block_on(client(settings, config, agent, inbox, options, session));
    // Tools may still be running (an exec that ignores cancellation); do not wait on them.
    runtime.shutdown_background();
    code
}

/// Runs the client with the whole background runtime (supervisor, subagents, cron):
/// what `claw-tui` without a headless mode does, in the session the flags choose
/// (`-c`, `--session`, `--fork`, `--no-session`).
pub fn launch(settings: &Settings, cli: &Cli) -> i32 {
    crate::logging::init_file_logging(&settings.state_dir);
    // Before the screen is taken: a session in use is offered as a copy on the terminal.
    let opened = match open_for_client(cli, settings) {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!("claw-tui: {e}");
            return EXIT_USAGE;
        }
    };
    let runtime = match tokio_runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("claw-tui: {e}");
            return EXIT_USAGE;
        }
    };
    let code = runtime.block_on(async {
        let inbox = Inbox::new();
        // The MCP servers start after the first frame (`Background::first_frame`).
        let main = match crate::setup::prepare_runtime(
            settings,
            inbox.message_sender(),
            crate::tools::exec::Approver::Ask(inbox.approval_asker(cli.yes)),
        ) {
            Ok(main) => main,
            Err(e) => {
                eprintln!("claw-tui: {e}");
                return EXIT_USAGE;
            }
        };
        let mut config = match app_config(settings, None, main.agent.state().model.clone()) {
            Ok(config) => config,
            Err(e) => {
                eprintln!("claw-tui: {e}");
                return EXIT_USAGE;
            }
        };
        let mut warnings = settings.warnings.clone();
        warnings.extend(main.warnings.iter().cloned());
        config.user_files = user_files(settings, main.context.clone());
        for warning in &config.user_files.commands.warnings {
            tracing::warn!("{warning}");
        }
        warnings.extend(config.user_files.commands.warnings.iter().cloned());
        let sessions = SessionHost::new(
            main.agent.clone(),
            Some(main.session_binding(settings)),
            settings,
            !cli.no_session,
        );
        let first = sessions.begin(opened).await;
        // After the session is in place, so a fire at start-up reaches its history.
        // Keep the handle: dropping it stops the timer.
        let _scheduler = match main.start_cron_scheduler() {
            Ok(handle) => handle,
            Err(e) => {
                warnings.push(format!("cron jobs will not fire in this session: {e}"));
                None
            }
        };
        let options = Options {
            prompt: cli.prompt.clone(),
            images: cli
                .images
                .iter()
                .map(|p| {
                    std::path::absolute(p)
                        .unwrap_or_else(|_| p.clone())
                        .display()
                        .to_string()
                })
                .collect(),
            warnings,
            background: Some(Arc::new(RuntimeControls {
                subagents: Some(main.subagents.clone()),
                cron: main.cron.clone(),
                servers: Some(main.mcp.clone()),
                mcp: (!main.mcp_plan.untrusted.is_empty()).then(|| ProjectMcp {
                    manager: main.mcp.clone(),
                    servers: main.mcp_plan.untrusted.clone(),
                    settings: settings.clone(),
                }),
            })),
            keys: None,
            runtime_events: Some(main.events),
            cron_jobs: main.cron.as_ref().map(|c| c.subscribe()),
            supervisor: Some(main.supervisor.clone()),
            startup: mcp_question(&main.mcp_plan),
            controls: Some(main.controls.clone()),
            policy: Some(main.policy.clone()),
        };
        let session = (sessions.clone(), first);
        let code = client(
            settings,
            config,
            main.agent.clone(),
            inbox,
            options,
            session,
        )
        .await;
        // What is still pending is recorded in the session before it is closed.
        let _ = tokio::time::timeout(QUIT_GRACE, main.agent.wait_for_idle()).await;
        main.supervisor.stop().await;
        main.subagents.shutdown().await;
        sessions.close().await;
        // Stdio servers are stopped (their process groups too), not left behind.
        let _ = tokio::time::timeout(QUIT_GRACE * 3, main.mcp.shutdown()).await;
        let _ = tokio::time::timeout(QUIT_GRACE, main.controls.hooks.drain()).await;
        code
    });
    runtime.shutdown_background();
    code
}

/// The question about the workspace's `.mcp.json` servers, when it was never answered
/// for the servers the file names now.
fn mcp_question(plan: &crate::mcp::launch::McpPlan) -> Vec<Msg> {
    if !plan.ask_trust {
        return Vec::new();
    }
    vec![Msg::AskMcpTrust {
        file: display_path(&plan.project_file),
        servers: crate::mcp::trust::describe(&plan.untrusted),
    }]
}

/// Takes the terminal, runs the loop, gives the terminal back.
async fn client(
    settings: &Settings,
    config: AppConfig,
    agent: Agent,
    inbox: Inbox,
    mut options: Options,
    (sessions, first): (SessionHost, LoadedSession),
) -> i32 {
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
    let Inbox {
        tx,
        mut rx,
        approvals,
    } = inbox;
    forward_runtime(&mut options, &tx, settings);
    sessions.report_saving(&tx).await;
    let controls = options.controls.take();
    let plan = controls
        .as_ref()
        .is_some_and(|c| c.modes.mode() == crate::runtime::AgentMode::Plan);
    let mut rt = runtime::Runtime::new(
        agent.clone(),
        options.supervisor.take(),
        tx,
        approvals,
        options.background.take(),
        settings,
        sessions,
    );
    rt.set_controls(controls);
    let mut config = config;
    config.plan = plan;
    rt.policy = options.policy.take();
    let mut app = App::new(config);
    if let Ok(size) = term.size() {
        rt.dispatch(
            &mut app,
            &mut term,
            Msg::Term(Event::Resize(size.width, size.height)),
        );
    }
    rt.dispatch(&mut app, &mut term, Msg::SessionLoaded(Box::new(first)));
    for msg in std::mem::take(&mut options.startup) {
        rt.dispatch(&mut app, &mut term, msg);
    }
    for warning in options.warnings {
        rt.dispatch(
            &mut app,
            &mut term,
            Msg::Notice(NoticeLevel::Warning, warning),
        );
    }
    // A small file, read before the first key can ask for it.
    match history::load(&settings.data_dir) {
        Ok(entries) => rt.dispatch(&mut app, &mut term, Msg::HistoryLoaded(entries)),
        Err(e) => tracing::warn!("cannot read the history: {e}"),
    }
    if let Some(prompt) = options.prompt.filter(|p| !p.trim().is_empty()) {
        let effect = if options.images.is_empty() {
            Effect::Prompt(prompt)
        } else {
            Effect::LoadImages {
                text: prompt,
                paths: options.images,
            }
        };
        rt.execute(effect, &mut term);
    }
    let result = rt.run(&mut app, &mut term, &mut rx).await;
    // Quitting: nothing new may start, what waits is recorded in the session.
    if let Some(supervisor) = &rt.supervisor {
        supervisor.hold_for_switch();
    }
    rt.abort();
    terminal::leave();
    match result {
        Ok(runtime::Exit::Quit) => EXIT_OK,
        Ok(runtime::Exit::Signal(code)) => code,
        // As SIGHUP would: 128 + 1.
        Ok(runtime::Exit::HangUp) => 129,
        Err(e) => {
            terminal::tell(&format!("claw-tui: the terminal failed: {e}"));
            EXIT_RUN_FAILED
        }
    }
}
