//! Starting a headless run: prompt, agent, session, mode; and the session subcommands.

use super::rpc::{DEFAULT_MAX_LINE_BYTES, PendingApprovals, RpcOptions, RpcRuntime, serve};
use super::{run_prompt, saving, stdin};
use crate::agent::{Agent, UserMessage};
use crate::cli::{Cli, Command, ExportFormat, McpCommand, Mode};
use crate::config::Settings;
use crate::exit::{EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE};
use crate::images;
use crate::session::{self, Resume, SessionService, export};
use crate::setup;
use crate::signals::StopSignals;
use crate::tools::exec::Approver;
use crate::tools::message::{MessageSender, OutboundMessage};
use crate::typed::PromptFiles;
use crate::visible::{for_stderr, for_stdout, visible};
use color_eyre::eyre::{bail, eyre};
use std::sync::Arc;

/// What a headless process does with its session.
pub enum Front {
    /// One prompt (`-p`, `--mode json`).
    Prompt(UserMessage),
    /// Commands on stdin (`--mode rpc`).
    Rpc,
    /// No terminal and no stdin: the session is served on its socket (`claw-tui serve`).
    Serve(crate::attach::serve::ServeOptions),
}

/// Runs `--print`, `--mode json` or `--mode rpc`; returns the exit code of the run.
pub fn run_headless(cli: &Cli, settings: &Settings) -> color_eyre::Result<i32> {
    let front = if cli.mode == Mode::Rpc {
        Front::Rpc
    } else {
        Front::Prompt(with_images(
            read_prompt(cli.prompt.as_deref())?,
            &cli.images,
        )?)
    };
    run_front(cli, settings, front)
}

/// Runs a headless front on a runtime of its own; returns the exit code.
pub fn run_front(cli: &Cli, settings: &Settings, front: Front) -> color_eyre::Result<i32> {
    let runtime = async_runtime()?;
    crate::logging::init_file_logging(&settings.state_dir);
    let code = runtime.block_on(run(cli, settings, front));
    // stdin's reader thread may still wait for a line that never comes: not waited for.
    runtime.shutdown_background();
    code
}

fn async_runtime() -> color_eyre::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| eyre!("cannot start the async runtime: {e}"))
}

