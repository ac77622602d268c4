//! Starting a headless run: prompt, agent, session, mode; and the session subcommands.

use super::rpc::{PendingApprovals, serve};
use super::{EXIT_OK, EXIT_USAGE, run_prompt};
use crate::agent::{Agent, Message, QueueKind};
use crate::cli::{Cli, Command, ExportFormat, Mode};
use crate::config::Settings;
use crate::session::{self, OpenedSession, export};
use crate::setup;
use crate::tools::exec::Approver;
use crate::tools::message::{MessageSender, OutboundMessage};
use std::io::Read;
use std::sync::Arc;

/// Runs `--print`, `--mode json` or `--mode rpc`; returns the exit code.
pub fn run_headless(cli: &Cli, settings: &Settings) -> i32 {
    let prompt = if cli.mode == Mode::Rpc {
        None
    } else {
        match read_prompt(cli.prompt.as_deref()) {
            Ok(prompt) => Some(prompt),
            Err(e) => {
                eprintln!("claw-tui: {e}");
                return EXIT_USAGE;
            }
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("claw-tui: cannot start the async runtime: {e}");
            return EXIT_USAGE;
        }
    };
    runtime.block_on(async {
        let approvals = PendingApprovals::default();
        let approver = match (&prompt, cli.yes) {
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
            eprintln!("[message to {}:{}] {}", m.channel, m.chat_id, m.content);
        });
        let mut main = match setup::start_runtime(settings, outbound, approver) {
            Ok(main) => main,
            Err(e) => {
                eprintln!("claw-tui: {e}");
                return EXIT_USAGE;
            }
        };
        for warning in &main.warnings {
            eprintln!("claw-tui: warning: {warning}");
        }
        let opened = match session::open_session(cli, settings) {
            Ok(opened) => opened,
            Err(e) => {
                eprintln!("claw-tui: {e}");
                return EXIT_USAGE;
            }
        };
        let agent = main.agent.clone();
        let binding = main.session_binding(settings);
        let recording = opened.map(|opened| {
            restore(&agent, &opened);
            binding.enter(&opened.writer, opened.resumed.as_ref());
            session::record_events(&agent, opened.writer)
        });
        let code = match prompt {
            Some(prompt) => {
                // `-p` loads the jobs for the cron tool but never fires them.
                let json = cli.mode == Mode::Json;
                run_prompt(
                    &main.supervisor,
                    &main.subagents,
                    &mut main.events,
                    &main.controls.hooks,
                    prompt,
                    json,
                )
                .await
            }
            None => {
                // A resumed session's undelivered notifications go to the agent now.
                main.supervisor.release();
                let scheduler = match main.start_cron_scheduler() {
                    Ok(scheduler) => scheduler,
                    Err(e) => {
                        eprintln!("claw-tui: warning: cron jobs will not fire: {e}");
                        None
                    }
                };
                let code = serve(
                    &main.supervisor,
                    &main.controls,
                    main.events,
                    approvals,
                    tokio::io::stdin(),
                )
                .await;
                if let Some(scheduler) = scheduler {
                    scheduler.stop().await;
                }
                code
            }
        };
        agent.wait_for_idle().await;
        main.subagents.shutdown().await;
        main.supervisor.stop().await;
        // The stop hook of the last run (and notify hooks) finish before the exit.
        main.controls.hooks.drain().await;
        if let Some((finish, task)) = recording {
            // `state()` returns only after the last event was handed to the recorder.
            let _ = agent.state();
            let _ = finish.send(());
            let _ = task.await;
        }
        code
    })
}

/// Puts a resumed session's history and pending queues back into the agent.
fn restore(agent: &Agent, opened: &OpenedSession) {
    for note in &opened.notes {
        eprintln!("claw-tui: {note}");
    }
    let Some(data) = &opened.resumed else {
        return;
    };
    if let Err(e) = agent.replace_messages(data.messages.clone()) {
        eprintln!("claw-tui: cannot restore the session: {e}");
    }
    for text in &data.steering {
        agent.queue(QueueKind::Steering, Message::user(text.clone()));
    }
    for text in &data.follow_up {
        agent.queue(QueueKind::FollowUp, Message::user(text.clone()));
    }
}

/// The prompt for a headless run: the argument, or stdin for `-`.
fn read_prompt(arg: Option<&str>) -> Result<String, String> {
    let prompt = match arg {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
            text
        }
        Some(text) => text.to_owned(),
        None => {
            return Err(
                "--print and --mode json need a prompt: claw-tui -p \"PROMPT\" (or -p - to read stdin)".into(),
            );
        }
    };
    if prompt.trim().is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok(prompt)
}

/// Runs `claw-tui sessions` or `claw-tui export`.
pub fn run_command(command: &Command, settings: &Settings) -> i32 {
    match command {
        Command::Doctor => crate::doctor::run(settings),
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
                println!(
                    "{}  started {}  last {}  {:>4} messages  {}",
                    &s.id[..s.id.len().min(12)],
                    local_time(s.created),
                    local_time(s.last_activity),
                    s.message_count,
                    super::clip(&prompt, 60)
                );
            }
            EXIT_OK
        }
        Command::Export {
            session: key,
            format,
        } => {
            let loaded = session::find_session(&settings.data_dir, &settings.workspace, key)
                .and_then(|path| session::load(&path));
            match loaded {
                Ok(data) => {
                    for warning in &data.warnings {
                        eprintln!("claw-tui: warning: {warning}");
                    }
                    match format {
                        ExportFormat::Markdown => print!("{}", export::to_markdown(&data)),
                        ExportFormat::Json => println!("{}", export::to_json(&data)),
                    }
                    EXIT_OK
                }
                Err(e) => {
                    eprintln!("claw-tui: {e}");
                    EXIT_USAGE
                }
            }
        }
    }
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
