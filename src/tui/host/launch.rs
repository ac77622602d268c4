//! Starting the client in the session the launcher opened: the background runtime,
//! theme and keys first (errors before the screen is taken), then the terminal, the
//! runtime loop, and a clean exit.

use super::adapt::{ProjectMcp, RuntimeControls, cron_rows, trust_question};
use super::background::Background;
use super::colors::Depth;
use super::session_host::{SessionHost, first_session, forward_saving};
use super::subagent_log::SubagentLog;
use super::{Inbox, MsgSender, history, runtime, terminal};
use crate::agent::{Agent, NoticeLevel};
use crate::cli::Cli;
use crate::config::Settings;
use crate::exit::{EXIT_OK, EXIT_RUN_FAILED, ExitFailure};
use crate::runtime::cron::CronJobInfo;
use crate::runtime::{RuntimeEvent, Supervisor, SwitchHold};
use crate::session::{OpenedSession, SaveWatch, SessionService, SideLogReport};
use crate::setup::Controls;
use crate::tools::policy::ToolPolicy;
use crate::tui::msg::{Effect, Msg};
use crate::tui::sessions::{self, LoadedSession};
use crate::tui::{App, AppConfig};
use color_eyre::eyre::{bail, eyre};
use crossterm::event::Event;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::watch;

/// How long quitting waits for an interrupted run to settle, so its last messages are
/// recorded (a tool that ignores cancellation is not waited for).
const QUIT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Forwards the runtime's events and cron job lists into the inbox.
/// Subagents' finished calls are kept beside the session that started them.
fn forward_runtime(
    mut events: UnboundedReceiver<RuntimeEvent>,
    cron_jobs: Option<watch::Receiver<Vec<CronJobInfo>>>,
    tx: &MsgSender,
    (settings, side_logs): (&Settings, watch::Receiver<SideLogReport>),
) {
    let events_tx = tx.clone();
    let mut log = SubagentLog::new(
        settings.data_dir.clone(),
        settings.workspace.clone(),
        side_logs,
    );
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            log.observe(&event);
            if events_tx.send(Msg::from(event)).is_err() {
                return;
            }
        }
    });
    if let Some(mut jobs) = cron_jobs {
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

fn tokio_runtime() -> color_eyre::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| eyre!("cannot start the async runtime: {e}"))
}

/// Runs the client with the whole background runtime (supervisor, subagents, cron) in
/// `opened`, the session the launcher chose (`None`: sessions are off), until the user
/// quits; returns the exit code. Needs a terminal on stdin/stdout; builds its own Tokio
/// runtime.
pub fn launch(
    settings: &Settings,
    cli: &Cli,
    opened: Option<OpenedSession>,
) -> color_eyre::Result<i32> {
    let runtime = tokio_runtime()?;
    let code = runtime.block_on(async {
        let inbox = Inbox::new();
        // Shared with the clients that attach to this session: the first answer wins.
        let shared = super::hosting::SharedApprovals::new(inbox.sender());
        // The MCP servers start after the first frame (`Background::first_frame`).
        let main = crate::setup::prepare_runtime(
            settings,
            // The cards come as runtime events (so the event log has them too).
            Arc::new(|_| {}),
            shared.approver(cli.yes),
        )?;
        let mut config = super::app_config::app_config(settings, main.agent.state().model.clone())?;
        let mut warnings = settings.warnings.clone();
        warnings.extend(main.warnings.iter().cloned());
        config.user_files = super::app_config::user_files(settings, main.context.clone());
        for warning in &config.user_files.commands.warnings {
            tracing::warn!("{warning}");
        }
        warnings.extend(config.user_files.commands.warnings.iter().cloned());
        let mut service = SessionService::new(
            main.agent.clone(),
            Some(main.session_binding(settings)),
            settings,
            !cli.no_session,
        );
        let first = first_session(&mut service, &main.agent, opened);
        let hosting = match super::hosting::Hosting::start(
            &main,
            settings,
            first.0.id.clone(),
            &shared,
            inbox.sender(),
        )
        .await
        {
            Ok(hosting) => {
                inbox
                    .approvals()
                    .answer_through(hosting.answer_for_terminal());
                Some(hosting)
            }
            Err(e) => {
                inbox.approvals().answer_through(shared.answer_locally());
                warnings.push(format!(
                    "this session cannot be attached from another terminal: {e}"
                ));
                None
            }
        };
        let side_logs = service.side_log_reports();
        let sessions = SessionHost::start(service, main.agent.clone(), inbox.sender());
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
            background: Arc::new(RuntimeControls {
                subagents: Some(main.subagents.clone()),
                cron: main.cron.clone(),
                servers: Some(main.mcp.clone()),
                mcp: (!main.mcp_plan.untrusted.is_empty()).then(|| ProjectMcp {
                    manager: main.mcp.clone(),
                    settings: settings.clone(),
                }),
                trust: Some(main.trust.clone()),
            }),
            runtime_events: main.events,
            cron_jobs: main.cron.as_ref().map(|c| c.subscribe()),
            supervisor: main.supervisor.clone(),
            startup: trust_question(&main.mcp_plan, &main.trust),
            controls: main.controls.clone(),
            policy: main.policy.clone(),
            side_logs,
            hosting,
        };
        let ended = client(
            settings,
            config,
            main.agent.clone(),
            inbox,
            options,
            (sessions.clone(), first),
        )
        .await;
        // `ended` keeps the hold taken when the loop ended (nothing new starts while
        // quitting) until it is dropped below, after the supervisor stopped.
        // What is still pending is recorded in the session before it is closed.
        let _ = tokio::time::timeout(QUIT_GRACE, main.agent.wait_for_idle()).await;
        main.supervisor.stop().await;
        main.subagents.shutdown().await;
        sessions.close().await;
        // Stdio servers are stopped (their process groups too), not left behind.
        let _ = tokio::time::timeout(QUIT_GRACE * 3, main.mcp.shutdown()).await;
        let _ = tokio::time::timeout(QUIT_GRACE, main.controls.hooks.drain()).await;
        ended.map(|(code, _)| code)
    });
    // Tools may still be running (an exec that ignores cancellation); do not wait on them.
    runtime.shutdown_background();
    code
}