async fn run(cli: &Cli, settings: &Settings, front: Front) -> color_eyre::Result<i32> {
    let mut stop =
        StopSignals::install().map_err(|e| eyre!("cannot take over the stop signals: {e}"))?;
    // A served session's requests go to every attached client, through the pump that
    // exists once the agent does.
    let pump = Arc::new(std::sync::OnceLock::<crate::attach::PumpHandle>::new());
    let approvals = match &front {
        Front::Serve(_) => {
            let pump = pump.clone();
            PendingApprovals::announcing(move |line| {
                if let Some(pump) = pump.get() {
                    crate::attach::Hub::announcer(pump)(line);
                }
            })
        }
        _ => PendingApprovals::default(),
    };
    let prompt = match &front {
        Front::Prompt(prompt) => Some(prompt),
        _ => None,
    };
    let approver = match (prompt, cli.yes) {
        (None, _) => {
            let approvals = approvals.clone();
            Approver::Ask(Arc::new(move |request| {
                let approvals = approvals.clone();
                Box::pin(async move { approvals.ask(request).await })
            }))
        }
        // Nobody can answer in print or JSON mode: deny unless --yes approved up front.
        (Some(_), true) => Approver::AllowAll,
        (Some(_), false) => Approver::Nobody,
    };
    let outbound: MessageSender = Arc::new(|m: OutboundMessage| {
        say!(
            "[message to {}:{}] {}",
            for_stderr(&m.channel),
            for_stderr(&m.chat_id),
            for_stderr(&m.content)
        );
    });
    let mut main = setup::start_runtime(settings, outbound, approver)?;
    for warning in main
        .warnings
        .iter()
        .chain(&main.mcp_plan.skipped_warnings())
        .chain(&main.trust.untrusted_warnings())
    {
        say!("claw-tui: warning: {}", for_stderr(warning));
    }
    wait_for_mcp_before_first_request(&main.agent, &main.mcp);
    let opened = session::open_session(&cli.session_choice(), settings).map_err(|e| eyre!(e))?;
    let agent = main.agent.clone();
    let mut sessions = SessionService::new(
        agent.clone(),
        Some(main.session_binding(settings)),
        settings,
        !cli.no_session,
    );
    let rpc = prompt.is_none();
    let mut session_id = None;
    let reporter = opened.map(|opened| {
        let entered = sessions.record(opened, Resume::IntoAgent);
        session_id = Some(entered.id.clone());
        for note in &entered.notes {
            say!("claw-tui: {}", for_stderr(note));
        }
        saving::report(entered.saving, rpc)
    });
    let prompts = PromptFiles::find(
        settings,
        main.context.clone(),
        &crate::tui::builtin_command_names(),
    );
    // Command files skipped or read in part, as the client says them in its chat.
    for warning in &prompts.commands.warnings {
        say!("claw-tui: warning: {}", for_stderr(warning));
    }
    let code = match (require_mcp(cli, &main.mcp, &mut stop).await, front) {
        (Some(code), _) => code,
        (None, Front::Prompt(mut prompt)) => match prompts.prepare(&prompt.content) {
            Err(e) => {
                eprintln!("claw-tui: error: {}", for_stderr(&e.to_string()));
                EXIT_USAGE
            }
            Ok(made) => {
                prompt.content = made;
                // `-p` loads the jobs for the cron tool but never fires them.
                let json = cli.mode == Mode::Json;
                run_prompt(
                    &main.supervisor,
                    &main.subagents,
                    &mut main.events,
                    prompt,
                    json,
                    &mut stop,
                )
                .await
            }
        },
        (None, Front::Serve(options)) => {
            main.supervisor.release();
            let scheduler = start_scheduler(&main);
            let session = crate::attach::serve::session_info(session_id, settings);
            let served = crate::attach::serve::serve(
                &mut main,
                &settings.state_dir,
                session,
                approvals,
                &pump,
                options,
                &mut stop,
            )
            .await;
            if let Some(scheduler) = scheduler {
                scheduler.stop().await;
            }
            served?
        }
        (None, Front::Rpc) => {
            // A resumed session's undelivered notifications go to the agent now.
            main.supervisor.release();
            let scheduler = start_scheduler(&main);
            let options = RpcOptions {
                max_line_bytes: cli.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES),
                exit_on_eof: cli.exit_on_eof,
            };
            let runtime = RpcRuntime {
                requests: &main.requests,
                supervisor: &main.supervisor,
                controls: &main.controls,
                subagents: &main.subagents,
                mcp: &main.mcp,
                prompts: &prompts,
            };
            let code = serve(
                runtime,
                main.events,
                approvals,
                tokio::io::stdin(),
                options,
                &mut stop,
            )
            .await;
            if let Some(scheduler) = scheduler {
                scheduler.stop().await;
            }
            code
        }
    };
    // Shutting down waits for tools to settle; a second signal need not wait.
    stop.exit_on_next();
    agent.wait_for_idle().await;
    main.subagents.shutdown().await;
    main.supervisor.stop().await;
    // The stop hook of the last run (and notify hooks) finish before the exit.
    main.controls.hooks.drain().await;
    main.mcp.shutdown().await;
    let status = sessions.close().await;
    // Ends once the writer is gone, after its last report.
    if let Some(reporter) = reporter {
        let _ = reporter.await;
    }
    let unsaved = status.is_some_and(|status| saving::report_final(&status));
    Ok(if unsaved && code == EXIT_OK {
        EXIT_RUN_FAILED
    } else {
        code
    })
}

/// Starts firing the cron jobs; a file that cannot be used is a warning, not the end.
fn start_scheduler(main: &setup::MainRuntime) -> Option<crate::runtime::cron::SchedulerHandle> {
    match main.start_cron_scheduler() {
        Ok(scheduler) => scheduler,
        Err(e) => {
            say!("claw-tui: warning: cron jobs will not fire: {e}");
            None
        }
    }
}

