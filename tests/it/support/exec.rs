//! Helpers for the `exec` tool tests: a tool on a temp workspace, running calls,
//! collecting streamed updates, and checking processes and kernel support.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::agent::{AgentEvent, EventSink, ToolResult, ToolUpdates};
use claw_tui::tools::exec::{ExecConfig, ExecTool};
use serde_json::Value;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::time::Duration;
use tokio::sync::mpsc;

/// Upper bound for anything that must finish; a failure guard, never a synchronisation.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// The default config, with the test build of claw-tui as the sandbox launcher.
pub fn config() -> ExecConfig {
    ExecConfig {
        launcher: Some(env!("CARGO_BIN_EXE_claw-tui").into()),
        ..ExecConfig::default()
    }
}

/// A tool with the default (sandboxed) config on `workspace`.
pub fn tool(workspace: &Path) -> ExecTool {
    ExecTool::new(workspace, config())
}

/// Runs one call to completion, discarding updates.
pub async fn call(tool: &ExecTool, args: Value) -> ToolResult {
    tokio::time::timeout(DEADLINE, super::call(tool, args))
        .await
        .expect("exec did not finish in time")
}

/// An update channel for a call: the `ToolUpdates` to pass and the receiver of partials.
pub fn updates() -> (ToolUpdates, mpsc::UnboundedReceiver<Value>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let sink = EventSink::new(move |event| {
        if let AgentEvent::ToolExecutionUpdate { partial, .. } = event {
            let _ = tx.send(partial);
        }
    });
    (ToolUpdates::new(sink, "call", "exec"), rx)
}

/// Whether the kernel offers Landlock, asked directly with the raw syscall
/// (`landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`).
pub fn kernel_has_landlock() -> bool {
    // SAFETY: with a null attribute pointer and size 0 this flag only queries the ABI.
    let abi = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    abi >= 1
}

/// Whether `pid` has exited (gone, or a zombie nobody reaped yet).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
            matches!(state.and_then(|s| s.chars().next()), Some('Z' | 'X'))
        }
    }
}

/// Waits (up to [`DEADLINE`]) for `pid` to exit; returns whether it did.
///
/// A killed process closes its files before it turns into a zombie, so a closed pipe
/// does not yet mean `/proc` shows it dead; a pidfd becomes readable exactly at exit.
pub async fn exits(pid: u32) -> bool {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid as nix::libc::pid_t, 0) };
    if fd < 0 {
        // ESRCH: the process is already gone.
        return process_gone(pid);
    }
    // SAFETY: the syscall returned a fresh descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: the AsyncFd owns the descriptor; nothing else uses or closes it.
    let fd = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
    }
    .map_err(|e| e.to_string())
    .unwrap();
    tokio::time::timeout(DEADLINE, fd.readable()).await.is_ok()
}

/// Whether `pid` is running (exists and is not a zombie).
pub fn process_alive(pid: u32) -> bool {
    !process_gone(pid)
}

/// The kernel's Landlock ABI version (0 without Landlock), asked with the raw syscall.
pub fn landlock_abi() -> i64 {
    // SAFETY: with a null attribute pointer and size 0 this flag only queries the ABI.
    unsafe {
        nix::libc::syscall(
            nix::libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    }
    .max(0)
}

/// Whether this machine lets a process make a pid and mount namespace, tried with the
/// util-linux `unshare` tool (independently of the launcher). `None`: no such tool.
pub fn pid_namespaces_available() -> Option<bool> {
    let mut cmd = std::process::Command::new("unshare");
    if !nix::unistd::geteuid().is_root() {
        cmd.arg("--user").arg("--map-root-user");
    }
    let status = cmd
        .args(["--pid", "--fork", "--mount-proc", "true"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    Some(status.success())
}

/// A number unique to this call, to tell a test's processes apart: `sleep MARKER` runs
/// for a thousand seconds and is found by its exact argument list.
pub fn marker() -> String {
    format!(
        "1000.{}{:06}",
        std::process::id(),
        fastrand::u32(..1_000_000)
    )
}

/// Pids of living processes whose arguments are exactly `sleep MARKER`.
pub fn sleepers(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
                args.len() >= 2
                    && args[0].ends_with(b"sleep")
                    && args[1] == marker.as_bytes()
                    && args[2..].iter().all(|a| a.is_empty())
            })
        })
        .filter(|pid| process_alive(*pid))
        .collect()
}

