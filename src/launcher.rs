//! From the flags to a running front-end: the session is chosen before anything takes
//! the terminal (a session in use is offered as a copy here, on the terminal), then the
//! client or a headless mode runs. Errors go back to `main` as reports, which turns
//! them into exit codes in one place: [`exit_code`].

use crate::cli::{Cli, Mode};
use crate::config::Settings;
use crate::exit::{EXIT_USAGE, ExitFailure};
use crate::headless;
use crate::session::{self, OpenedSession, SessionChoice, SessionError};
use color_eyre::eyre::{Report, bail, eyre};
use std::io::{BufRead, Write};

/// The exit code for an error that reached `main`.
pub fn exit_code(report: &Report) -> i32 {
    report
        .downcast_ref::<ExitFailure>()
        .map_or(EXIT_USAGE, |failure| failure.code)
}

/// Runs what the flags ask for with the resolved `settings`; returns the exit code of a
/// run that happened (an error: nothing ran, or it could not go on).
pub fn run(cli: &Cli, settings: &Settings) -> color_eyre::Result<i32> {
    if let Some(command) = &cli.command {
        return headless::run_command(cli, command, settings);
    }
    if !cli.images.is_empty() && (cli.prompt.is_none() || cli.mode == Mode::Rpc) {
        bail!(
            "--image attaches images to the prompt given on the command line \
             (claw-tui -p \"PROMPT\" --image shot.png); in the client write @path instead"
        );
    }
    if cli.mode == Mode::Text && !cli.print {
        if cli.require_mcp {
            // The client shows each server's state and keeps restarting the failed ones.
            bail!(
                "--require-mcp is for -p, --mode json and --mode rpc; the client shows the MCP servers' states on its dashboard"
            );
        }
        return client(cli, settings);
    }
    headless::run_headless(cli, settings)
}

/// The full-screen client, in the session the flags choose (`-c`, `--session`,
/// `--fork`, `--no-session`).
fn client(cli: &Cli, settings: &Settings) -> color_eyre::Result<i32> {
    crate::logging::init_file_logging(&settings.state_dir);
    let stdin = std::io::stdin();
    let opened = open_for_client(cli, settings, &mut stdin.lock(), &mut std::io::stderr())?;
    crate::tui::launch(settings, cli, opened)
}

/// Opens the session the flags ask for. One written by another process is offered as a
/// copy: the question goes to `ask` and the answer comes from `answer` (the terminal,
/// before the client takes it); `--fork` takes the copy unasked.
pub fn open_for_client(
    cli: &Cli,
    settings: &Settings,
    answer: &mut dyn BufRead,
    ask: &mut dyn Write,
) -> color_eyre::Result<Option<OpenedSession>> {
    let path = match session::open_session(&cli.session_choice(), settings) {
        Err(SessionError::Locked { path }) if !cli.fork => path,
        other => return other.map_err(|e| eyre!(e)),
    };
    // The question is on the terminal whatever happens to it; a failed write shows as
    // no answer.
    let _ = write!(
        ask,
        "claw-tui: session {path} is open in another claw-tui process.\n\
         Continue in a new session that starts from a copy of its history? [Y/n] "
    );
    let _ = ask.flush();
    let mut line = String::new();
    let read = answer
        .read_line(&mut line)
        .map_err(|e| eyre!("cannot read the answer: {e}"))?;
    let line = line.trim().to_lowercase();
    // End of input is no answer, not a yes.
    if read == 0 || !(line.is_empty() || line == "y" || line == "yes") {
        bail!("session {path} was not opened; close the other claw-tui first, or pass --fork");
    }
    let forked = SessionChoice {
        fork: true,
        ..cli.session_choice()
    };
    session::open_session(&forked, settings).map_err(|e| eyre!(e))
}

#[cfg(test)]
mod tests {
    use super::exit_code;
    use crate::exit::{EXIT_RUN_FAILED, EXIT_USAGE, ExitFailure};
    use color_eyre::eyre::eyre;

    #[test]
    fn a_failure_keeps_its_code_and_anything_else_is_a_usage_error() {
        let failed: color_eyre::Report = ExitFailure {
            code: EXIT_RUN_FAILED,
            message: "the terminal failed: broken pipe".into(),
        }
        .into();
        assert_eq!(exit_code(&failed), EXIT_RUN_FAILED);
        assert_eq!(failed.to_string(), "the terminal failed: broken pipe");
        assert_eq!(exit_code(&eyre!("the prompt is empty")), EXIT_USAGE);
    }
}