/// A one-shot run must see its MCP tools: each LLM request first waits until every
/// started server is ready or has failed (each within its `startup_timeout_secs`;
/// immediate once they have). The tools then reach the request through the agent; the
/// servers that failed are named on stderr, once, before the first request.
pub(crate) fn wait_for_mcp_before_first_request(agent: &Agent, mcp: &crate::mcp::McpManager) {
    if mcp.is_empty() {
        return;
    }
    let mcp = mcp.clone();
    let told = Arc::new(std::sync::atomic::AtomicBool::new(false));
    agent.set_transform_context(Some(Arc::new(move |messages, cancel| {
        let (mcp, told) = (mcp.clone(), told.clone());
        Box::pin(async move {
            tokio::select! {
                () = cancel.cancelled() => {}
                () = mcp.wait_started() => {
                    if !told.swap(true, std::sync::atomic::Ordering::SeqCst) {
                        for (name, why) in mcp.start_failures() {
                            eprintln!(
                                "claw-tui: warning: MCP server {} did not start: {}; its tools \
                                 are not in this run",
                                for_stderr(&name),
                                for_stderr(&why)
                            );
                        }
                    }
                }
            }
            messages
        })
    })));
}

/// With `--require-mcp`: waits for the servers to start and, if any enabled one is not
/// ready, names each on stderr and gives the exit code (a stop signal meanwhile gives
/// its own). `None`: the run may go ahead.
async fn require_mcp(
    cli: &Cli,
    mcp: &crate::mcp::McpManager,
    stop: &mut StopSignals,
) -> Option<i32> {
    if !cli.require_mcp {
        return None;
    }
    tokio::select! {
        code = stop.recv() => return Some(code),
        () = mcp.wait_started() => {}
    }
    let missing = mcp.not_ready();
    for (name, why) in &missing {
        eprintln!(
            "claw-tui: error: MCP server {} did not start (--require-mcp): {}",
            for_stderr(name),
            for_stderr(why)
        );
    }
    (!missing.is_empty()).then_some(EXIT_RUN_FAILED)
}

