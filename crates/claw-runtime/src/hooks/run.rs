//! Running one hook: its input as one JSON object on stdin, and what its exit and its
//! stdout mean.
//!
//! - exit 0 and nothing on stdout: go on;
//! - exit 0 and a JSON object on stdout: a decision (read by the caller);
//! - exit 2: block, with stderr as the reason (the convention other agents' hooks use);
//! - any other exit, a timeout, a signal, stdout that is not a JSON object, or a
//!   command that cannot start: the hook failed, the caller goes on and warns;
//! - the caller's cancellation (the user interrupted the run) kills it: cancelled.

use super::checked::Copies;
use super::config::HookCommand;
use crate::tools::exec::{EnvPolicy, private_temp_dir, run_hook_command, script_words};
use crate::trust::Trust;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The exit code that blocks.
pub const BLOCK_EXIT_CODE: i32 = 2;
/// How much of a hook's stderr a warning quotes.
const QUOTED_STDERR: usize = 300;

/// What one hook said.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Outcome {
    /// Exit 0, nothing on stdout.
    Continue,
    /// Exit 0 with this JSON object on stdout.
    Json(Map<String, Value>),
    /// Exit 2: block, for this reason (its stderr).
    Block(String),
    /// The caller was cancelled while it ran; it was killed with what it started.
    Cancelled,
    /// It was not run: a workspace file its command names holds content the user has not
    /// trusted (why, for the user and the model).
    Untrusted(String),
    /// It failed: why, for the user; its stderr goes to the log.
    Failed {
        /// What went wrong.
        why: String,
        /// What it wrote to stderr.
        stderr: String,
    },
}

/// Where and how hooks run.
#[derive(Clone, Debug)]
pub(crate) struct Runner {
    /// The sandbox launcher (the claw-tui binary): kills a hook's whole process tree.
    pub launcher: Option<PathBuf>,
    /// The working directory.
    pub workspace: PathBuf,
    /// Which environment variables are secrets (exec's policy).
    pub env: EnvPolicy,
    /// Whether the workspace files a hook's command names hold trusted content.
    pub trust: Trust,
}

/// A hook's command as the trust sees it: its words, run in `workspace` (the doctor
/// lists the files a hook runs with it).
pub fn trust_runner(command: &str, workspace: &Path) -> crate::trust::Runner {
    crate::trust::Runner {
        label: format!("the hook `{}`", crate::text::clip(command, 80)),
        words: script_words(command),
        cwd: workspace.to_path_buf(),
    }
}

impl Runner {
    /// Runs `hook` with `input` on stdin; `cancel` kills it.
    pub(crate) async fn run(
        &self,
        hook: &(dyn HookCommand + Sync),
        input: &Value,
        cancel: &CancellationToken,
    ) -> Outcome {
        if cancel.is_cancelled() {
            return Outcome::Cancelled;
        }
        let runner = trust_runner(hook.command(), &self.workspace);
        let checked = match self.trust.check_blocking(&runner).await {
            Ok(checked) => checked,
            Err(untrusted) => return Outcome::Untrusted(untrusted.to_string()),
        };
        // The workspace files it runs, run from the bytes just checked.
        let copies = match Copies::make(checked, self.trust.data_dir()) {
            Ok(copies) => copies,
            Err(e) => return failed(format!("cannot copy the files it runs ({e})")),
        };
        let command = match copies.rewrite(hook.command(), &self.workspace) {
            Ok(command) => command,
            Err(stuck) => {
                return Outcome::Untrusted(format!(
                    "{} was not run: it names {} inside a here-document or escaped \
                     backticks, where claw-tui cannot run the copy it checked; name the \
                     file as a word of the command itself",
                    runner.label,
                    stuck.join(", ")
                ));
            }
        };
        let launcher = match &self.launcher {
            Some(path) => path.clone(),
            None => match std::env::current_exe() {
                Ok(path) => path,
                Err(e) => return failed(format!("cannot find the claw-tui executable ({e})")),
            },
        };
        let tmpdir = match private_temp_dir() {
            Ok(dir) => dir,
            Err(e) => return failed(format!("cannot make the private temp dir ({e})")),
        };
        let env = self.env.command_env(std::env::vars_os(), &tmpdir);
        let mut stdin = input.to_string().into_bytes();
        stdin.push(b'\n');
        let timeout = Duration::from_secs(hook.timeout_secs());
        let run = run_hook_command(
            &launcher,
            &command,
            &self.workspace,
            env,
            stdin,
            timeout,
            cancel,
        )
        .await;
        if cancel.is_cancelled() {
            return Outcome::Cancelled;
        }
        let run = match run {
            Ok(run) => run,
            Err(e) => return failed(format!("it could not be started: {e}")),
        };
        let stderr = run.stderr.trim().to_owned();
        if run.timed_out {
            return Outcome::Failed {
                why: format!(
                    "it did not finish within {} s and was killed with everything it started",
                    hook.timeout_secs()
                ),
                stderr,
            };
        }
        match (run.code, run.signal) {
            (Some(0), _) => {}
            (Some(BLOCK_EXIT_CODE), _) => return Outcome::Block(stderr),
            (Some(code), _) => {
                return Outcome::Failed {
                    why: format!("it exited with code {code}{}", quote(&stderr)),
                    stderr,
                };
            }
            (None, Some(signal)) => {
                return Outcome::Failed {
                    why: format!("it was killed by signal {signal}"),
                    stderr,
                };
            }
            (None, None) => {
                return Outcome::Failed {
                    why: "its exit status is unknown".into(),
                    stderr,
                };
            }
        }
        let stdout = run.stdout.trim();
        if stdout.is_empty() {
            return Outcome::Continue;
        }
        match serde_json::from_str::<Value>(stdout) {
            Ok(Value::Object(map)) => Outcome::Json(map),
            Ok(_) => Outcome::Failed {
                why: "its stdout is JSON but not an object".into(),
                stderr,
            },
            Err(e) => Outcome::Failed {
                why: format!("its stdout is not JSON ({e})"),
                stderr,
            },
        }
    }
}

fn failed(why: String) -> Outcome {
    Outcome::Failed {
        why,
        stderr: String::new(),
    }
}

/// `: <the first part of stderr>` when there is any.
fn quote(stderr: &str) -> String {
    if stderr.is_empty() {
        return String::new();
    }
    format!(
        ": {}",
        crate::text::clip(&stderr.replace('\n', " "), QUOTED_STDERR)
    )
}

/// The reason a block gives: its text, or a default naming the hook.
pub(crate) fn block_reason(reason: &str, command: &str) -> String {
    let reason = reason.trim();
    if reason.is_empty() {
        format!("the hook `{}` said no", crate::text::clip(command, 80))
    } else {
        reason.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trust_sees_what_a_command_runs_not_what_it_writes() {
        let ws = Path::new("/w");
        let words = |command: &str| trust_runner(command, ws).words;
        assert_eq!(
            words("sh .claw-tui/hooks/x.sh"),
            ["sh", ".claw-tui/hooks/x.sh"]
        );
        assert_eq!(words("cat >> notify.jsonl"), ["cat"]);
        assert_eq!(
            words("out=$(sh 'scripts/a b.sh') && ./run.sh \"$out\""),
            [
                "out=$(sh 'scripts/a b.sh')",
                "./run.sh",
                "$out",
                "sh",
                "scripts/a b.sh"
            ]
        );
    }
}
