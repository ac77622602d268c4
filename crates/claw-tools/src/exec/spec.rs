//! From a validated call and the `[exec]` config to what the launcher is asked: the
//! writable paths, the protected paths it holds in place, the sockets left reachable,
//! the limits, and the scrubbed environment.

use super::launcher::{self, Guard, GuardKind, LauncherOptions, Limits};
use super::protect::{self, Watch};
use super::report::Report;
use super::run::RunSpec;
use super::{ExecTool, NetworkMode, Request, SandboxMode, SetupError, notes, private_temp_dir};
use crate::protected::Protected;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Device files a sandboxed command may write to (ptys for tools that make their own).
const WRITABLE_DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/ptmx",
    "/dev/pts",
];

const MIB: u64 = 1024 * 1024;

/// Whether the launcher's mounts held for the commands so far.
pub(super) mod mounts {
    /// Not known yet: no command has run.
    pub const UNKNOWN: u8 = 0;
    /// The protected paths were held in the command's mount namespace.
    pub const HOLD: u8 = 1;
    /// They were not (no namespaces here): everything is checked after the command.
    pub const FAIL: u8 = 2;
}

/// What the tool's description tells the model about the sandbox of `config`.
pub(super) fn sandbox_description(config: &super::ExecConfig) -> String {
    if config.sandbox == SandboxMode::Off {
        return String::new();
    }
    let mut text = String::from("Commands may write only inside the workspace and $TMPDIR");
    if config.pid_namespace && config.tmp_size_mib > 0 {
        text.push_str(&format!(
            " (a fresh {} MiB tmpfs for each command, emptied after it: keep what must last \
             in the workspace)",
            config.tmp_size_mib
        ));
    }
    text.push_str(
        ". The repository's git config, hooks and info/, .claw-tui/ (but MEMORY.md), \
         .mcp.json, .claude/ and .agents/ are read-only to commands; ones a command creates \
         are moved aside (a plain `git init` stays).",
    );
    if config.pid_namespace {
        text.push_str(
            " Commands see only their own processes and cannot reach the host's unix \
             sockets (tmux, ssh-agent, D-Bus, docker).",
        );
    }
    if config.network == NetworkMode::Deny {
        text.push_str(" There is no network: only the command's own loopback.");
    }
    text
}

/// A run and what to check after it.
pub(super) struct Prepared {
    pub spec: RunSpec,
    pub watch: Watch,
    /// How many paths the launcher was asked to hold.
    pub guards: usize,
    /// Every protected path was recorded before the command (no mounts expected).
    pub recorded: bool,
    /// Protected files whose other names were given copies of their own before it.
    pub separated: Vec<protect::Settled>,
}