/// The prompt with the `--image` files attached (each read, checked and scaled down).
fn with_images(prompt: String, paths: &[std::path::PathBuf]) -> color_eyre::Result<UserMessage> {
    let images = paths
        .iter()
        .map(|path| images::load_file(path, &path.display().to_string()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| eyre!("--image: {e}"))?;
    Ok(UserMessage::new(prompt).with_images(images))
}

/// The prompt for a headless run: the argument, or stdin for `-`. With a prompt given
/// and stdin a pipe or a file (`git diff | claw-tui -p "review this"`), what stdin holds
/// follows the prompt as context, as other command-line agents do.
fn read_prompt(arg: Option<&str>) -> color_eyre::Result<String> {
    let prompt = match arg {
        Some("-") => stdin::read("the prompt")?,
        Some(text) if stdin::piped() => stdin::with_context(text, &stdin::read("the context")?),
        Some(text) => text.to_owned(),
        None => bail!(
            "--print and --mode json need a prompt: claw-tui -p \"PROMPT\" (or -p - to read stdin)"
        ),
    };
    if prompt.trim().is_empty() {
        bail!("the prompt is empty");
    }
    Ok(prompt)
}

/// Runs `claw-tui sessions`, `export`, `mcp list`, `doctor` or `acp` (which resolves
/// the settings of each session's workspace itself, from `cli`).
pub fn run_command(cli: &Cli, command: &Command, settings: &Settings) -> color_eyre::Result<i32> {
    match command {
        Command::Acp => crate::acp::run(cli),
        Command::Completions { shell } => Ok(crate::cli::print_completions(*shell)),
        Command::Serve { idle_timeout } => {
            let options = crate::attach::serve::ServeOptions {
                idle_timeout: (*idle_timeout > 0)
                    .then(|| std::time::Duration::from_secs(*idle_timeout)),
                max_line_bytes: cli.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES),
            };
            run_front(cli, settings, Front::Serve(options))
        }
        Command::Attach { id, socket, mode } => {
            let target = match socket {
                Some(path) => crate::attach::client::Target::Socket(path.clone()),
                None => crate::attach::client::Target::Id(id.clone()),
            };
            crate::attach::client::run(settings, target, *mode)
        }
        Command::Doctor => Ok(crate::doctor::run(settings)),
        Command::Replay {
            session,
            speed,
            from,
            real_time,
            mode,
        } => crate::replay::run(
            &crate::replay::ReplayArgs {
                session: session.clone(),
                options: crate::replay::PlayOptions {
                    speed: *speed,
                    real_time: *real_time,
                },
                from: *from,
                mode: *mode,
            },
            settings,
        ),
        Command::Sessions => {
            let sessions = session::list_sessions(&settings.data_dir, &settings.workspace);
            if sessions.is_empty() {
                println!("No sessions in {} yet.", settings.workspace.display());
            }
            for s in sessions {
                let prompt = s
                    .first_prompt
                    .as_deref()
                    .unwrap_or("(no prompt)")
                    .replace('\n', " ");
                // A name given with `/name` comes first.
                let prompt = match &s.name {
                    Some(name) => format!("[{name}] {prompt}"),
                    None => prompt,
                };
                let damaged = match s.damaged_lines {
                    0 => String::new(),
                    1 => "  (1 damaged line)".to_owned(),
                    n => format!("  ({n} damaged lines)"),
                };
                // A listing, not data: what a prompt holds is shown, never obeyed.
                println!(
                    "{}  started {}  last {}  {:>4} messages  {}{damaged}",
                    &s.id[..s.id.len().min(12)],
                    local_time(s.created),
                    local_time(s.last_activity),
                    s.message_count,
                    visible(&crate::text::clip(&prompt, 60))
                );
            }
            Ok(EXIT_OK)
        }
        Command::Mcp {
            command: McpCommand::List,
        } => {
            crate::logging::init_file_logging(&settings.state_dir);
            Ok(async_runtime()?.block_on(crate::mcp::launch::list(settings)))
        }
        Command::Inspect {
            session: key,
            turn,
            request,
            raw,
            list,
        } => Ok(crate::inspect::cli::run(
            settings,
            &crate::inspect::cli::Query {
                session: key.clone(),
                turn: *turn,
                request: *request,
                raw: *raw,
                list: *list,
            },
        )?),
        Command::Export {
            session: key,
            format,
        } => {
            let data = session::find_session(&settings.data_dir, &settings.workspace, key)
                .and_then(|path| session::load(&path))
                .map_err(|e| eyre!(e))?;
            for warning in &data.warnings {
                say!("claw-tui: warning: {}", for_stderr(warning));
            }
            // The export is data: byte for byte to a pipe or file, made visible on a
            // terminal.
            match format {
                ExportFormat::Markdown => print!("{}", for_stdout(&export::to_markdown(&data))),
                ExportFormat::Json => println!("{}", for_stdout(&export::to_json(&data))),
                ExportFormat::Html => print!("{}", for_stdout(&html_export(&data, settings))),
            }
            Ok(EXIT_OK)
        }
    }
}

/// The session as HTML, its code coloured like the client's theme colours it.
fn html_export(data: &session::SessionData, settings: &Settings) -> String {
    use crate::theme::{Theme, user_theme_dir};
    let theme = Theme::load(
        &settings.theme,
        user_theme_dir(&settings.config_path).as_deref(),
    )
    .unwrap_or_else(|_| Theme::fallback());
    let mut options = crate::export::HtmlOptions::default();
    if !theme.syntax_theme.is_empty() {
        options.code_theme = theme.syntax_theme;
    }
    let nested = session::read_subagent_calls(&data.path);
    for warning in &nested.warnings {
        say!("claw-tui: warning: {}", for_stderr(warning));
    }
    crate::export::to_html(data, &nested.calls, &options)
}

fn local_time(ms: u64) -> String {
    chrono::DateTime::from_timestamp_millis(i64::try_from(ms).unwrap_or(0))
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_default()
}