/// What the client runs with besides the settings and the agent.
struct Options {
    /// A prompt sent at start.
    prompt: Option<String>,
    /// Images attached to that prompt (`--image`, absolute paths).
    images: Vec<String>,
    /// Warnings to show in the chat at start.
    warnings: Vec<String>,
    /// The background runtime, for the dashboard's actions.
    background: Arc<dyn Background>,
    /// The background runtime's events (subagents, pending notifications).
    runtime_events: UnboundedReceiver<RuntimeEvent>,
    /// The cron jobs, as the cron service publishes them.
    cron_jobs: Option<watch::Receiver<Vec<CronJobInfo>>>,
    /// The owner of the agent's runs: prompts, steering and aborts go through it, so a
    /// keypress never races a notification.
    supervisor: Supervisor,
    /// Messages for the app once the first session is on screen (the question about
    /// the workspace's MCP servers).
    startup: Vec<Msg>,
    /// Hooks, checkpoints and plan mode (`/undo`, `/rewind`, `/diff`, `/plan`).
    controls: Controls,
    /// The tool policy: `!command`s run the exec tool it gives the main agent.
    policy: ToolPolicy,
    /// Where the subagents' calls report how writing them goes (the session on screen).
    side_logs: watch::Receiver<SideLogReport>,
    /// The session served to other terminals (`None`: it could not be).
    hosting: Option<super::hosting::Hosting>,
}

