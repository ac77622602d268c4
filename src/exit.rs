//! The process's exit codes, in one place: every front-end and subcommand ends with one
//! of these, and `launcher::exit_code` maps errors onto them.

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
