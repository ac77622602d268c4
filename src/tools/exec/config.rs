//! The `[exec]` section of the config file.

use super::approval::ApprovalMode;
use super::env::{EnvPatternError, EnvPolicy};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[exec] sandbox`: how commands are confined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes only in the workspace, the private temp dir and `writable_paths`; signals
    /// and (with `network = "deny"`) TCP confined too; own pid namespace (Linux only).
    WorkspaceWrite,
    /// No Landlock and no namespaces. Secrets are still removed and every process is
    /// still killed at the time limit.
    Off,
}

impl Default for SandboxMode {
    fn default() -> Self {
        if cfg!(target_os = "linux") {
            Self::WorkspaceWrite
        } else {
            Self::Off
        }
    }
}

/// `[exec] network`: whether sandboxed commands may open TCP connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkMode {
    /// TCP connect and bind are allowed.
    #[default]
    Allow,
    /// TCP connect and bind are refused (Landlock ABI 4 and later).
    Deny,
}

/// The `[exec]` section of the config file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExecConfig {
    /// Filesystem sandbox for commands.
    pub sandbox: SandboxMode,
    /// Whether commands need the user's approval (enforced by the tool policy).
    pub approval: ApprovalMode,
    /// Time limit when the call gives none, in seconds.
    pub default_timeout_secs: u64,
    /// Largest time limit a call may ask for, in seconds.
    pub max_timeout_secs: u64,
    /// Output bytes kept per command (stdout and stderr together); the rest is counted.
    pub max_output_bytes: usize,
    /// TCP access of sandboxed commands.
    pub network: NetworkMode,
    /// More paths sandboxed commands may write beneath (absolute, or relative to the
    /// workspace), e.g. `"/dev/shm"` for POSIX shared memory or `"~/.cache/pip"`.
    pub writable_paths: Vec<PathBuf>,
    /// More environment variables to keep from commands: names or globs (`*`, `?`),
    /// matched without regard to case, on top of the built-in secret patterns.
    pub scrub_env: Vec<String>,
    /// Variables passed to commands even though they look like secrets (names or globs).
    pub pass_env: Vec<String>,
    /// Run each command in its own pid namespace (it sees only its own processes); when
    /// false, or when the kernel refuses, the launcher kills the tree as a subreaper.
    pub pid_namespace: bool,
    /// The sandbox launcher executable; default: the running claw-tui binary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launcher: Option<PathBuf>,
}

impl Default for ExecConfig {
    fn default() -> Self {
        Self {
            sandbox: SandboxMode::default(),
            approval: ApprovalMode::default(),
            default_timeout_secs: 30,
            max_timeout_secs: 600,
            max_output_bytes: 2 * 1024 * 1024,
            network: NetworkMode::default(),
            writable_paths: Vec::new(),
            scrub_env: Vec::new(),
            pass_env: Vec::new(),
            pid_namespace: true,
            launcher: None,
        }
    }
}

impl ExecConfig {
    /// Checks what serde cannot: the environment patterns.
    pub fn validate(&self) -> Result<(), EnvPatternError> {
        EnvPolicy::new(&self.scrub_env, &self.pass_env).map(drop)
    }

    /// The environment policy of this config (an unusable pattern is skipped; see
    /// [`ExecConfig::validate`]).
    pub fn env_policy(&self) -> EnvPolicy {
        EnvPolicy::new(&self.scrub_env, &self.pass_env)
            .unwrap_or_else(|_| EnvPolicy::lenient(&self.scrub_env, &self.pass_env))
    }
}
