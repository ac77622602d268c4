//! The `exec` tool: runs `sh -c COMMAND` in the workspace, behind layers of defence.
//!
//! 1. Deny rules ([`check_deny_rules`]) refuse catastrophic commands outright.
//! 2. The working directory must stay inside the workspace.
//! 3. A time limit, a cap on the output kept, and middle truncation of what the model
//!    receives ([`truncate_middle`]).
//! 4. Every command runs under the sandbox launcher ([`sandbox_launcher_main`]), never
//!    in claw-tui itself: its own namespaces (or a subreaper) so that no process it
//!    starts outlives the call's time limit, an abort or claw-tui. With `[exec] sandbox
//!    = "workspace-write"`: no capabilities at all, resource limits, a Landlock ruleset
//!    (writes only in the workspace, its `$TMPDIR` ([`private_temp_dir`]) and
//!    `writable_paths`; signals and abstract sockets only within the command), and a
//!    view of the file system with the protected paths read-only (protect.rs), the
//!    host's unix sockets masked and the writable paths `nosuid`; with `network =
//!    "deny"` a network namespace with only its loopback.
//! 5. Secrets ([`EnvPolicy`]: `*_KEY`, `*_TOKEN`, `AWS_*`, ... and `[exec] scrub_env`)
//!    and variables that lead to host services ([`HOST_SERVICE_ENV`]) are removed from
//!    the environment of the launcher and so of the command; claw-tui itself is not
//!    dumpable ([`protect_process`]).
//! 6. Approval (`[exec] approval`), enforced in front of the tool by the tool policy
//!    (`crate::policy`) for every agent.
//!
//! Output streams as `tool_execution_update` events whose `partial` is
//! `{"stdout": "...", "stderr": "..."}`: the complete lines since the previous update
//! (a key only when that stream has lines), at most 20 updates per second. The final
//! result has stdout, then a `[stderr]` line and stderr, then bracketed status lines.

mod approval;
mod background;
mod config;
mod deny;
mod env;
mod helper;
mod launcher;
mod notes;
mod output;
mod protect;
mod report;
mod result;
mod run;
mod running;
mod setup_error;
mod shell;
mod spec;
mod tempdir;
mod terminal;
mod words;

pub use approval::{
    ALWAYS_DENY_REASON, ApprovalAsker, ApprovalDecision, ApprovalMode, ApprovalRequest, Approver,
    NOBODY_TO_ASK_REASON, USER_DENIED_REASON,
};
pub(crate) use approval::{ApprovalGate, GateCall};
pub use background::{CommandsGuard, stop_commands, stop_commands_and_report};
pub use config::{ExecConfig, NetworkMode, SandboxMode};
pub use deny::{Refusal, check as check_deny_rules};
pub use env::{
    DEFAULT_SCRUB_ENV, EnvPatternError, EnvPolicy, HOST_SERVICE_ENV, is_secret_env_name,
};
pub use helper::{HelperError, HelperOutput, HelperRunner, edit_env};
pub use launcher::{SANDBOX_SUBCOMMAND, sandbox_launcher_main};
pub use output::{KEEP_HEAD_CHARS, KEEP_TAIL_CHARS, MAX_RESULT_CHARS, truncate_middle};
pub use report::{
    CapabilityState, ContainmentMode, LandlockState, LimitsReport, MountReport, Report,
    SandboxReport,
};
pub use running::{Quiet, Running};
pub use setup_error::SetupError;
pub use shell::replace_words;
pub use tempdir::{PrivateTempDir, private_temp_dir};
pub use terminal::{CommandTerminal, TerminalRun};

use crate::args;
use async_trait::async_trait;
use claw_agent::{ToolResult, ToolSpec, ToolUpdates, TypedTool};
use launcher::LauncherOptions;
use run::RunSpec;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The tool's name.
pub const EXEC_TOOL_NAME: &str = "exec";

