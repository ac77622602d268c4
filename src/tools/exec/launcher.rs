//! The sandbox launcher: `claw-tui __sandbox-exec [OPTIONS] -- PROGRAM ARGS...`, a small
//! single-threaded process between claw-tui and every command it runs.
//!
//! ```text
//! claw-tui ──► launcher (pid namespace, mount namespace)      [contain.rs]
//!                └─► init: pid 1 of the namespace, reaps,     [supervise.rs]
//!                    reports, stops everything on request
//!                      └─► shell: own session, capabilities   [confine.rs]
//!                          dropped, Landlock, then exec
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
mod supervise;

use super::report::{Report, STDERR_PREFIX};
use std::ffi::OsString;
use std::io::Write as _;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::time::Duration;

/// The hidden subcommand that runs the launcher: `claw-tui __sandbox-exec ...`.
pub const SANDBOX_SUBCOMMAND: &str = "__sandbox-exec";

/// The descriptor claw-tui hands the status pipe to the launcher on.
pub(crate) const STATUS_FD: i32 = 3;

/// Exit code of the launcher when the sandbox could not be set up.
pub(crate) const EXIT_SETUP_FAILED: i32 = 125;
/// Exit code of the launcher when the command could not be started.
const EXIT_EXEC_FAILED: i32 = 127;

/// What the launcher was asked to do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LauncherOptions {
    /// Where reports go; `None`: stderr, prefixed.
    pub status_fd: Option<i32>,
    /// Everything is stopped this long after the start.
    pub timeout: Option<Duration>,
    /// Paths the command may write beneath.
    pub writes: Vec<PathBuf>,
    /// Apply the Landlock ruleset.
    pub landlock: bool,
    /// Refuse TCP connect and bind.
    pub deny_network: bool,
    /// Use pid and mount namespaces when the kernel allows them.
    pub namespaces: bool,
    /// The program and its arguments.
    pub program: Vec<OsString>,
}

impl LauncherOptions {
    /// The launcher's arguments (after the executable) for these options.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args = vec![OsString::from(SANDBOX_SUBCOMMAND)];
        if let Some(fd) = self.status_fd {
            args.extend(["--status-fd".into(), fd.to_string().into()]);
        }
        if let Some(timeout) = self.timeout {
            args.extend([
                "--timeout-ms".into(),
                timeout.as_millis().to_string().into(),
            ]);
        }
        for path in &self.writes {
            args.extend(["--write".into(), path.into()]);
        }
        if !self.landlock {
            args.push("--no-landlock".into());
        }
        if self.deny_network {
            args.push("--deny-network".into());
        }
        if !self.namespaces {
            args.push("--no-namespaces".into());
        }
        args.push("--".into());
        args.extend(self.program.iter().cloned());
        args
    }

    /// Parses the arguments after [`SANDBOX_SUBCOMMAND`].
    pub fn parse(args: &[OsString]) -> Result<Self, LauncherArgsError> {
        let mut options = Self {
            landlock: true,
            namespaces: true,
            ..Self::default()
        };
        let mut iter = args.iter();
        let number = |flag: &'static str, value: Option<&OsString>| {
            value
                .and_then(|v| v.to_str())
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or(LauncherArgsError::NotANumber(flag))
        };
        while let Some(arg) = iter.next() {
            match arg.to_str() {
                Some("--status-fd") => {
                    let fd = number("--status-fd", iter.next())?;
                    options.status_fd = Some(
                        i32::try_from(fd)
                            .map_err(|_| LauncherArgsError::TooLarge("--status-fd"))?,
                    );
                }
                Some("--timeout-ms") => {
                    let ms = number("--timeout-ms", iter.next())?;
                    options.timeout = Some(Duration::from_millis(ms));
                }
                Some("--write") => match iter.next() {
                    Some(path) => options.writes.push(PathBuf::from(path)),
                    None => return Err(LauncherArgsError::NoPath("--write")),
                },
                Some("--no-landlock") => options.landlock = false,
                Some("--deny-network") => options.deny_network = true,
                Some("--no-namespaces") => options.namespaces = false,
                Some("--") => {
                    options.program = iter.cloned().collect();
                    if options.program.is_empty() {
                        return Err(LauncherArgsError::NoCommandAfterSeparator);
                    }
                    return Ok(options);
                }
                _ => return Err(LauncherArgsError::Unexpected(arg.clone())),
            }
        }
        Err(LauncherArgsError::NoCommand)
    }
}

/// Why the launcher's arguments cannot be used (claw-tui wrote them wrong).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum LauncherArgsError {
    /// A flag without its number.
    #[error("{0} needs a number")]
    NotANumber(&'static str),
    /// A number out of range for its flag.
    #[error("{0} is too large")]
    TooLarge(&'static str),
    /// A flag without its path.
    #[error("{0} needs a path")]
    NoPath(&'static str),
    /// `--` at the end.
    #[error("no command given after --")]
    NoCommandAfterSeparator,
    /// No `--` at all.
    #[error("no command given (expected -- PROGRAM [ARGS]...)")]
    NoCommand,
    /// Anything else.
    #[error(
        "unexpected launcher argument {0:?}; usage: {SANDBOX_SUBCOMMAND} [--status-fd N] \
         [--timeout-ms N] [--write PATH]... [--no-landlock] [--deny-network] \
         [--no-namespaces] -- PROGRAM [ARGS]..."
    )]
    Unexpected(OsString),
}

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
    match contain::enter(options.namespaces) {
        contain::Role::Launcher { init } => {
            // The init process reports and supervises; this one only waits for it.
            drop(reporter);
            supervise::proxy(init, signals)
        }
        contain::Role::Init { containment, alive } => {
            reporter.send(&containment);
            supervise::supervise(&options, &reporter, signals, Some(alive), true)
        }
        contain::Role::Subreaper { containment } => {
            reporter.send(&containment);
            supervise::supervise(&options, &reporter, signals, None, false)
        }
    }
}

/// Ends a forked child at once, without running this process's exit handlers.
fn exit_now(code: i32) -> ! {
    // SAFETY: _exit ends the process immediately; it is async-signal-safe.
    unsafe { nix::libc::_exit(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_round_trip_and_are_checked() {
        let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(LauncherOptions::parse(&args(&["--write"])).is_err());
        assert!(LauncherOptions::parse(&args(&["--write", "/a", "--"])).is_err());
        assert!(LauncherOptions::parse(&args(&["--bogus"])).is_err());
        assert!(LauncherOptions::parse(&args(&["--timeout-ms", "x", "--", "sh"])).is_err());
        let options = LauncherOptions {
            status_fd: Some(3),
            timeout: Some(Duration::from_millis(1500)),
            writes: vec!["/a".into(), "/b c".into()],
            landlock: false,
            deny_network: true,
            namespaces: false,
            program: args(&["sh", "-c", "x"]),
        };
        let encoded = options.to_args();
        assert_eq!(encoded[0], SANDBOX_SUBCOMMAND);
        assert_eq!(LauncherOptions::parse(&encoded[1..]), Ok(options));
        let defaults = LauncherOptions::parse(&args(&["--", "true"])).unwrap_or_default();
        assert!(defaults.landlock && defaults.namespaces && !defaults.deny_network);
    }
}
