//! What the sandbox launcher tells claw-tui: one JSON object per line on the status pipe
//! (or on stderr, prefixed, when the launcher is run by hand).
//!
//! The launcher and its helpers write a line when the process containment is set up,
//! when the command's sandbox is in place (just before the shell starts), when the shell
//! exits, and when something fails. Lines are far below `PIPE_BUF`, so writes from the
//! different processes never interleave.

use serde::{Deserialize, Serialize};

/// Prefix of a report written to stderr (no status pipe was given).
pub(crate) const STDERR_PREFIX: &str = "[claw-sandbox] ";

/// How the launcher keeps every process of a command within reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContainmentMode {
    /// A PID namespace whose init is the launcher's helper: when it ends, the kernel
    /// kills every process in it.
    PidNamespace,
    /// The launcher is a child subreaper: orphans are re-parented to it, and it kills
    /// every descendant it finds when the command is stopped.
    Subreaper,
}

/// The state of the Landlock ruleset of a command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LandlockState {
    /// Every requested restriction is in force.
    Enforced,
    /// The kernel supports only some of the requested restrictions; those are in force.
    Partial,
    /// The kernel has no Landlock: nothing is restricted.
    NotEnforced,
    /// Not requested (`[exec] sandbox = "off"`).
    #[default]
    Off,
}

/// What was set up around the command just before it started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SandboxReport {
    /// The ruleset's state.
    pub landlock: LandlockState,
    /// The kernel's Landlock ABI (0: none).
    pub abi: u8,
    /// Writes are confined to the allowed paths.
    pub write_confined: bool,
    /// TCP connect and bind are refused by Landlock (asked for by `network = "deny"`
    /// when the command has no network namespace of its own).
    pub network_denied: bool,
    /// Signals to processes outside the command's own tree are refused.
    pub signals_scoped: bool,
    /// Abstract unix sockets outside the command's own tree are out of reach.
    pub abstract_sockets_scoped: bool,
    /// The command cannot make a set-user-ID or set-group-ID file (a seccomp filter).
    pub setid_refused: bool,
    /// Capabilities removed from the user's own commands (running as root), by name.
    pub dropped_capabilities: Vec<String>,
    /// The capability sets the command starts with, read back from the kernel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<CapabilityState>,
    /// The resource limits in force.
    pub limits: LimitsReport,
}

/// A process's capability sets and `no_new_privs`, as `/proc/PID/status` shows them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityState {
    /// `CapEff`.
    pub effective: u64,
    /// `CapPrm`.
    pub permitted: u64,
    /// `CapInh`.
    pub inheritable: u64,
    /// `CapBnd`: what an exec could ever give back.
    pub bounding: u64,
    /// `CapAmb`.
    pub ambient: u64,
    /// `NoNewPrivs`: exec never grants anything (set-user-ID bits, file capabilities).
    pub no_new_privs: bool,
}

impl CapabilityState {
    /// Reads the sets out of the text of `/proc/PID/status`.
    pub fn parse(status: &str) -> Option<Self> {
        let field = |name: &str| {
            status.lines().find_map(|line| {
                line.strip_prefix(name)?
                    .strip_prefix(':')
                    .map(str::trim)
                    .map(str::to_owned)
            })
        };
        let mask = |name: &str| u64::from_str_radix(&field(name)?, 16).ok();
        Some(Self {
            effective: mask("CapEff")?,
            permitted: mask("CapPrm")?,
            inheritable: mask("CapInh")?,
            bounding: mask("CapBnd")?,
            ambient: mask("CapAmb")?,
            no_new_privs: field("NoNewPrivs")? == "1",
        })
    }

    /// No capability in any set, and `no_new_privs`.
    pub fn holds_none(&self) -> bool {
        self.effective | self.permitted | self.inheritable | self.bounding | self.ambient == 0
            && self.no_new_privs
    }
}

/// The resource limits a command runs under.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LimitsReport {
    /// `RLIMIT_NPROC` as set.
    pub processes: Option<u64>,
    /// Whether the kernel applies it (root outside a user namespace is exempt).
    pub processes_enforced: bool,
    /// `RLIMIT_AS` in bytes as set.
    pub address_space: Option<u64>,
}

