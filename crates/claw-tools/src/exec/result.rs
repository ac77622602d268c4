//! The tool result of a run: output, then bracketed notes (sandbox problems, protected
//! paths put right, how it ended, what was dropped), and the details object.

use super::protect::Settled;
use super::report::Report;
use super::run::{Ending, RunOutcome};
use super::{
    ExecTool, KEEP_HEAD_CHARS, KEEP_TAIL_CHARS, MAX_RESULT_CHARS, Request, truncate_middle,
};
use claw_agent::ToolResult;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

/// What happened around the command besides its output.
pub(super) struct Aftermath {
    /// The protected paths were held in the command's mount namespace, or recorded
    /// before it and checked after it.
    pub guarded: bool,
    /// What the check after the command did.
    pub settled: Vec<Settled>,
    /// Notes from the checks after earlier commands' background processes.
    pub earlier: Vec<String>,
}

impl ExecTool {
    /// The result the model gets.
    pub(super) fn result(
        &self,
        request: &Request,
        cwd: &Path,
        outcome: RunOutcome,
        took: Duration,
        after: Aftermath,
    ) -> ToolResult {
        let mut body = outcome.stdout.text();
        if !outcome.stderr.is_empty() {
            if !body.is_empty() && !body.ends_with('\n') {
                body.push('\n');
            }
            body.push_str("[stderr]\n");
            body.push_str(&outcome.stderr.text());
        }
        let mut notes: Vec<String> = Vec::new();
        let (failed, sandboxed) = self.sandbox_notes(&outcome, !after.guarded, &mut notes);
        notes.extend(after.earlier);
        notes.extend(after.settled.iter().map(ToString::to_string));
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
        notes.extend(self.capped_note(request));
        let content = with_notes(&body, &notes);
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
            "protected": after.settled.iter().map(|s| json!({
                "path": s.path,
                "note": s.to_string(),
            })).collect::<Vec<_>>(),
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

impl ExecTool {
    /// The note for a request whose timeout was capped at the configured maximum.
    pub(super) fn capped_note(&self, request: &Request) -> Option<String> {
        request.timeout_capped.then(|| {
            format!(
                "The timeout was capped at {} s, the configured maximum.",
                self.config.max_timeout_secs
            )
        })
    }
}

/// A command's output as the model gets it: cut in the middle when long, `(no output)`
/// when empty, then each note on a bracketed line of its own.
pub(super) fn with_notes(output: &str, notes: &[String]) -> String {
    let mut content = truncate_middle(output, MAX_RESULT_CHARS, KEEP_HEAD_CHARS, KEEP_TAIL_CHARS);
    if content.is_empty() {
        content.push_str("(no output)");
    }
    if !content.ends_with('\n') {
        content.push('\n');
    }
    for note in notes {
        content.push_str(&format!("[{note}]\n"));
    }
    content.trim_end().to_owned()
}
