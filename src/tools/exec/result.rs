//! The tool result of a run: output, then bracketed notes (sandbox problems, how it
//! ended, what was dropped), and the details object.
//!
//! A protection the kernel lacks is said once to the model (per tool) and once in the
//! log (per process), never silently skipped.

use super::report::{ContainmentMode, LandlockState, Report};
use super::run::{Ending, RunOutcome};
use super::{
    ExecTool, KEEP_HEAD_CHARS, KEEP_TAIL_CHARS, MAX_RESULT_CHARS, NetworkMode, Request,
    SandboxMode, truncate_middle,
};
use crate::agent::ToolResult;
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Which missing protections were already mentioned.
#[derive(Debug, Default)]
pub(super) struct Noted {
    landlock: AtomicBool,
    network: AtomicBool,
    signals: AtomicBool,
    containment: AtomicBool,
}

/// Logs `message` the first time `flag` is seen in this process.
pub(crate) fn warn_once(flag: &AtomicBool, message: &str) {
    if !flag.swap(true, Ordering::AcqRel) {
        tracing::warn!("exec: {message}");
    }
}

static LOGGED_LANDLOCK: AtomicBool = AtomicBool::new(false);
static LOGGED_NETWORK: AtomicBool = AtomicBool::new(false);
static LOGGED_SIGNALS: AtomicBool = AtomicBool::new(false);
static LOGGED_CONTAINMENT: AtomicBool = AtomicBool::new(false);

impl ExecTool {
    /// Notes about protections that are not in force, each once. Returns (the command
    /// did not run because the sandbox could not be set up, Landlock was in force).
    fn sandbox_notes(&self, outcome: &RunOutcome, notes: &mut Vec<String>) -> (bool, bool) {
        let reports = &outcome.reports;
        if let Some(why) = &reports.failed {
            notes.push(format!(
                "The sandbox could not be set up, so the command did not run: {why}. Tell \
                 the user; they can set [exec] sandbox = \"off\"."
            ));
            return (true, false);
        }
        let killed = matches!(outcome.ending, Ending::TimedOut | Ending::Cancelled);
        let Some(sandbox) = &reports.sandbox else {
            if killed {
                return (false, false);
            }
            notes.push(format!(
                "The sandbox launcher {} did not report its status, so the command may not \
                 have run. [exec] launcher must be the claw-tui binary; tell the user.",
                self.config.launcher.as_deref().map_or_else(
                    || "(the running executable)".into(),
                    |p| p.display().to_string()
                )
            ));
            return (true, false);
        };
        let mut once = |flag: &AtomicBool, logged: &AtomicBool, note: String| {
            warn_once(logged, &note);
            if !flag.swap(true, Ordering::AcqRel) {
                notes.push(format!("Note: {note}"));
            }
        };
        let sandboxed = self.config.sandbox == SandboxMode::WorkspaceWrite;
        if sandboxed && sandbox.landlock == LandlockState::NotEnforced {
            once(
                &self.noted.landlock,
                &LOGGED_LANDLOCK,
                "this kernel does not support Landlock, so commands run without the \
                 filesystem sandbox."
                    .into(),
            );
        } else if sandboxed {
            if self.config.network == NetworkMode::Deny && !sandbox.network_denied {
                once(
                    &self.noted.network,
                    &LOGGED_NETWORK,
                    format!(
                        "[exec] network = \"deny\" is not enforced: this kernel's Landlock \
                         (ABI {}) cannot restrict TCP (ABI 4 can).",
                        sandbox.abi
                    ),
                );
            }
            if !sandbox.signals_scoped {
                once(
                    &self.noted.signals,
                    &LOGGED_SIGNALS,
                    format!(
                        "signals to processes outside the command are not refused: this \
                         kernel's Landlock (ABI {}) cannot scope them (ABI 6 can).",
                        sandbox.abi
                    ),
                );
            }
        }
        if let Some(Report::Containment {
            mode: ContainmentMode::Subreaper,
            fallback_reason: Some(why),
            ..
        }) = &reports.containment
        {
            once(
                &self.noted.containment,
                &LOGGED_CONTAINMENT,
                format!(
                    "commands do not get their own pid namespace ({why}); their processes \
                     are still killed at the time limit."
                ),
            );
        }
        let enforced = matches!(
            sandbox.landlock,
            LandlockState::Enforced | LandlockState::Partial
        );
        (false, sandboxed && enforced)
    }

    /// The result the model gets.
    pub(super) fn result(
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
        let (failed, sandboxed) = self.sandbox_notes(&outcome, &mut notes);
        let killed = matches!(outcome.ending, Ending::TimedOut | Ending::Cancelled);
        match outcome.ending {
            Ending::TimedOut => notes.push(format!(
                "Timed out after {} s: the command and every process it started were killed; \
                 the output so far is above. If it needs longer, pass a larger `timeout` (up \
                 to {} s).",
                request.timeout_secs, self.config.max_timeout_secs
            )),
            Ending::Cancelled => notes.push(
                "Cancelled by the user: the command and every process it started were killed."
                    .to_owned(),
            ),
            Ending::Exited | Ending::ExitedWithBackground { .. } => {
                if let Some(code) = outcome.exit_code() {
                    notes.push(format!("exit code: {code}"));
                } else if let Some(signal) = outcome.signal() {
                    notes.push(format!("terminated by signal {signal}"));
                }
            }
        }
        if let Ending::ExitedWithBackground { pipes_held } = outcome.ending {
            let mut note = format!(
                "The command exited; the processes it left in the background keep running \
                 until its time limit ({} s) passes, then they are killed.",
                request.timeout_secs
            );
            if pipes_held {
                note.push_str(
                    " They still hold its output pipes, so their further output is not \
                     captured: redirect a background command's output to a file, `cmd > log \
                     2>&1 &`.",
                );
            }
            notes.push(note);
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
        let containment = match &outcome.reports.containment {
            Some(Report::Containment { mode, .. }) => json!(mode),
            _ => serde_json::Value::Null,
        };
        let details = json!({
            "command": request.command,
            "cwd": cwd,
            "exit_code": outcome.exit_code(),
            "signal": outcome.signal(),
            "timed_out": outcome.ending == Ending::TimedOut,
            "cancelled": outcome.ending == Ending::Cancelled,
            "background_left": matches!(outcome.ending, Ending::ExitedWithBackground { .. }),
            "bytes_dropped": dropped,
            "sandboxed": sandboxed,
            "containment": containment,
            "sandbox_report": outcome.reports.sandbox,
            "containment_report": outcome.reports.containment,
            "timeout_secs": request.timeout_secs,
            "duration_ms": u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        });
        ToolResult {
            content,
            details,
            is_error,
            ..ToolResult::default()
        }
    }
}
