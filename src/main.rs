//! The `claw-tui` binary: flags → settings → a headless mode or the terminal client.

use clap::Parser;
use claw_tui::cli::{Cli, Command};
use claw_tui::exit::{EXIT_USAGE, ExitFailure};
use claw_tui::tools::exec::{
    CommandsGuard, PrivateTempDir, SANDBOX_SUBCOMMAND, protect_process, sandbox_launcher_main,
};
use claw_tui::{config, doctor, launcher};
use std::io::Write;

fn main() {
    // The exec sandbox launcher restricts itself and execs the shell before anything else.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == SANDBOX_SUBCOMMAND) {
        std::process::exit(sandbox_launcher_main(&argv[2..]));
    }
    // `doctor`'s probe inside the sandbox: one connection attempt, nothing else.
    if argv.get(1).is_some_and(|a| a == doctor::PROBE_SUBCOMMAND) {
        std::process::exit(doctor::probe_main(&argv[2..]));
    }
    // Keeps the keys in this process's memory and environment away from its commands.
    protect_process();
    one_malloc_arena();
    install_error_reports();
    std::process::exit(exit_code(run()));
}

/// Error reports are color-eyre's. Its panic hook is not installed here: the client
/// installs its own, which gives the terminal back before color-eyre reports the panic.
fn install_error_reports() {
    let (_, errors) = color_eyre::config::HookBuilder::default()
        .display_env_section(false)
        .into_hooks();
    // Fails only when a hook is already installed, which then reports just as well.
    let _ = errors.install();
}

/// glibc gives each thread that allocates its own arena (up to eight per core), and each
/// arena keeps its own free and fragmented pages: with the tokio workers and the
/// highlighting thread that was 1–1.5 MB of the client's 30 MB budget (issue 6).
/// The threads rarely allocate at the same moment, so sharing one arena costs nothing
/// measurable (`scripts/measure_tui.py`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn one_malloc_arena() {
    // SAFETY: called before any other thread exists; mallopt only sets a tuning
    // parameter of the allocator, and a refusal (return 0) just leaves the default.
    unsafe {
        nix::libc::mallopt(nix::libc::M_ARENA_MAX, 1);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn one_malloc_arena() {}

/// Resolves the settings and runs what the flags ask for. Every error ends here.
fn run() -> color_eyre::Result<i32> {
    // The private temp dir of exec commands lives as long as this process.
    let _exec_temp = PrivateTempDir::guard();
    // Dropped first, on every way out of here: the processes commands left are stopped,
    // then their protected paths checked for the last time.
    let _commands = CommandsGuard::new();
    let cli = Cli::parse();
    // Completions need no settings: a broken config must not keep them from a shell.
    if let Some(Command::Completions { shell }) = cli.command {
        return Ok(claw_tui::cli::print_completions(shell));
    }
    if let Some(name) = cli.mistyped_command() {
        return Err(ExitFailure {
            code: EXIT_USAGE,
            message: format!(
                "'{}' is not a command; did you mean 'claw-tui {name}'? (A one-word prompt \
                 this close to a command is not sent: add a word to send it as a prompt.)",
                cli.prompt.as_deref().unwrap_or_default()
            ),
        }
        .into());
    }
    // The ACP agent resolves the settings of each session's workspace itself, and starts
    // without a provider key too: it tells the editor which variable to set.
    if cli.command == Some(Command::Acp) {
        return claw_tui::acp::run(&cli);
    }
    let settings = config::resolve(&cli.config_flags(), &|name| std::env::var(name).ok())?;
    for warning in &settings.warnings {
        eprintln!(
            "claw-tui: warning: {}",
            claw_tui::visible::for_stderr(warning)
        );
    }
    launcher::run(&cli, &settings)
}

/// The exit code for `result`, after telling the user what went wrong. Only the error's
/// own message is shown: each one says what failed and why in one line.
fn exit_code(result: color_eyre::Result<i32>) -> i32 {
    match result {
        Ok(code) => code,
        Err(report) => {
            // Not `eprintln!`: a closed stderr must not turn an error into a panic.
            // An error may quote a server or a file: shown, never obeyed.
            let text = report.to_string();
            let _ = writeln!(
                std::io::stderr(),
                "claw-tui: {}",
                claw_tui::visible::for_stderr(&text)
            );
            launcher::exit_code(&report)
        }
    }
}