/// Waits (up to [`DEADLINE`]) until a `sleep MARKER` process runs for each marker;
/// returns their pids. Panics naming the markers that never appeared.
pub async fn wait_for_sleepers(markers: &[String]) -> Vec<u32> {
    let what = format!("these processes never all started: {markers:?}");
    super::poll::until_async(&what, DEADLINE, || {
        let found: Vec<Vec<u32>> = markers.iter().map(|m| sleepers(m)).collect();
        found
            .iter()
            .all(|pids| !pids.is_empty())
            .then(|| found.into_iter().flatten().collect())
    })
    .await
}

/// Asserts that every pid exits (each waited on with a pidfd, up to [`DEADLINE`]).
pub async fn assert_all_exit(pids: &[u32], what: &str) {
    for &pid in pids {
        assert!(exits(pid).await, "{what}: process {pid} survived");
    }
}

/// A script that leaves one `sleep` per escape route behind: `setsid`, a double fork,
/// `nohup`, and a shell that ignores SIGTERM. Returns (script, markers).
pub fn escapers() -> (String, Vec<String>) {
    let markers: Vec<String> = (0..4).map(|_| marker()).collect();
    let script = format!(
        "setsid sleep {} > /dev/null 2>&1 & \
         ( sleep {} > /dev/null 2>&1 & ) ; \
         nohup sleep {} > /dev/null 2>&1 & \
         sh -c 'trap \"\" TERM HUP INT; sleep {}' > /dev/null 2>&1 &",
        markers[0], markers[1], markers[2], markers[3]
    );
    (script, markers)
}

/// An approval asker answering from `answers` in order and recording every request it
/// was asked; asked more often than scripted, it fails the call it is asked for.
pub fn scripted_asker(
    answers: &[claw_tui::tools::exec::ApprovalDecision],
) -> (
    claw_tui::tools::exec::ApprovalAsker,
    std::sync::Arc<std::sync::Mutex<Vec<claw_tui::tools::exec::ApprovalRequest>>>,
) {
    use futures::FutureExt;
    use std::sync::{Arc, Mutex};
    let answers = Arc::new(Mutex::new(
        answers
            .iter()
            .copied()
            .collect::<std::collections::VecDeque<_>>(),
    ));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let asker: claw_tui::tools::exec::ApprovalAsker = Arc::new(move |request| {
        log.lock().unwrap().push(request);
        let answer = answers
            .lock()
            .unwrap()
            .pop_front()
            .expect("asked too often");
        async move { answer }.boxed()
    });
    (asker, asked)
}

/// A shell line that tries to deliver a message with claw-tui's own probe, run as the
/// command (`kind`: unix, abstract, udp, tcp), printing `NAME=delivered` or
/// `NAME=refused: WHY`.
pub fn probe_line(name: &str, kind: &str, target: &str) -> String {
    format!(
        "echo \"{name}=$('{}' __sandbox-probe {kind} '{target}' 2>&1)\"\n",
        env!("CARGO_BIN_EXE_claw-tui")
    )
}

/// The value after `NAME=` on its line of `content`.
pub fn printed<'a>(content: &'a str, name: &str) -> &'a str {
    content
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
        .unwrap_or("(not printed)")
}

/// Whether python3 runs here (some checks need a socket server inside the command).
pub fn python3() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "pass"])
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the command of `result` ran in a mount namespace of its own (its protected
/// paths held, host sockets masked).
pub fn had_mounts(result: &claw_tui::agent::ToolResult) -> bool {
    !result.details["containment_report"]["mounts"].is_null()
}
