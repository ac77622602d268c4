//! The notes about protections that are not in force for a command, from the launcher's
//! reports. Each is said once to the model (per tool) and once in the log (per
//! process), never silently skipped.

use super::report::{ContainmentMode, LandlockState, Report, SandboxReport};
use super::run::{Ending, RunOutcome};
use super::{ExecTool, NetworkMode, SandboxMode};
use std::sync::atomic::{AtomicBool, Ordering};

/// A protection that can be missing.
#[derive(Clone, Copy, Debug)]
enum Gap {
    Landlock,
    Network,
    Signals,
    AbstractSockets,
    Containment,
    Mounts,
    Capabilities,
    Processes,
    Unguarded,
    Setid,
}

const GAPS: usize = 10;

/// Which missing protections were already mentioned to the model.
#[derive(Debug, Default)]
pub(super) struct Noted([AtomicBool; GAPS]);

/// Which were already logged by this process.
static LOGGED: [AtomicBool; GAPS] = [const { AtomicBool::new(false) }; GAPS];

/// Logs `message` the first time `flag` is seen in this process.
pub(crate) fn warn_once(flag: &AtomicBool, message: &str) {
    if !flag.swap(true, Ordering::AcqRel) {
        tracing::warn!("exec: {message}");
    }
}

/// The notes being written for one result.
struct Notes<'a> {
    noted: &'a Noted,
    notes: &'a mut Vec<String>,
}

impl Notes<'_> {
    fn once(&mut self, gap: Gap, note: String) {
        warn_once(&LOGGED[gap as usize], &note);
        if !self.noted.0[gap as usize].swap(true, Ordering::AcqRel) {
            self.notes.push(format!("Note: {note}"));
        }
    }
}

impl ExecTool {
    /// Notes about protections that are not in force, each once; `unguarded`: the
    /// protected paths were neither held nor recorded for this command. Returns (the
    /// command did not run because the sandbox could not be set up, Landlock was in
    /// force).
    pub(super) fn sandbox_notes(
        &self,
        outcome: &RunOutcome,
        unguarded: bool,
        notes: &mut Vec<String>,
    ) -> (bool, bool) {
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
        let mut said = Notes {
            noted: &self.noted,
            notes,
        };
        let sandboxed = self.config.sandbox == SandboxMode::WorkspaceWrite;
        let (user, netns, mounted) = match &reports.containment {
            Some(Report::Containment {
                user_namespace,
                network_namespace,
                mounts,
                ..
            }) => (*user_namespace, *network_namespace, mounts.is_some()),
            _ => (false, false, false),
        };
        if sandboxed {
            self.landlock_notes(sandbox, netns, &mut said);
            if !mounted && self.config.pid_namespace {
                said.once(
                    Gap::Mounts,
                    "commands get no mount namespace here, so host unix sockets are not \
                     masked, written files may keep set-user-ID bits, and protected paths \
                     are checked only after each command (changes are put back)."
                        .into(),
                );
            }
            if unguarded {
                said.once(
                    Gap::Unguarded,
                    "the protected paths (git configuration and hooks, .claw-tui, \
                     .mcp.json, ...) could not be made read-only for this command, and were \
                     not checked after it."
                        .into(),
                );
            }
            if let Some(caps) = sandbox.capabilities.filter(|c| !c.holds_none()) {
                said.once(
                    Gap::Capabilities,
                    format!(
                        "commands still hold capabilities here (effective {:#x}, bounding \
                         {:#x}, no_new_privs {}).",
                        caps.effective, caps.bounding, caps.no_new_privs
                    ),
                );
            }
            if !sandbox.setid_refused {
                said.once(
                    Gap::Setid,
                    "commands can make set-user-ID files here (no seccomp filter for this \
                     kernel or architecture): one left in the workspace works for whoever \
                     runs it outside the sandbox."
                        .into(),
                );
            }
            if sandbox.limits.processes.is_some() && !sandbox.limits.processes_enforced {
                let why = if user {
                    "the kernel does not apply it"
                } else {
                    "root outside a user namespace is exempt"
                };
                said.once(
                    Gap::Processes,
                    format!("the process limit is not enforced ({why})."),
                );
            }
        }
        if let Some(Report::Containment {
            mode: ContainmentMode::Subreaper,
            fallback_reason: Some(why),
            ..
        }) = &reports.containment
        {
            said.once(
                Gap::Containment,
                format!(
                    "commands do not get their own namespaces ({why}); their processes are \
                     still killed at the time limit."
                ),
            );
        }
        let enforced = matches!(
            sandbox.landlock,
            LandlockState::Enforced | LandlockState::Partial
        );
        (false, sandboxed && enforced)
    }

    fn landlock_notes(&self, sandbox: &SandboxReport, netns: bool, said: &mut Notes<'_>) {
        if sandbox.landlock == LandlockState::NotEnforced {
            said.once(
                Gap::Landlock,
                "this kernel does not support Landlock, so commands run without the \
                 filesystem sandbox."
                    .into(),
            );
            return;
        }
        let deny = self.config.network == NetworkMode::Deny;
        if deny && !netns {
            said.once(
                Gap::Network,
                if sandbox.network_denied {
                    "[exec] network = \"deny\" gets no network namespace here: only TCP is \
                     refused (by Landlock); UDP and unix sockets still reach the host."
                        .to_owned()
                } else {
                    format!(
                        "[exec] network = \"deny\" is not enforced: no network namespace \
                         here, and this kernel's Landlock (ABI {}) cannot restrict TCP (ABI \
                         4 can).",
                        sandbox.abi
                    )
                },
            );
        }
        if !sandbox.signals_scoped {
            said.once(
                Gap::Signals,
                format!(
                    "signals to processes outside the command are not refused: this \
                     kernel's Landlock (ABI {}) cannot scope them (ABI 6 can).",
                    sandbox.abi
                ),
            );
        }
        if !sandbox.abstract_sockets_scoped && !netns {
            said.once(
                Gap::AbstractSockets,
                format!(
                    "abstract unix sockets of the host are reachable: this kernel's \
                     Landlock (ABI {}) cannot scope them (ABI 6 can).",
                    sandbox.abi
                ),
            );
        }
    }
}
