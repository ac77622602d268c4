//! The sandbox launcher: `claw-tui __sandbox-exec [OPTIONS] -- PROGRAM ARGS...`, a small
//! single-threaded process between claw-tui and every command it runs.
//!
//! ```text
//! claw-tui ──► launcher: lists host sockets, clones ──────────── [contain.rs]
//!                └─► init: pid 1 of new user, pid, mount (and      [mounts.rs,
//!                    network) namespaces; mounts the command's      sockets.rs]
//!                    view, reaps, reports, stops everything         [supervise.rs]
//!                      └─► shell: own session, limits, no           [confine.rs]
//!                          capabilities, Landlock, then exec
//! ```
//!
//! Without namespaces (`--no-namespaces`, or when the kernel refuses them) the launcher
//! itself supervises as a child subreaper. Either way every process the command starts,
//! even with `setsid`, a double fork or `nohup`, stays where the supervisor can kill it:
//! at the time limit (`--timeout-ms`), on SIGTERM/SIGINT/SIGHUP (claw-tui aborting the
//! call), and when claw-tui dies (its end of the status pipe closes). The environment
//! comes from claw-tui already scrubbed of secrets; the launcher adds nothing to it.
//!
//! Running it in a separate executable keeps claw-tui's own threads out of the way:
//! the launcher forks freely because it is single-threaded.

mod confine;
mod contain;
mod mounts;
mod options;
mod setid;
mod sockets;
mod supervise;

pub(crate) use options::{Guard, GuardKind, LauncherOptions, Limits};

use super::report::{Report, STDERR_PREFIX};
use std::ffi::OsString;
use std::io::Write as _;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};

/// The hidden subcommand that runs the launcher: `claw-tui __sandbox-exec ...`.
pub const SANDBOX_SUBCOMMAND: &str = "__sandbox-exec";

/// The descriptor claw-tui hands the status pipe to the launcher on.
pub(crate) const STATUS_FD: i32 = 3;

/// Exit code of the launcher when the sandbox could not be set up.
pub(crate) const EXIT_SETUP_FAILED: i32 = 125;
/// Exit code of the launcher when the command could not be started.
const EXIT_EXEC_FAILED: i32 = 127;

/// The status descriptor handed over is not open.
#[derive(Debug, thiserror::Error)]
#[error("the status descriptor {0} is not open")]
struct ClosedStatusFd(i32);

/// Where the launcher's processes write their reports: the status pipe, or a copy of
/// stderr. Its closing (claw-tui gone) is also how they learn to stop.
#[derive(Debug)]
pub(crate) struct Reporter {
    fd: OwnedFd,
    prefixed: bool,
}

impl Reporter {
    /// Takes the status descriptor (or duplicates stderr), marked close-on-exec so the
    /// command never inherits it.
    fn open(status_fd: Option<i32>) -> Result<Self, ClosedStatusFd> {
        let (raw, prefixed) = match status_fd {
            Some(fd) => (fd, false),
            // SAFETY: fcntl with F_DUPFD_CLOEXEC only creates a new descriptor.
            None => (
                unsafe { nix::libc::fcntl(2, nix::libc::F_DUPFD_CLOEXEC, 3) },
                true,
            ),
        };
        // SAFETY: F_GETFD only reads the flags of the descriptor, if it exists.
        if raw < 0 || unsafe { nix::libc::fcntl(raw, nix::libc::F_GETFD) } < 0 {
            return Err(ClosedStatusFd(raw));
        }
        // SAFETY: the descriptor is open (checked above), and nothing else in this
        // process owns it: it was handed over for the launcher's sole use.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sets the close-on-exec flag of a descriptor we own.
        unsafe { nix::libc::fcntl(raw, nix::libc::F_SETFD, nix::libc::FD_CLOEXEC) };
        Ok(Self { fd, prefixed })
    }

    /// Writes one report; a closed pipe is not worth failing for.
    pub fn send(&self, report: &Report) {
        let mut line = report.encode();
        if self.prefixed {
            line.insert_str(0, STDERR_PREFIX);
        }
        let mut bytes = line.as_bytes();
        while !bytes.is_empty() {
            match nix::unistd::write(self.fd.as_fd(), bytes) {
                Ok(n) if n > 0 => bytes = &bytes[n..],
                Err(nix::errno::Errno::EINTR) => {}
                _ => return,
            }
        }
    }

    /// The descriptor, for polling.
    pub fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Runs the sandbox launcher: `args` are the arguments after [`SANDBOX_SUBCOMMAND`].
/// Returns the exit code: the command's (128 + signal when a signal ended it), 125 when
/// the sandbox could not be set up, 127 when the program could not be started.
///
/// Call it first thing in `main`, before any runtime or thread starts.
pub fn sandbox_launcher_main(args: &[OsString]) -> i32 {
    let options = LauncherOptions::parse(args);
    let status_fd = options.as_ref().ok().and_then(|o| o.status_fd);
    let reporter = match Reporter::open(status_fd) {
        Ok(reporter) => reporter,
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "claw-tui sandbox: {why}");
            return EXIT_SETUP_FAILED;
        }
    };
    let options = match options {
        Ok(options) => options,
        Err(e) => {
            reporter.send(&Report::Failed {
                reason: e.to_string(),
            });
            return EXIT_SETUP_FAILED;
        }
    };
    let signals = match supervise::Signals::block() {
        Ok(signals) => signals,
        Err(e) => {
            reporter.send(&Report::Failed {
                reason: format!("cannot block signals: {e}"),
            });
            return EXIT_SETUP_FAILED;
        }
    };
    match contain::enter(&options) {
        contain::Role::Launcher { init } => {
            // The init process reports and supervises; this one only waits for it.
            drop(reporter);
            supervise::proxy(init, signals)
        }
        contain::Role::Init {
            containment,
            alive,
            inside,
        } => {
            reporter.send(&containment);
            let init = supervise::Supervisor::Init { alive, inside };
            supervise::supervise(&options, &reporter, signals, init)
        }
        contain::Role::Subreaper { containment } => {
            reporter.send(&containment);
            supervise::supervise(
                &options,
                &reporter,
                signals,
                supervise::Supervisor::Subreaper,
            )
        }
    }
}

/// Ends a forked child at once, without running this process's exit handlers.
fn exit_now(code: i32) -> ! {
    // SAFETY: _exit ends the process immediately; it is async-signal-safe.
    unsafe { nix::libc::_exit(code) }
}
