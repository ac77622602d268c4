//! The `exec` tool: runs `sh -c COMMAND` in the workspace, behind layers of defence.
//!
//! 1. Deny rules ([`check_deny_rules`]) refuse catastrophic commands outright.
//! 2. The working directory must stay inside the workspace.
//! 3. A time limit (killing the whole process group), a cap on the output kept, and
//!    middle truncation of what the model receives ([`truncate_middle`]).
//! 4. A Landlock sandbox (`[exec] sandbox = "workspace-write"`) that lets the command
//!    write only in the workspace and the temp dir, applied by a launcher process
//!    ([`sandbox_launcher_main`]), never to claw-tui itself.
//! 5. Secrets (`*_API_KEY`, `*_TOKEN`) are removed from the command's environment.
//! 6. Approval (`[exec] approval`), enforced in front of the tool by the tool policy
//!    (`crate::tools::policy`) for every agent.
//!
//! Output streams as `tool_execution_update` events whose `partial` is
//! `{"stdout": "...", "stderr": "..."}`: the complete lines since the previous update
//! (a key only when that stream has lines), at most 20 updates per second. The final
//! result has stdout, then a `[stderr]` line and stderr, then bracketed status lines.

mod approval;
mod deny;
mod output;
mod run;
mod sandbox;
mod shell;
mod words;

pub use approval::{
    ALWAYS_DENY_REASON, ApprovalAsker, ApprovalDecision, ApprovalMode, ApprovalRequest, Approver,
    NOBODY_TO_ASK_REASON, USER_DENIED_REASON,
};
pub(crate) use approval::{ApprovalGate, GateCall};
pub use deny::{Refusal, check as check_deny_rules};
pub use output::{KEEP_HEAD_CHARS, KEEP_TAIL_CHARS, MAX_RESULT_CHARS, truncate_middle};
pub use sandbox::{SANDBOX_SUBCOMMAND, sandbox_launcher_main};

use crate::agent::{Tool, ToolResult, ToolUpdates};
use async_trait::async_trait;
use run::{Ending, RunOutcome, RunSpec};
use sandbox::LauncherStatus;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The tool's name.
pub const EXEC_TOOL_NAME: &str = "exec";

/// Provider keys always removed from the command's environment (besides every
/// `*_API_KEY` and `*_TOKEN` variable).
pub const SCRUBBED_ENV: [&str; 3] = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "BRAVE_API_KEY"];

/// `[exec] sandbox`: how commands are confined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes only in the workspace and the temp dir (Landlock, Linux only).
    WorkspaceWrite,
    /// No sandbox.
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
            launcher: None,
        }
    }
}

/// Whether a variable holds a secret the command must not see.
pub fn is_secret_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SCRUBBED_ENV.contains(&upper.as_str())
        || upper.ends_with("_API_KEY")
        || upper.ends_with("_TOKEN")
        || upper == "API_KEY"
}

/// The `exec` tool for one workspace.
#[derive(Debug)]
pub struct ExecTool {
    workspace: PathBuf,
    config: ExecConfig,
    description: String,
    /// Set once the model was told that the kernel has no Landlock.
    unsandboxed_noted: AtomicBool,
}

/// One validated call.
struct Request {
    command: String,
    cwd: Option<String>,
    timeout_secs: u64,
    timeout_capped: bool,
}

impl ExecTool {
    /// The tool running commands in `workspace` with `config`.
    pub fn new(workspace: impl Into<PathBuf>, config: ExecConfig) -> Self {
        let description = format!(
            "Run a shell command with `sh -c` and return its output and exit code. stdout \
             comes first, then stderr after a `[stderr]` line. `cwd` is a directory inside \
             the workspace (relative paths start at the workspace root, the default). \
             `timeout` is in seconds (default {}, max {}); on timeout the command and its \
             child processes are killed. Output over {MAX_RESULT_CHARS} characters keeps \
             the first and last {KEEP_HEAD_CHARS}. There is no stdin, so interactive \
             commands fail; start long-running servers in the background with output \
             redirected to a file. {}",
            config.default_timeout_secs,
            config.max_timeout_secs,
            match config.sandbox {
                SandboxMode::WorkspaceWrite =>
                    "Commands may write only inside the workspace and the temp dir.",
                SandboxMode::Off => "",
            }
        );
        Self {
            workspace: workspace.into(),
            config,
            description: description.trim_end().to_owned(),
            unsandboxed_noted: AtomicBool::new(false),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &ExecConfig {
        &self.config
    }

    fn parse(&self, args: &Value) -> Result<Request, String> {
        let command = match args.get("command") {
            Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
            Some(Value::String(_)) => return Err("Argument \"command\" is empty.".into()),
            _ => {
                return Err(
                    "Missing required argument \"command\" (a string with the shell \
                            command to run)."
                        .into(),
                );
            }
        };
        let cwd = match args.get("cwd") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) if c.trim().is_empty() => None,
            Some(Value::String(c)) => Some(c.clone()),
            Some(_) => return Err("Argument \"cwd\" must be a string (a directory).".into()),
        };
        let requested = match args.get("timeout") {
            None | Some(Value::Null) => None,
            // Whole floats such as `5.0` count: the schema accepts them as integers.
            Some(v) => match v.as_u64().or_else(|| {
                v.as_f64()
                    .filter(|f| *f >= 1.0 && f.fract() == 0.0 && *f <= u64::MAX as f64)
                    .map(|f| f as u64)
            }) {
                Some(0) | None => {
                    return Err(format!(
                        "Argument \"timeout\" must be a whole number of seconds from 1 to {}.",
                        self.config.max_timeout_secs
                    ));
                }
                Some(n) => Some(n),
            },
        };
        let max = self.config.max_timeout_secs.max(1);
        let wanted = requested.unwrap_or(self.config.default_timeout_secs).max(1);
        Ok(Request {
            command,
            cwd,
            timeout_secs: wanted.min(max),
            timeout_capped: wanted > max,
        })
    }

