//! Commands run in a terminal outside the sandbox: an editor's (ACP's `terminal/*`),
//! when the user turns it on. `exec` keeps everything in front of the run (its
//! arguments, the deny rules, the working directory inside the workspace, and the
//! policy's approval, plan gate, hooks and checkpoints, which see the same tool), and
//! hands the run itself to the terminal: no launcher, so no Landlock, namespaces,
//! limits, protected paths or scrubbed environment. That is why it is off by default,
//! and why each such command is shown to the user first (`[acp] editor_terminal`).

use super::{ExecTool, KEEP_HEAD_CHARS, MAX_RESULT_CHARS, Request};
use async_trait::async_trait;
use claw_agent::{ToolResult, ToolSpec, ToolUpdates};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How a command in a terminal ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminalRun {
    /// What it printed (stdout and stderr as the terminal interleaves them).
    pub output: String,
    /// The terminal kept only the end of a longer output.
    pub truncated: bool,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<String>,
    /// Killed at its time limit.
    pub timed_out: bool,
    /// Killed because the call was cancelled.
    pub cancelled: bool,
}

/// A terminal that runs commands outside the sandbox.
#[async_trait]
pub trait CommandTerminal: Send + Sync {
    /// A name for the results and the model ("the editor's terminal").
    fn name(&self) -> &str;
    /// Runs `sh -c command` in `cwd` until it exits, `timeout` passes or `cancel`
    /// fires (then it is killed); `updates` may carry what the front-end shows of it.
    /// `Err` says why it could not run.
    async fn run(
        &self,
        command: &str,
        cwd: &Path,
        timeout: Duration,
        cancel: &CancellationToken,
        updates: &ToolUpdates,
    ) -> Result<TerminalRun, String>;
}

impl std::fmt::Debug for dyn CommandTerminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandTerminal")
            .field("name", &self.name())
            .finish()
    }
}

impl ExecTool {
    /// From now on, runs the commands in `terminal` instead of the sandbox, and tells
    /// the model so. Only the first terminal given is used.
    pub fn run_in_terminal(&self, terminal: Arc<dyn CommandTerminal>) {
        let description = format!(
            "Run a shell command with `sh -c` in {} (the user sees it run) and return its \
             output and exit code. `cwd` is a directory inside the workspace (relative \
             paths start at the workspace root, the default). `timeout` is in seconds \
             (default {}, max {}); when it passes, the command is killed. Output over \
             {MAX_RESULT_CHARS} characters keeps the first and last {KEEP_HEAD_CHARS}. \
             There is no stdin, so interactive commands fail.",
            terminal.name(),
            self.config.default_timeout_secs,
            self.config.max_timeout_secs,
        );
        let spec = ToolSpec {
            description,
            ..self.spec.clone()
        };
        let _ = self.terminal.set((terminal, spec));
    }

    /// The spec the model is given: the terminal's when commands run in one.
    pub(super) fn current_spec(&self) -> &ToolSpec {
        self.terminal.get().map_or(&self.spec, |(_, spec)| spec)
    }

    /// The terminal commands run in, if not the sandbox.
    pub(super) fn terminal(&self) -> Option<&Arc<dyn CommandTerminal>> {
        self.terminal.get().map(|(terminal, _)| terminal)
    }

    /// Runs an admitted `request` in `terminal`: the result as the model gets it.
    pub(super) async fn run_in(
        &self,
        terminal: &dyn CommandTerminal,
        request: &Request,
        cwd: &Path,
        cancel: &CancellationToken,
        updates: &ToolUpdates,
    ) -> ToolResult {
        let timeout = Duration::from_secs(request.timeout_secs);
        let run = match terminal
            .run(&request.command, cwd, timeout, cancel, updates)
            .await
        {
            Ok(run) => run,
            Err(why) => {
                return ToolResult::error(format!(
                    "Could not run the command in {}: {why}. Tell the user.",
                    terminal.name()
                ));
            }
        };
        let mut notes = Vec::new();
        if run.truncated {
            notes.push(format!(
                "{} kept only the end of the output",
                terminal.name()
            ));
        }
        if run.timed_out {
            notes.push(format!(
                "Timed out after {} s: the command was killed; the output so far is above.",
                request.timeout_secs
            ));
        } else if run.cancelled {
            notes.push("Cancelled by the user: the command was killed.".to_owned());
        } else if let Some(code) = run.exit_code {
            notes.push(format!("exit code: {code}"));
        } else if let Some(signal) = &run.signal {
            notes.push(format!("terminated by signal {signal}"));
        }
        notes.extend(self.capped_note(request));
        ToolResult {
            content: super::result::with_notes(&run.output, &notes),
            is_error: run.timed_out || run.cancelled || run.exit_code != Some(0),
            details: json!({
                "command": request.command,
                "cwd": cwd,
                "exit_code": run.exit_code,
                "signal": run.signal,
                "timed_out": run.timed_out,
                "cancelled": run.cancelled,
                "sandboxed": false,
                "ran_in": terminal.name(),
                "timeout_secs": request.timeout_secs,
            }),
            ..ToolResult::default()
        }
    }
}
