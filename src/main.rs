//! The `claw-tui` binary: flags → settings → a headless mode or the terminal client.

use clap::Parser;
use claw_tui::cli::{Cli, Mode};
use claw_tui::config;
use claw_tui::headless::{self, EXIT_USAGE};
use claw_tui::tools::exec::{
    PrivateTempDir, SANDBOX_SUBCOMMAND, protect_process, sandbox_launcher_main,
};

fn main() {
    // The exec sandbox launcher restricts itself and execs the shell before anything else.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == SANDBOX_SUBCOMMAND) {
        std::process::exit(sandbox_launcher_main(&argv[2..]));
    }
    // Keeps the keys in this process's memory and environment away from its commands.
    protect_process();
    one_malloc_arena();
    std::process::exit(run());
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

fn run() -> i32 {
    // The private temp dir of exec commands lives as long as this process.
    let _exec_temp = PrivateTempDir::guard();
    let cli = Cli::parse();
    let settings = match config::resolve(&cli, &|name| std::env::var(name).ok()) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("claw-tui: {e}");
            return EXIT_USAGE;
        }
    };
    for warning in &settings.warnings {
        eprintln!("claw-tui: warning: {warning}");
    }
    if let Some(command) = &cli.command {
        return headless::run_command(command, &settings);
    }
    if !cli.images.is_empty() && (cli.prompt.is_none() || cli.mode == Mode::Rpc) {
        eprintln!(
            "claw-tui: --image attaches images to the prompt given on the command line \
             (claw-tui -p \"PROMPT\" --image shot.png); in the client write @path instead"
        );
        return EXIT_USAGE;
    }
    if cli.mode == Mode::Text && !cli.print {
        return claw_tui::tui::launch(&settings, &cli);
    }
    headless::run_headless(&cli, &settings)
}