    /// The canonical workspace root and the canonical working directory inside it.
    fn resolve_cwd(&self, cwd: Option<&str>) -> Result<(PathBuf, PathBuf), String> {
        let root = self.workspace.canonicalize().map_err(|e| {
            format!(
                "The workspace {} cannot be opened ({e}), so no command can run. Tell the \
                 user.",
                self.workspace.display()
            )
        })?;
        let Some(cwd) = cwd else {
            return Ok((root.clone(), root));
        };
        let resolved = root.join(cwd).canonicalize().map_err(|e| {
            format!(
                "cwd \"{cwd}\" cannot be used ({e}). Give an existing directory inside the \
                 workspace {}.",
                root.display()
            )
        })?;
        if !resolved.starts_with(&root) {
            return Err(format!(
                "cwd \"{cwd}\" resolves to {}, which is outside the workspace {}. Commands \
                 run only inside the workspace; give a directory in it (relative paths start \
                 at its root).",
                resolved.display(),
                root.display()
            ));
        }
        if !resolved.is_dir() {
            return Err(format!(
                "cwd \"{cwd}\" is not a directory. Give a directory inside the workspace."
            ));
        }
        Ok((root, resolved))
    }

    fn spec(&self, request: &Request, root: &Path, cwd: PathBuf) -> Result<RunSpec, String> {
        let shell: [&OsStr; 3] = ["sh".as_ref(), "-c".as_ref(), request.command.as_ref()];
        let (program, args, expect_status) = match self.config.sandbox {
            SandboxMode::Off => (
                PathBuf::from("sh"),
                shell[1..].iter().map(|a| a.to_os_string()).collect(),
                false,
            ),
            SandboxMode::WorkspaceWrite => {
                let launcher = match &self.config.launcher {
                    Some(path) => path.clone(),
                    None => std::env::current_exe().map_err(|e| {
                        format!(
                            "Cannot find the claw-tui executable to start the sandbox ({e}). \
                             Tell the user to set [exec] launcher, or [exec] sandbox = \"off\"."
                        )
                    })?,
                };
                let writes = sandbox::write_paths(root);
                (launcher, sandbox::launcher_args(&writes, &shell), true)
            }
        };
        let env_remove = std::env::vars_os()
            .map(|(name, _)| name)
            .filter(|name| is_secret_env_name(&name.to_string_lossy()))
            .chain(SCRUBBED_ENV.iter().map(OsString::from))
            .collect();
        Ok(RunSpec {
            program,
            args,
            cwd,
            env_remove,
            timeout: Duration::from_secs(request.timeout_secs),
            max_output_bytes: self.config.max_output_bytes,
            expect_status,
        })
    }

