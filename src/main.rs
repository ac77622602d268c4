//! The `claw-tui` binary: flags → settings → a headless mode or the terminal client.

use clap::Parser;
use claw_tui::cli::{Cli, Mode};
use claw_tui::config;
use claw_tui::headless::{self, EXIT_USAGE};
use claw_tui::tools::exec::{SANDBOX_SUBCOMMAND, sandbox_launcher_main};

fn main() {
    // The exec sandbox launcher restricts itself and execs the shell before anything else.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == SANDBOX_SUBCOMMAND) {
        std::process::exit(sandbox_launcher_main(&argv[2..]));
    }
    std::process::exit(run());
}

fn run() -> i32 {
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
    if cli.mode == Mode::Text && !cli.print {
        return claw_tui::tui::launch(&settings, cli.prompt.clone(), cli.yes);
    }
    headless::run_headless(&cli, &settings)
}