/// Every word of the shell script `script` as written (quotes removed), nested scripts
/// (`$(...)`, here-documents) included, redirection targets (written, not run) left
/// out: to find the files a hook's command runs.
pub fn script_words(script: &str) -> Vec<String> {
    let parsed = shell::parse(script);
    let mut words: Vec<String> = parsed.segments.into_iter().flat_map(|s| s.words).collect();
    words.extend(parsed.nested.iter().flat_map(|n| script_words(n)));
    words
}

/// Makes the claw-tui process non-dumpable: its memory and `/proc/PID/environ` are then
/// out of reach of other processes of the same user without `CAP_SYS_PTRACE` (which
/// commands never have). Call it first thing in `main`.
pub fn protect_process() {
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        tracing::warn!("cannot make claw-tui non-dumpable: {e}");
    }
}

/// The `exec` tool for one workspace.
#[derive(Debug)]
pub struct ExecTool {
    workspace: PathBuf,
    config: ExecConfig,
    env: EnvPolicy,
    spec: ToolSpec,
    /// Which missing protections the model was told about.
    noted: notes::Noted,
    /// Set once unusable `writable_paths` were logged.
    paths_logged: AtomicBool,
    /// Set once unusable `allow_sockets` were logged.
    sockets_logged: AtomicBool,
    /// Workspace files something outside the sandbox runs (hooks, trusted MCP servers).
    pinned: Vec<PathBuf>,
    /// claw-tui's own directories, held read-only around commands.
    own_dirs: Vec<PathBuf>,
    /// Whether the launcher's mounts held so far (`spec::mounts`).
    mounts: AtomicU8,
    /// What the check after a command's background processes found, for the next result.
    pending: Arc<Mutex<Vec<String>>>,
    /// The commands this tool has running, and what keeps new ones from starting.
    running: Running,
    /// The terminal commands run in instead of the sandbox, with the spec saying so
    /// (`[acp] editor_terminal`).
    terminal: std::sync::OnceLock<(Arc<dyn CommandTerminal>, ToolSpec)>,
}