    fn result(
        &self,
        request: &Request,
        cwd: &Path,
        outcome: RunOutcome,
        took: Duration,
    ) -> ToolResult {
        let mut body = outcome.stdout.text();
        if !outcome.stderr.is_empty() {
            if !body.is_empty() && !body.ends_with('\n') {
                body.push('\n');
            }
            body.push_str("[stderr]\n");
            body.push_str(&outcome.stderr.text());
        }
        let mut content =
            truncate_middle(&body, MAX_RESULT_CHARS, KEEP_HEAD_CHARS, KEEP_TAIL_CHARS);
        if content.is_empty() {
            content.push_str("(no output)");
        }
        if !content.ends_with('\n') {
            content.push('\n');
        }
        let mut notes: Vec<String> = Vec::new();
        let mut failed = false;
        let killed = matches!(outcome.ending, Ending::TimedOut | Ending::Cancelled);
        let sandboxed = match (&outcome.sandbox, self.config.sandbox) {
            (_, SandboxMode::Off) => false,
            (Some(LauncherStatus::Failed(why)), _) => {
                failed = true;
                notes.push(format!(
                    "The sandbox could not be set up, so the command did not run: {why}. \
                     Tell the user; they can set [exec] sandbox = \"off\"."
                ));
                false
            }
            (Some(LauncherStatus::NotEnforced), _) => {
                if !self.unsandboxed_noted.swap(true, Ordering::AcqRel) {
                    notes.push(
                        "Note: this kernel does not support Landlock, so commands run without \
                         the filesystem sandbox."
                            .to_owned(),
                    );
                }
                false
            }
            (Some(status), _) => status.sandboxed(),
            (None, _) if killed => false,
            (None, _) => {
                failed = true;
                notes.push(format!(
                    "The sandbox launcher {} did not report its status, so the command may \
                     not have run. [exec] launcher must be the claw-tui binary; tell the user.",
                    self.config.launcher.as_deref().map_or_else(
                        || "(the running executable)".into(),
                        |p| p.display().to_string()
                    )
                ));
                false
            }
        };
        match outcome.ending {
            Ending::TimedOut => notes.push(format!(
                "Timed out after {} s: the command and all its child processes were killed; \
                 the output so far is above. If it needs longer, pass a larger `timeout` (up \
                 to {} s), or start it in the background with output redirected to a file.",
                request.timeout_secs, self.config.max_timeout_secs
            )),
            Ending::Cancelled => notes.push(
                "Cancelled by the user: the command and all its child processes were killed."
                    .to_owned(),
            ),
            Ending::Exited | Ending::ExitedWithBackground => {
                if let Some(code) = outcome.exit_code() {
                    notes.push(format!("exit code: {code}"));
                } else if let Some(signal) = outcome.signal() {
                    notes.push(format!("terminated by signal {signal}"));
                }
            }
        }
        if outcome.ending == Ending::ExitedWithBackground {
            notes.push(
                "The command exited, but background processes still hold its output pipes; \
                 their further output is not captured. Redirect a background command's output \
                 to a file: `cmd > log 2>&1 &`."
                    .to_owned(),
            );
        }
        let dropped = outcome.stdout.dropped() + outcome.stderr.dropped();
        if dropped > 0 {
            notes.push(format!(
                "{dropped} bytes of output were dropped (only {} bytes are kept: the start and \
                 the end).",
                self.config.max_output_bytes
            ));
        }
        if request.timeout_capped {
            notes.push(format!(
                "The timeout was capped at {} s, the configured maximum.",
                self.config.max_timeout_secs
            ));
        }
        for note in &notes {
            content.push_str(&format!("[{note}]\n"));
        }
        let content = content.trim_end().to_owned();
        let is_error = failed || killed || outcome.exit_code() != Some(0);
        let details = json!({
            "command": request.command,
            "cwd": cwd,
            "exit_code": outcome.exit_code(),
            "signal": outcome.signal(),
            "timed_out": outcome.ending == Ending::TimedOut,
            "cancelled": outcome.ending == Ending::Cancelled,
            "background_left": outcome.ending == Ending::ExitedWithBackground,
            "bytes_dropped": dropped,
            "sandboxed": sandboxed,
            "timeout_secs": request.timeout_secs,
            "duration_ms": u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        });
        ToolResult {
            content,
            details,
            is_error,
        }
    }
}

#[async_trait]
impl Tool for ExecTool {
    fn name(&self) -> &str {
        EXEC_TOOL_NAME
    }

    fn label(&self) -> &str {
        "Run command"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The shell command, run with `sh -c`."
                },
                "cwd": {
                    "type": "string",
                    "description": "Working directory inside the workspace; relative to the workspace root."
                },
                "timeout": {
                    "type": "integer",
                    "minimum": 1,
                    "description": format!(
                        "Time limit in seconds (default {}, max {}).",
                        self.config.default_timeout_secs, self.config.max_timeout_secs
                    )
                }
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    async fn execute(
        &self,
        _call_id: &str,
        args: Value,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> ToolResult {
        let request = match self.parse(&args) {
            Ok(request) => request,
            Err(problem) => return ToolResult::error(problem),
        };
        if let Err(refusal) = deny::check(&request.command) {
            return ToolResult::error(refusal.message()).with_details(json!({
                "command": request.command,
                "refused": refusal.rule,
            }));
        }
        let (root, cwd) = match self.resolve_cwd(request.cwd.as_deref()) {
            Ok(dirs) => dirs,
            Err(problem) => {
                return ToolResult::error(problem).with_details(json!({
                    "command": request.command,
                    "refused": "cwd",
                }));
            }
        };
        let spec = match self.spec(&request, &root, cwd.clone()) {
            Ok(spec) => spec,
            Err(problem) => return ToolResult::error(problem),
        };
        let program = spec.program.clone();
        let started = Instant::now();
        match run::run(spec, &cancel, &updates).await {
            Ok(outcome) => self.result(&request, &cwd, outcome, started.elapsed()),
            Err(e) => ToolResult::error(format!(
                "Could not run the command: starting {} failed ({e}). Tell the user.",
                program.display()
            )),
        }
    }
}
