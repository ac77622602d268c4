//! The `[exec]` section of the config file.

use super::approval::ApprovalMode;
use super::env::{EnvPatternError, EnvPolicy};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[exec] sandbox`: how commands are confined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes only in the workspace, the private temp dir and `writable_paths`, the
    /// workspace's protected configuration read-only; no capabilities, resource limits,
    /// host unix sockets masked, signals confined; own namespaces (Linux only).
    WorkspaceWrite,
    /// No Landlock and no namespaces. Secrets and host-service variables are still
    /// removed, the capabilities that reach other processes or the kernel are still
    /// dropped, and every process is still killed at the time limit.
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

/// `[exec] network`: whether sandboxed commands reach the network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkMode {
    /// The host's network (host unix sockets stay masked all the same).
    #[default]
    Allow,
    /// No network at all: a network namespace of the command's own with only its
    /// loopback. Where namespaces are unavailable, Landlock (ABI 4) refuses TCP only.
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
    /// Network access of sandboxed commands.
    pub network: NetworkMode,
    /// Host unix sockets (or directories of them) sandboxed commands may still reach,
    /// e.g. `"~/.ssh/agent.sock"` or `"/run/docker.sock"` (absolute, `~/`, or relative
    /// to the workspace). All others are masked.
    pub allow_sockets: Vec<PathBuf>,
    /// Processes and threads a sandboxed command may have at once (0: no limit).
    pub max_processes: u64,
    /// Address space per process of a sandboxed command, in MiB (0: no limit).
    pub max_memory_mib: u64,
    /// Size of the command's own `$TMPDIR`, a fresh tmpfs for each command, in MiB (0:
    /// the private temp dir shared by every command of this claw-tui, without a limit).
    pub tmp_size_mib: u64,
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
            allow_sockets: Vec::new(),
            max_processes: 4096,
            max_memory_mib: 16 * 1024,
            tmp_size_mib: 1024,
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