/// The arguments of `exec`; unknown ones are refused (`additionalProperties: false`).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecArgs {
    /// The shell command, run with `sh -c`.
    pub command: String,
    /// Working directory inside the workspace; relative to the workspace root.
    pub cwd: Option<String>,
    /// Time limit in seconds
    #[schemars(range(min = 1))]
    pub timeout: Option<u64>,
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
             `timeout` is in seconds (default {}, max {}); when it passes, the command and \
             every process it started are killed, including processes it left running in \
             the background after it exited. Output over {MAX_RESULT_CHARS} characters \
             keeps the first and last {KEEP_HEAD_CHARS}. There is no stdin, so interactive \
             commands fail; start a server in the background with output redirected to a \
             file and a `timeout` long enough for the work that needs it. {}",
            config.default_timeout_secs,
            config.max_timeout_secs,
            spec::sandbox_description(&config),
        );
        let mut parameters = args::schema::<ExecArgs>();
        // The numbers are the config's, so they are added here rather than in the doc.
        if let Some(Value::String(timeout)) =
            parameters.pointer_mut("/properties/timeout/description")
        {
            timeout.push_str(&format!(
                " (default {}, max {}).",
                config.default_timeout_secs, config.max_timeout_secs
            ));
        }
        let spec = ToolSpec::new(
            EXEC_TOOL_NAME,
            "Run command",
            description.trim_end(),
            parameters,
        );
        Self {
            workspace: workspace.into(),
            env: config.env_policy(),
            config,
            spec,
            noted: notes::Noted::default(),
            paths_logged: AtomicBool::new(false),
            sockets_logged: AtomicBool::new(false),
            pinned: Vec::new(),
            own_dirs: Vec::new(),
            mounts: AtomicU8::new(spec::mounts::UNKNOWN),
            pending: Arc::default(),
            running: Running::default(),
            terminal: std::sync::OnceLock::new(),
        }
    }

    /// This tool, with `paths` (absolute: workspace files that a hook or a trusted MCP
    /// server runs) read-only to commands as well.
    pub fn with_pinned(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        self.pinned.extend(paths);
        self
    }

    /// This tool, with claw-tui's own directories `dirs` (config, data, state) read-only
    /// to commands where a writable path holds them.
    pub fn with_own_dirs(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        self.own_dirs.extend(dirs);
        self
    }

    /// The commands this tool has running (with the processes they left behind).
    pub fn running(&self) -> Running {
        self.running.clone()
    }

    /// The configuration in use.
    pub fn config(&self) -> &ExecConfig {
        &self.config
    }

    /// What runs claw-tui's own helper programs the way this tool runs commands.
    pub fn helper(&self) -> HelperRunner {
        HelperRunner::new(&self.config)
    }

    /// Whether a call with (checked) `args` passes this tool's own gates (its arguments,
    /// the deny rules, the working directory): `Err` is the result the call would end
    /// with, and nothing was run.
    pub fn check(&self, args: &Value) -> Result<(), ToolResult> {
        let args = args::read::<ExecArgs>(args.clone())
            .map_err(|problem| ToolResult::error(problem.to_string()))?;
        self.admit(args).map(|_| ())
    }

    /// The call's request and directories, or the result refusing it.
    fn admit(&self, args: ExecArgs) -> Result<(Request, PathBuf, PathBuf), ToolResult> {
        let request = self
            .parse(args)
            .map_err(|problem| ToolResult::error(problem.to_string()))?;
        if let Err(refusal) = deny::check(&request.command) {
            return Err(ToolResult::error(refusal.message()).with_details(json!({
                "command": request.command,
                "refused": refusal.rule,
            })));
        }
        match self.resolve_cwd(request.cwd.as_deref()) {
            Ok((root, cwd)) => Ok((request, root, cwd)),
            Err(problem) => Err(ToolResult::error(problem.to_string()).with_details(json!({
                "command": request.command,
                "refused": "cwd",
            }))),
        }
    }

    fn parse(&self, args: ExecArgs) -> Result<Request, args::ArgsError> {
        let ExecArgs {
            command,
            cwd,
            timeout,
        } = args;
        args::non_blank("command", &command)?;
        let max = self.config.max_timeout_secs.max(1);
        let wanted = timeout.unwrap_or(self.config.default_timeout_secs).max(1);
        Ok(Request {
            command,
            cwd: args::given(cwd),
            timeout_secs: wanted.min(max),
            timeout_capped: wanted > max,
        })
    }

    /// The canonical workspace root and the canonical working directory inside it.
    fn resolve_cwd(&self, cwd: Option<&str>) -> Result<(PathBuf, PathBuf), SetupError> {
        let root = self
            .workspace
            .canonicalize()
            .map_err(|source| SetupError::Workspace {
                workspace: self.workspace.clone(),
                source,
            })?;
        let Some(cwd) = cwd else {
            return Ok((root.clone(), root));
        };
        let resolved = match root.join(cwd).canonicalize() {
            Ok(resolved) => resolved,
            Err(source) => {
                return Err(SetupError::CwdUnusable {
                    cwd: cwd.to_owned(),
                    root,
                    source,
                });
            }
        };
        if !resolved.starts_with(&root) {
            return Err(SetupError::CwdOutside {
                cwd: cwd.to_owned(),
                resolved,
                root,
            });
        }
        if !resolved.is_dir() {
            return Err(SetupError::CwdNotADirectory {
                cwd: cwd.to_owned(),
            });
        }
        Ok((root, resolved))
    }
}

/// How a user-configured command (a hook) ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookRun {
    /// What it wrote to stdout (at most 1 MiB kept).
    pub stdout: String,
    /// What it wrote to stderr (at most 1 MiB kept).
    pub stderr: String,
    /// Its exit code, when it exited normally.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Whether the time limit passed (everything it started was killed).
    pub timed_out: bool,
}