/// What the command's mount namespace holds in place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MountReport {
    /// Protected paths bound read-only (or pinned).
    pub guarded: usize,
    /// Every writable path is mounted `nosuid`.
    pub nosuid: bool,
    /// The size of the tmpfs over `$TMPDIR`, when there is one.
    pub tmpfs: Option<u64>,
    /// Host unix sockets masked one by one.
    pub sockets_masked: usize,
    /// Socket directories covered with an empty tmpfs.
    pub socket_dirs_masked: usize,
}

/// One line from the launcher.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "report", rename_all = "snake_case")]
pub enum Report {
    /// How the command's processes are contained.
    Containment {
        /// The mechanism in use.
        mode: ContainmentMode,
        /// The command sees a /proc of its own namespace only.
        private_proc: bool,
        /// The command has its own /dev/pts (it cannot open the user's terminals).
        private_pts: bool,
        /// Why the preferred mechanism (or part of it) is not in use.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fallback_reason: Option<String>,
        /// The command has a user namespace of its own.
        #[serde(default)]
        user_namespace: bool,
        /// The command has a network namespace of its own (only its loopback).
        #[serde(default)]
        network_namespace: bool,
        /// What its mount namespace holds in place (none without one).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mounts: Option<MountReport>,
    },
    /// The sandbox is in place; the shell starts next.
    Sandbox(SandboxReport),
    /// The shell exited with a code or was killed by a signal.
    Exit {
        /// Exit code, when it exited.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
        /// Signal number, when a signal ended it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
    },
    /// Setting up failed; the command did not run.
    Failed {
        /// What went wrong.
        reason: String,
    },
}

impl Report {
    /// The line to write, newline included.
    pub fn encode(&self) -> String {
        let mut line = serde_json::to_string(self)
            .unwrap_or_else(|_| r#"{"report":"failed","reason":"unencodable report"}"#.to_owned());
        line.push('\n');
        line
    }

    /// Parses one line (without the newline), with or without the stderr prefix.
    pub fn decode(line: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(line).ok()?.trim();
        let text = text.strip_prefix(STDERR_PREFIX.trim_end()).unwrap_or(text);
        serde_json::from_str(text.trim()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip() {
        let reports = [
            Report::Containment {
                mode: ContainmentMode::PidNamespace,
                private_proc: true,
                private_pts: false,
                fallback_reason: Some("devpts: EPERM".into()),
                user_namespace: true,
                network_namespace: false,
                mounts: Some(MountReport {
                    guarded: 3,
                    nosuid: true,
                    tmpfs: Some(1 << 20),
                    sockets_masked: 2,
                    socket_dirs_masked: 1,
                }),
            },
            Report::Sandbox(SandboxReport {
                landlock: LandlockState::Partial,
                abi: 5,
                write_confined: true,
                network_denied: true,
                signals_scoped: false,
                abstract_sockets_scoped: false,
                setid_refused: true,
                dropped_capabilities: vec!["CAP_SYS_ADMIN".into()],
                capabilities: Some(CapabilityState {
                    bounding: 0x3f,
                    no_new_privs: true,
                    ..CapabilityState::default()
                }),
                limits: LimitsReport {
                    processes: Some(100),
                    processes_enforced: true,
                    address_space: None,
                },
            }),
            Report::Exit {
                code: Some(3),
                signal: None,
            },
            Report::Failed {
                reason: "no such dir\nsecond line".into(),
            },
        ];
        for report in reports {
            let line = report.encode();
            assert_eq!(line.matches('\n').count(), 1, "{line}");
            assert_eq!(
                Report::decode(line.trim_end().as_bytes()),
                Some(report.clone())
            );
            let prefixed = format!("{STDERR_PREFIX}{line}");
            assert_eq!(Report::decode(prefixed.as_bytes()), Some(report));
        }
        assert_eq!(Report::decode(b"hello"), None);
    }

    #[test]
    fn capability_sets_are_read_from_the_status_text() {
        let status = "Name:\tsh\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n\
                      CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n\
                      CapAmb:\t0000000000000000\nNoNewPrivs:\t1\n";
        let state = CapabilityState::parse(status);
        assert!(state.is_some_and(|s| s.holds_none()), "{state:?}");
        let root = status.replace("CapEff:\t0000000000000000", "CapEff:\t000001ffffffffff");
        let state = CapabilityState::parse(&root);
        assert_eq!(state.map(|s| s.effective), Some(0x1ff_ffff_ffff));
        assert!(state.is_some_and(|s| !s.holds_none()));
        assert_eq!(CapabilityState::parse("Name:\tsh\n"), None);
    }
}
