//! The process's exit codes, in one place: every front-end and subcommand ends with one
//! of these, or returns an error to `main`, where `launcher::exit_code` maps it onto
//! them ([`ExitFailure`] carries its own).

/// A run or command that finished normally.
pub const EXIT_OK: i32 = 0;
/// A run that ended in an error, an abort or the turn limit, or whose session could not
/// be saved; a subcommand that failed.
pub const EXIT_RUN_FAILED: i32 = 1;
/// A usage or configuration error.
pub const EXIT_USAGE: i32 = 2;
/// Ended by SIGHUP (128 + 1): the terminal went away.
pub const EXIT_SIGHUP: i32 = 128 + 1;
/// Ended by SIGINT (128 + 2).
pub const EXIT_SIGINT: i32 = 128 + 2;
/// Ended by SIGTERM (128 + 15).
pub const EXIT_SIGTERM: i32 = 128 + 15;

/// The exit code of a process ended by signal `number`: 128 + its number, as shells
/// report it.
pub const fn after_signal(number: i32) -> i32 {
    128 + number
}

/// A failure that ends the process with `code`, returned to `main` like every other
/// error; an error that is not one is a usage or configuration error ([`EXIT_USAGE`]).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ExitFailure {
    /// The exit code.
    pub code: i32,
    /// What went wrong, for the user.
    pub message: String,
}

impl ExitFailure {
    /// A run that failed ([`EXIT_RUN_FAILED`]) because of `message`.
    pub fn run_failed(message: impl Into<String>) -> Self {
        Self {
            code: EXIT_RUN_FAILED,
            message: message.into(),
        }
    }
}
