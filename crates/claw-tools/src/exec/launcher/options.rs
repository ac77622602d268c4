//! The launcher's command line: what claw-tui asks of it, written by [`LauncherOptions::
//! to_args`] and read back by [`LauncherOptions::parse`].

use super::SANDBOX_SUBCOMMAND;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// How a path is held in the command's mount namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GuardKind {
    /// Bound read-only onto itself: no write reaches it, nor anything beneath it.
    ReadOnly,
    /// Bound onto itself, still writable: it cannot be renamed, removed or replaced.
    Pin,
}

/// One path held in place in the command's mount namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Guard {
    /// The path (absolute).
    pub path: PathBuf,
    /// How it is held.
    pub kind: GuardKind,
}

/// Resource limits of the command (`None`: not limited).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Processes and threads the command may have at once (`RLIMIT_NPROC`).
    pub processes: Option<u64>,
    /// Bytes of address space per process (`RLIMIT_AS`).
    pub address_space: Option<u64>,
}

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
    /// No network: a network namespace of its own (TCP refused by Landlock without one).
    pub deny_network: bool,
    /// Use user, pid, mount (and network) namespaces when the kernel allows them.
    pub namespaces: bool,
    /// Paths held in place in the mount namespace, in this order (parents first).
    pub guards: Vec<Guard>,
    /// Host unix sockets (or directories of them) left reachable.
    pub allow_sockets: Vec<PathBuf>,
    /// A directory covered by a tmpfs of this many bytes for the command.
    pub tmpfs: Option<(PathBuf, u64)>,
    /// Resource limits.
    pub limits: Limits,
    /// Drop only the capabilities that reach other processes or the kernel, instead of
    /// all of them (for the user's own commands: hooks, `sandbox = "off"`).
    pub keep_capabilities: bool,
    /// The program and its arguments.
    pub program: Vec<OsString>,
}

