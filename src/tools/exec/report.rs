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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LandlockState {
    /// Every requested restriction is in force.
    Enforced,
    /// The kernel supports only some of the requested restrictions; those are in force.
    Partial,
    /// The kernel has no Landlock: nothing is restricted.
    NotEnforced,
    /// Not requested (`[exec] sandbox = "off"`).
    Off,
}

/// What was set up around the command just before it started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxReport {
    /// The ruleset's state.
    pub landlock: LandlockState,
    /// The kernel's Landlock ABI (0: none).
    pub abi: u8,
    /// Writes are confined to the allowed paths.
    pub write_confined: bool,
    /// TCP connect and bind are refused (only when `network = "deny"` was asked).
    pub network_denied: bool,
    /// Signals to processes outside the command's own tree are refused.
    pub signals_scoped: bool,
    /// Capabilities removed from the command (running as root), by name.
    pub dropped_capabilities: Vec<String>,
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
            },
            Report::Sandbox(SandboxReport {
                landlock: LandlockState::Partial,
                abi: 5,
                write_confined: true,
                network_denied: true,
                signals_scoped: false,
                dropped_capabilities: vec!["CAP_SYS_ADMIN".into()],
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
}