impl ExecTool {
    /// The launcher's run for `request` in `cwd` (inside the workspace `root`).
    pub(super) fn prepare(
        &self,
        request: &Request,
        root: &Path,
        cwd: PathBuf,
    ) -> Result<Prepared, SetupError> {
        let launcher = match &self.config.launcher {
            Some(path) => path.clone(),
            None => std::env::current_exe().map_err(|source| SetupError::NoLauncher { source })?,
        };
        let tmpdir = private_temp_dir().map_err(|source| SetupError::NoTempDir {
            parent: std::env::temp_dir(),
            source,
        })?;
        let sandboxed = self.config.sandbox == SandboxMode::WorkspaceWrite;
        let namespaces = sandboxed && self.config.pid_namespace;
        let mut writes = vec![root.to_path_buf(), tmpdir.clone()];
        writes.extend(self.usable_paths(root, &self.config.writable_paths, &self.paths_logged));
        let fallback = !namespaces || self.mounts.load(Ordering::Acquire) != mounts::HOLD;
        let mut separated = Vec::new();
        let plan = if sandboxed {
            let mut protected = Protected::for_workspace(root);
            for path in &self.pinned {
                protected.pin(path.clone());
            }
            // A protected file with a second name where the command may write would be
            // writable through it, read-only bind or not.
            let search: Vec<PathBuf> = writes.clone();
            separated = protect::separate(&protected, &search);
            let left: Vec<String> = separated
                .iter()
                .filter(|s| matches!(s.outcome, protect::Outcome::StillLinked(_)))
                .map(ToString::to_string)
                .collect();
            if !left.is_empty() {
                return Err(SetupError::ProtectedLinked {
                    why: format!("The command was not run. {}", left.join(" ")),
                });
            }
            let mut plan = protect::plan(&protected, fallback);
            plan.guards.extend(own_dir_guards(&self.own_dirs, &writes));
            protect::Plan {
                watch: plan.watch.with_links(protected, search),
                ..plan
            }
        } else {
            protect::Plan::default()
        };
        writes.extend(WRITABLE_DEVICES.map(PathBuf::from));
        let limit = |n: u64, unit: u64| (sandboxed && n > 0).then(|| n.saturating_mul(unit));
        let timeout = Duration::from_secs(request.timeout_secs);
        let guards = plan.guards.len();
        let options = LauncherOptions {
            status_fd: Some(launcher::STATUS_FD),
            timeout: Some(timeout),
            writes,
            landlock: sandboxed,
            deny_network: self.config.network == NetworkMode::Deny,
            namespaces,
            guards: plan.guards,
            allow_sockets: self.usable_paths(
                root,
                &self.config.allow_sockets,
                &self.sockets_logged,
            ),
            tmpfs: limit(self.config.tmp_size_mib, MIB).map(|size| (tmpdir.clone(), size)),
            limits: Limits {
                processes: limit(self.config.max_processes, 1),
                address_space: limit(self.config.max_memory_mib, MIB),
            },
            keep_capabilities: !sandboxed,
            program: ["sh", "-c", request.command.as_str()]
                .map(OsString::from)
                .to_vec(),
        };
        Ok(Prepared {
            spec: RunSpec {
                launcher,
                options,
                cwd,
                env: self.env.command_env(std::env::vars_os(), &tmpdir),
                timeout,
                max_output_bytes: self.config.max_output_bytes,
                stdin: None,
                live: None,
            },
            watch: plan.watch,
            guards,
            recorded: sandboxed && fallback,
            separated,
        })
    }

    /// Remembers whether the launcher held every protected path it was asked to; true
    /// when it did (or was not asked).
    pub(super) fn note_mounts(&self, containment: Option<&Report>, guards: usize) -> bool {
        if self.config.sandbox == SandboxMode::Off {
            return true;
        }
        let held = matches!(
            containment,
            Some(Report::Containment { mounts: Some(m), .. }) if m.guarded == guards
        );
        let state = if held { mounts::HOLD } else { mounts::FAIL };
        self.mounts.store(state, Ordering::Release);
        held || guards == 0
    }

    /// Configured paths as existing absolute paths (`~/` is the home directory,
    /// relative paths start at the workspace); the others are logged once (`logged`)
    /// and skipped.
    fn usable_paths(&self, root: &Path, paths: &[PathBuf], logged: &AtomicBool) -> Vec<PathBuf> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let mut usable = Vec::new();
        let mut skipped = Vec::new();
        for path in paths {
            let expanded = match (path.strip_prefix("~"), &home) {
                (Ok(rest), Some(home)) => home.join(rest),
                _ => root.join(path),
            };
            match expanded.canonicalize() {
                Ok(path) => usable.push(path),
                Err(e) => skipped.push(format!("{} ({e})", path.display())),
            }
        }
        if !skipped.is_empty() {
            notes::warn_once(
                logged,
                &format!("[exec] paths skipped: {}", skipped.join(", ")),
            );
        }
        usable
    }
}

/// claw-tui's own directories that a command could write (beneath a writable path), held
/// read-only in its mount namespace, with each directory between the writable path and
/// them pinned (bound onto itself), so that none can be renamed away and replaced by one
/// the command fills. Only held, never watched: claw-tui itself writes them while the
/// command runs (sessions, logs), so nothing there may be put back.
fn own_dir_guards(own: &[PathBuf], writes: &[PathBuf]) -> Vec<Guard> {
    let mut guards: Vec<Guard> = Vec::new();
    for dir in own.iter().filter(|dir| dir.is_dir()) {
        let Some(top) = writes.iter().find(|w| dir.starts_with(w)) else {
            continue;
        };
        let mut above = top.clone();
        let between = dir.strip_prefix(top).ok().and_then(Path::parent);
        for part in between.into_iter().flat_map(Path::components) {
            above.push(part);
            if !guards.iter().any(|g| g.path == above) {
                guards.push(Guard {
                    path: above.clone(),
                    kind: GuardKind::Pin,
                });
            }
        }
        guards.push(Guard {
            path: dir.clone(),
            kind: GuardKind::ReadOnly,
        });
    }
    guards
}
