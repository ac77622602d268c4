//! claw-tui's own helper programs (`git`, for the checkpoints) run the way commands run,
//! only tighter: under the sandbox launcher, with exec's scrubbed environment, in their
//! own pid namespace where the kernel allows it, and with a Landlock ruleset that lets
//! them write nowhere (`/dev/null` aside) and open no TCP connection, whatever
//! `[exec] sandbox` says (that setting is about the model's commands, not claw-tui's).
//!
//! A helper reads a workspace the model can write. Whatever the workspace makes it run
//! (a repository's configured programs, should one get past the helper's own switches)
//! therefore runs with less than the model's own `exec` has: it gains the model nothing.

use super::launcher::{LauncherOptions, Limits, STATUS_FD};
use super::run::{self, RunSpec};
use super::{EnvPolicy, ExecConfig, private_temp_dir};
use claw_agent::ToolUpdates;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Most output a helper may print; more is taken as a failure.
const MAX_HELPER_OUTPUT: usize = 32 * 1024 * 1024;

/// Runs claw-tui's helper programs; cheap to clone.
#[derive(Clone, Debug)]
pub struct HelperRunner {
    launcher: Option<PathBuf>,
    env: EnvPolicy,
    namespaces: bool,
}

/// How a helper ended.
#[derive(Debug)]
pub struct HelperOutput {
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Its exit code, when it exited normally.
    pub code: Option<i32>,
    /// Whether its writes were confined (Landlock in force).
    pub confined: bool,
}

/// Why a helper gave no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum HelperError {
    /// The launcher could not be found or started.
    #[error("cannot start the sandbox launcher: {0}")]
    Start(#[from] io::Error),
    /// The launcher could not set the sandbox up.
    #[error("the sandbox could not be set up: {0}")]
    Setup(String),
    /// It did not finish within its time limit (it was killed with what it started).
    #[error("it did not finish within {0:?}")]
    TimedOut(Duration),
    /// It printed more than a helper may.
    #[error("it printed more than {MAX_HELPER_OUTPUT} bytes")]
    TooMuchOutput,
}

impl HelperRunner {
    /// Helpers launched and scrubbed as `config` launches and scrubs commands.
    pub fn new(config: &ExecConfig) -> Self {
        Self {
            launcher: config.launcher.clone(),
            env: config.env_policy(),
            namespaces: config.pid_namespace,
        }
    }

    /// Runs `program` with `args` in `cwd`. Its environment is exec's (secrets removed),
    /// passed through `env` first, which may remove and add variables.
    pub async fn run(
        &self,
        program: &str,
        args: &[&str],
        cwd: &Path,
        env: impl FnOnce(Vec<(OsString, OsString)>) -> Vec<(OsString, OsString)>,
        timeout: Duration,
    ) -> Result<HelperOutput, HelperError> {
        let launcher = match &self.launcher {
            Some(path) => path.clone(),
            None => std::env::current_exe()?,
        };
        let tmpdir = private_temp_dir()?;
        let mut command = vec![OsString::from(program)];
        command.extend(args.iter().map(OsString::from));
        let spec = RunSpec {
            launcher,
            options: LauncherOptions {
                status_fd: Some(STATUS_FD),
                timeout: Some(timeout),
                writes: vec![PathBuf::from("/dev/null")],
                landlock: true,
                deny_network: true,
                namespaces: self.namespaces,
                // Nothing to hold: a helper writes nowhere. No host socket, no capability.
                guards: Vec::new(),
                allow_sockets: Vec::new(),
                tmpfs: None,
                limits: Limits::default(),
                keep_capabilities: false,
                program: command,
            },
            cwd: cwd.to_path_buf(),
            env: env(self.env.command_env(std::env::vars_os(), &tmpdir)),
            timeout,
            max_output_bytes: MAX_HELPER_OUTPUT * 2,
            stdin: None,
            live: None,
        };
        let outcome = run::run(spec, &CancellationToken::new(), &ToolUpdates::discard()).await?;
        if let Some(reason) = outcome.reports.failed.clone() {
            return Err(HelperError::Setup(reason));
        }
        if matches!(outcome.ending, run::Ending::TimedOut) {
            return Err(HelperError::TimedOut(timeout));
        }
        let confined = outcome
            .reports
            .sandbox
            .as_ref()
            .is_some_and(|s| s.write_confined);
        let code = outcome.exit_code();
        let stdout = outcome.stdout.bytes().ok_or(HelperError::TooMuchOutput)?;
        Ok(HelperOutput {
            stdout,
            code,
            confined,
        })
    }
}

/// Leaves out of `env` every variable for which `drop` says so, then adds `set`.
pub fn edit_env(
    env: Vec<(OsString, OsString)>,
    drop: impl Fn(&str) -> bool,
    set: &[(&str, &str)],
) -> Vec<(OsString, OsString)> {
    env.into_iter()
        .filter(|(name, _)| !drop(&name.to_string_lossy()))
        .chain(
            set.iter()
                .map(|(name, value)| (OsString::from(name), OsString::from(value))),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_is_edited_as_asked() {
        let env = vec![
            (OsString::from("GIT_DIR"), OsString::from("/elsewhere")),
            (OsString::from("HOME"), OsString::from("/home/u")),
        ];
        let edited = edit_env(
            env,
            |n| n.starts_with("GIT_"),
            &[("GIT_OPTIONAL_LOCKS", "0")],
        );
        assert_eq!(
            edited,
            vec![
                (OsString::from("HOME"), OsString::from("/home/u")),
                (OsString::from("GIT_OPTIONAL_LOCKS"), OsString::from("0")),
            ]
        );
    }
}