impl LauncherOptions {
    /// The launcher's arguments (after the executable) for these options.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args = vec![OsString::from(SANDBOX_SUBCOMMAND)];
        let mut number = |flag: &str, n: u128| args.extend([flag.into(), n.to_string().into()]);
        if let Some(fd) = self.status_fd {
            number("--status-fd", fd as u128);
        }
        if let Some(timeout) = self.timeout {
            number("--timeout-ms", timeout.as_millis());
        }
        if let Some(n) = self.limits.processes {
            number("--max-processes", n.into());
        }
        if let Some(n) = self.limits.address_space {
            number("--max-address-space", n.into());
        }
        if let Some((_, size)) = &self.tmpfs {
            number("--tmpfs-size", (*size).into());
        }
        let mut path = |flag: &str, path: &PathBuf| args.extend([flag.into(), path.into()]);
        for write in &self.writes {
            path("--write", write);
        }
        for guard in &self.guards {
            let flag = match guard.kind {
                GuardKind::ReadOnly => "--read-only",
                GuardKind::Pin => "--pin",
            };
            path(flag, &guard.path);
        }
        for socket in &self.allow_sockets {
            path("--allow-socket", socket);
        }
        if let Some((dir, _)) = &self.tmpfs {
            path("--tmpfs", dir);
        }
        for (off, flag) in [
            (!self.landlock, "--no-landlock"),
            (self.deny_network, "--deny-network"),
            (!self.namespaces, "--no-namespaces"),
            (self.keep_capabilities, "--keep-capabilities"),
        ] {
            if off {
                args.push(flag.into());
            }
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
        let mut tmpfs_dir = None;
        let mut tmpfs_size = None;
        let mut iter = args.iter();
        let number = |flag: &'static str, value: Option<&OsString>| {
            value
                .and_then(|v| v.to_str())
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or(LauncherArgsError::NotANumber(flag))
        };
        let path = |flag: &'static str, value: Option<&OsString>| {
            value
                .map(PathBuf::from)
                .ok_or(LauncherArgsError::NoPath(flag))
        };
        while let Some(arg) = iter.next() {
            let guard =
                |kind, value| path("--read-only or --pin", value).map(|path| Guard { path, kind });
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
                Some("--max-processes") => {
                    options.limits.processes = Some(number("--max-processes", iter.next())?);
                }
                Some("--max-address-space") => {
                    options.limits.address_space =
                        Some(number("--max-address-space", iter.next())?);
                }
                Some("--tmpfs-size") => tmpfs_size = Some(number("--tmpfs-size", iter.next())?),
                Some("--tmpfs") => tmpfs_dir = Some(path("--tmpfs", iter.next())?),
                Some("--write") => options.writes.push(path("--write", iter.next())?),
                Some("--read-only") => options
                    .guards
                    .push(guard(GuardKind::ReadOnly, iter.next())?),
                Some("--pin") => options.guards.push(guard(GuardKind::Pin, iter.next())?),
                Some("--allow-socket") => options
                    .allow_sockets
                    .push(path("--allow-socket", iter.next())?),
                Some("--no-landlock") => options.landlock = false,
                Some("--deny-network") => options.deny_network = true,
                Some("--no-namespaces") => options.namespaces = false,
                Some("--keep-capabilities") => options.keep_capabilities = true,
                Some("--") => {
                    options.program = iter.cloned().collect();
                    if options.program.is_empty() {
                        return Err(LauncherArgsError::NoCommandAfterSeparator);
                    }
                    options.tmpfs = match (tmpfs_dir, tmpfs_size) {
                        (Some(dir), Some(size)) => Some((dir, size)),
                        (None, None) => None,
                        _ => return Err(LauncherArgsError::TmpfsHalf),
                    };
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
    /// `--tmpfs` without `--tmpfs-size`, or the other way round.
    #[error("--tmpfs and --tmpfs-size go together")]
    TmpfsHalf,
    /// `--` at the end.
    #[error("no command given after --")]
    NoCommandAfterSeparator,
    /// No `--` at all.
    #[error("no command given (expected -- PROGRAM [ARGS]...)")]
    NoCommand,
    /// Anything else.
    #[error(
        "unexpected launcher argument {0:?}; usage: {SANDBOX_SUBCOMMAND} [--status-fd N] \
         [--timeout-ms N] [--max-processes N] [--max-address-space BYTES] [--write PATH]... \
         [--read-only PATH]... [--pin PATH]... [--allow-socket PATH]... [--tmpfs PATH \
         --tmpfs-size BYTES] [--no-landlock] [--deny-network] [--no-namespaces] \
         [--keep-capabilities] -- PROGRAM [ARGS]..."
    )]
    Unexpected(OsString),
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
        assert_eq!(
            LauncherOptions::parse(&args(&["--tmpfs", "/t", "--", "sh"])),
            Err(LauncherArgsError::TmpfsHalf)
        );
        let options = LauncherOptions {
            status_fd: Some(3),
            timeout: Some(Duration::from_millis(1500)),
            writes: vec!["/a".into(), "/b c".into()],
            landlock: false,
            deny_network: true,
            namespaces: false,
            guards: vec![
                Guard {
                    path: "/a/.git".into(),
                    kind: GuardKind::Pin,
                },
                Guard {
                    path: "/a/.git/config".into(),
                    kind: GuardKind::ReadOnly,
                },
            ],
            allow_sockets: vec!["/run/x.sock".into()],
            tmpfs: Some(("/b c".into(), 1 << 20)),
            limits: Limits {
                processes: Some(64),
                address_space: Some(1 << 30),
            },
            keep_capabilities: true,
            program: args(&["sh", "-c", "x"]),
        };
        let encoded = options.to_args();
        assert_eq!(encoded[0], SANDBOX_SUBCOMMAND);
        assert_eq!(LauncherOptions::parse(&encoded[1..]), Ok(options));
        let defaults = LauncherOptions::parse(&args(&["--", "true"])).unwrap_or_default();
        assert!(defaults.landlock && defaults.namespaces && !defaults.deny_network);
        assert!(!defaults.keep_capabilities && defaults.limits == Limits::default());
    }
}