/// Takes the terminal, runs the loop, gives the terminal back. Returns the exit code
/// with a hold on the supervisor, taken when the loop ended: nothing new starts while
/// the caller shuts the runtime down.
async fn client(
    settings: &Settings,
    config: AppConfig,
    agent: Agent,
    inbox: Inbox,
    options: Options,
    (sessions, (first, saving)): (SessionHost, (LoadedSession, Option<SaveWatch>)),
) -> color_eyre::Result<(i32, SwitchHold)> {
    // Taken over before the terminal is: from here on no signal ends the process
    // with the screen still in the client's modes.
    let mut stop = crate::signals::StopSignals::install()
        .map_err(|e| eyre!("cannot take over the stop signals: {e}"))?;
    // SIGTSTP too: from here on a stop from outside gives the terminal back first.
    let suspends =
        crate::signals::Suspends::install().map_err(|e| eyre!("cannot take over SIGTSTP: {e}"))?;
    terminal::install_panic_hook();
    if let Err(e) = terminal::enter(config.mouse_capture) {
        terminal::leave();
        bail!(
            "cannot set up the terminal ({e}). Run claw-tui in an interactive \
             terminal, or use -p \"PROMPT\" for a one-shot answer."
        );
    }
    let mut term = match terminal::terminal(Depth::of_terminal(settings.file.ui.colors)) {
        Ok(term) => term,
        Err(e) => {
            terminal::leave();
            bail!("cannot open the terminal: {e}");
        }
    };
    let Inbox {
        tx,
        mut rx,
        approvals,
    } = inbox;
    forward_runtime(
        options.runtime_events,
        options.cron_jobs,
        &tx,
        (settings, options.side_logs),
    );
    if let Some(saving) = saving {
        forward_saving(saving, tx.clone());
    }
    let mut config = config;
    config.plan = options.controls.modes.mode() == crate::runtime::AgentMode::Plan;
    let mut rt = runtime::Runtime::new(
        runtime::Parts {
            agent: agent.clone(),
            supervisor: options.supervisor,
            tx,
            approvals,
            background: options.background,
            sessions,
            controls: options.controls,
            policy: options.policy,
            suspends,
            on_session: options.hosting.as_ref().map(|h| h.switch_hook()),
        },
        settings,
    );
    let mut app = App::new(config);
    if let Ok(size) = term.size() {
        rt.dispatch(
            &mut app,
            &mut term,
            Msg::Term(Event::Resize(size.width, size.height)),
        );
    }
    rt.dispatch(
        &mut app,
        &mut term,
        Msg::Sessions(sessions::Msg::Loaded(Box::new(first))),
    );
    for msg in options.startup {
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
    let path = history::history_path(&settings.data_dir);
    match history::load(&settings.data_dir) {
        Ok(loaded) => {
            if loaded.skipped > 0 {
                let skipped = loaded.skipped;
                let warning = format!(
                    "The input history {} has {skipped} unreadable line{} (not UTF-8 text, \
                     or torn); skipped, the other {} entries are kept",
                    path.display(),
                    if skipped == 1 { "" } else { "s" },
                    loaded.entries.len()
                );
                tracing::warn!("{warning}");
                rt.dispatch(
                    &mut app,
                    &mut term,
                    Msg::Notice(NoticeLevel::Warning, warning),
                );
            }
            rt.dispatch(&mut app, &mut term, Msg::HistoryLoaded(loaded.entries));
        }
        Err(e) => {
            let warning = format!(
                "cannot read the input history {}: {e}; Up starts empty",
                path.display()
            );
            tracing::warn!("{warning}");
            rt.dispatch(
                &mut app,
                &mut term,
                Msg::Notice(NoticeLevel::Warning, warning),
            );
        }
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
    let mut result = rt.run(&mut app, &mut term, &mut rx, &mut stop).await;
    if matches!(result, Ok(runtime::Exit::Quit))
        && let Some(hosting) = &options.hosting
        && let Some(code) = hosting.quit_with_others(&mut stop).await
    {
        result = Ok(runtime::Exit::Signal(code));
    }
    // Quitting: nothing new may start, what waits is recorded in the session.
    let quitting = rt.supervisor().hold_for_switch();
    rt.abort();
    terminal::leave();
    if !matches!(result, Ok(runtime::Exit::HangUp)) {
        say_farewell(&app, &settings.workspace);
    }
    // Saving and stopping the background take a moment; a second signal need not wait.
    stop.exit_on_next();
    let code = match result {
        Ok(runtime::Exit::Quit) => EXIT_OK,
        Ok(runtime::Exit::Signal(code)) => code,
        // As SIGHUP would: 128 + 1.
        Ok(runtime::Exit::HangUp) => 129,
        Err(e) => {
            return Err(ExitFailure {
                code: EXIT_RUN_FAILED,
                message: format!("the terminal failed: {e}"),
            }
            .into());
        }
    };
    Ok((code, quitting))
}

/// Names the session on the terminal given back, with the command that resumes it,
/// when it holds a conversation and its file is there (writing it may have failed).
fn say_farewell(app: &App, workspace: &std::path::Path) {
    let Some(farewell) = crate::tui::farewell(app) else {
        return;
    };
    if !farewell.path.is_file() {
        return;
    }
    // Sessions are found by workspace: named when the user is elsewhere.
    let here = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok())
        .zip(workspace.canonicalize().ok())
        .is_some_and(|(cwd, ws)| cwd == ws);
    // The terminal may be gone (closed while the client quit): nothing to tell then.
    use std::io::Write;
    let _ = writeln!(
        std::io::stdout(),
        "{}",
        farewell.line((!here).then_some(workspace))
    );
}