/// Runs `sh -c command` in `cwd` the way hooks run: under the launcher without Landlock
/// or namespaces (the user's own command, like a git hook, may write and connect where
/// the user can; it keeps the capabilities that do not reach other processes or the
/// kernel), with `env` (already without secrets) and `stdin`, and with every process it
/// starts killed at `timeout` or when `cancel` fires.
pub async fn run_hook_command(
    launcher: &Path,
    command: &str,
    cwd: &Path,
    env: Vec<(OsString, OsString)>,
    stdin: Vec<u8>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> std::io::Result<HookRun> {
    let spec = RunSpec {
        launcher: launcher.to_path_buf(),
        options: LauncherOptions {
            status_fd: Some(launcher::STATUS_FD),
            timeout: Some(timeout),
            landlock: false,
            namespaces: false,
            keep_capabilities: true,
            program: ["sh", "-c", command].map(OsString::from).to_vec(),
            ..LauncherOptions::default()
        },
        cwd: cwd.to_path_buf(),
        env,
        timeout,
        max_output_bytes: 2 * 1024 * 1024,
        stdin: Some(stdin),
        live: None,
    };
    let started = std::time::Instant::now();
    let outcome = run::run(spec, cancel, &ToolUpdates::discard()).await?;
    if let Some(reason) = &outcome.reports.failed {
        return Err(std::io::Error::other(reason.clone()));
    }
    // On a loaded machine the launcher's own time limit can kill the hook before this
    // side's timer is looked at: a hook killed after its limit was killed by the limit.
    let sigkill = nix::sys::signal::Signal::SIGKILL as i32;
    let killed = outcome.signal() == Some(sigkill) || outcome.exit_code() == Some(128 + sigkill);
    Ok(HookRun {
        stdout: outcome.stdout.text(),
        stderr: outcome.stderr.text(),
        code: outcome.exit_code(),
        signal: outcome.signal(),
        timed_out: matches!(
            outcome.ending,
            run::Ending::TimedOut | run::Ending::Cancelled
        ) || (killed && started.elapsed() >= timeout),
    })
}

#[async_trait]
impl TypedTool for ExecTool {
    type Args = ExecArgs;

    fn spec(&self) -> &ToolSpec {
        self.current_spec()
    }

    /// A blank command, a deny rule or a working directory outside the workspace.
    fn refusal(&self, args: &ExecArgs) -> Option<ToolResult> {
        self.admit(args.clone()).err()
    }

    async fn run(
        &self,
        _call_id: &str,
        args: ExecArgs,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> ToolResult {
        let (request, root, cwd) = match self.admit(args) {
            Ok(prepared) => prepared,
            Err(refused) => return refused,
        };
        if let Some(terminal) = self.terminal() {
            return self
                .run_in(terminal.as_ref(), &request, &cwd, &cancel, &updates)
                .await;
        }
        let spec::Prepared {
            spec,
            watch,
            guards,
            recorded,
            separated,
        } = match self.prepare(&request, &root, cwd.clone()) {
            Ok(prepared) => prepared,
            Err(problem) => return ToolResult::error(problem.to_string()),
        };
        let program = spec.launcher.clone();
        // Registered before it starts: if claw-tui exits meanwhile, it is stopped and
        // checked on the way out; if this call is dropped, it is checked once stopped.
        let counted = self.running.start().await;
        let live = background::Live::register(watch, counted);
        let unsettled = background::Unsettled::new(live.clone(), self.pending.clone());
        let spec = run::RunSpec {
            live: Some(live.clone()),
            ..spec
        };
        let started = Instant::now();
        let mut outcome = match run::run(spec, &cancel, &updates).await {
            Ok(outcome) => outcome,
            Err(e) => {
                unsettled.disarm();
                live.finish();
                return ToolResult::error(format!(
                    "Could not run the command: starting {} failed ({e}). Tell the user.",
                    program.display()
                ));
            }
        };
        let took = started.elapsed();
        let after = result::Aftermath {
            guarded: self.note_mounts(outcome.reports.containment.as_ref(), guards) || recorded,
            settled: separated.into_iter().chain(live.settle()).collect(),
            earlier: std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner())),
        };
        unsettled.disarm();
        match outcome.finished.take() {
            Some(finished) => {
                background::watch_until_finished(live, finished, self.pending.clone());
            }
            None => live.finish(),
        }
        self.result(&request, &cwd, outcome, took, after)
    }
}
