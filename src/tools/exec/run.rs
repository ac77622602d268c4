//! Running one command: spawning in its own process group, reading both pipes while
//! streaming batched lines, and killing the whole group on timeout or cancellation.

use super::output::{Capture, LineBatcher};
use super::sandbox::{LauncherStatus, STATUS_PREFIX};
use crate::agent::ToolUpdates;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

/// At most one streamed update per this interval (20 per second).
const UPDATE_INTERVAL: Duration = Duration::from_millis(50);
/// After the shell exits, how long background processes may keep the pipes open.
const EXIT_GRACE: Duration = Duration::from_millis(300);
/// After a kill, how long to wait for the pipes to close (escaped processes may hold them).
const KILL_DRAIN: Duration = Duration::from_secs(2);
/// The longest status line the launcher writes.
const MAX_STATUS_LINE: usize = 4096;

/// What to run and how.
#[derive(Debug)]
pub(crate) struct RunSpec {
    /// The executable (the shell, or the sandbox launcher).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Environment variables to remove.
    pub env_remove: Vec<OsString>,
    /// Wall-clock limit.
    pub timeout: Duration,
    /// Bytes of output kept in all (split between the two streams).
    pub max_output_bytes: usize,
    /// Whether stderr starts with the launcher's status line.
    pub expect_status: bool,
}

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The shell exited and the pipes closed.
    Exited,
    /// The shell exited but background processes kept the pipes open.
    ExitedWithBackground,
    /// The time limit passed; the group was killed.
    TimedOut,
    /// The call was cancelled; the group was killed.
    Cancelled,
}

/// Everything a run produced.
#[derive(Debug)]
pub(crate) struct RunOutcome {
    pub stdout: Capture,
    pub stderr: Capture,
    pub status: Option<ExitStatus>,
    pub ending: Ending,
    /// The launcher's report; `None` when not expected, or when it never came.
    pub sandbox: Option<LauncherStatus>,
}

impl RunOutcome {
    /// The exit code, when the shell exited normally.
    pub fn exit_code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }

    /// The signal that ended the shell, if one did.
    pub fn signal(&self) -> Option<i32> {
        self.status.and_then(|s| s.signal())
    }
}

/// Kills the process group when dropped unless disarmed, so an abandoned call (its
/// future dropped) leaves nothing running.
struct GroupGuard {
    pgid: Option<Pid>,
}

impl GroupGuard {
    fn kill(&self) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is already gone) is the expected failure.
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }

    fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Separates the launcher's status line from the rest of stderr.
struct StatusLine {
    expected: bool,
    buffer: Vec<u8>,
    status: Option<LauncherStatus>,
}

impl StatusLine {
    /// Feeds stderr bytes; returns the bytes that belong to the command's stderr.
    fn feed<'a>(&mut self, bytes: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        if !self.expected {
            return bytes.into();
        }
        self.buffer.extend_from_slice(bytes);
        let newline = self.buffer.iter().position(|&b| b == b'\n');
        let settled = newline.is_some()
            || self.buffer.len() > MAX_STATUS_LINE
            || !STATUS_PREFIX
                .starts_with(&self.buffer[..self.buffer.len().min(STATUS_PREFIX.len())]);
        if !settled {
            return Vec::new().into();
        }
        self.expected = false;
        let buffer = std::mem::take(&mut self.buffer);
        if let Some(end) = newline
            && let Some(status) = LauncherStatus::decode(&buffer[..end])
        {
            self.status = Some(status);
            return buffer[end + 1..].to_vec().into();
        }
        buffer.into()
    }

    /// At end of stream: whatever was held back.
    fn finish(&mut self) -> Vec<u8> {
        self.expected = false;
        std::mem::take(&mut self.buffer)
    }
}

/// Receives output from both pipes.
struct Collector {
    stdout: Capture,
    stderr: Capture,
    status: StatusLine,
    batcher: LineBatcher,
}

impl Collector {
    fn push(&mut self, stderr: bool, bytes: &[u8]) {
        if stderr {
            let bytes = self.status.feed(bytes);
            self.stderr.push(&bytes);
            self.batcher.push(true, &bytes);
        } else {
            self.stdout.push(bytes);
            self.batcher.push(false, bytes);
        }
    }
}

async fn read_some<R: AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

/// Runs `spec` to completion, timeout or cancellation, streaming lines to `updates`.
pub(crate) async fn run(
    spec: RunSpec,
    cancel: &CancellationToken,
    updates: &ToolUpdates,
) -> io::Result<RunOutcome> {
    let mut command = tokio::process::Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for name in &spec.env_remove {
        command.env_remove(name);
    }
    let mut child = command.spawn()?;
    let pgid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    let mut guard = GroupGuard { pgid };
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut collector = Collector {
        stdout: Capture::new(spec.max_output_bytes / 2),
        stderr: Capture::new(spec.max_output_bytes - spec.max_output_bytes / 2),
        status: StatusLine {
            expected: spec.expect_status,
            buffer: Vec::new(),
            status: None,
        },
        batcher: LineBatcher::new(spec.max_output_bytes),
    };
    let mut out_buf = vec![0u8; 64 * 1024];
    let mut err_buf = vec![0u8; 64 * 1024];
    let deadline = Instant::now() + spec.timeout;
    let mut status: Option<ExitStatus> = None;
    let mut grace_end: Option<Instant> = None;
    let mut last_update: Option<Instant> = None;
    let mut flush_at: Option<Instant> = None;

    let ending = loop {
        if status.is_some() && stdout.is_none() && stderr.is_none() {
            break Ending::Exited;
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => break Ending::Cancelled,
            () = sleep_until(deadline), if status.is_none() => break Ending::TimedOut,
            () = sleep_until(grace_end.unwrap_or(deadline)), if grace_end.is_some() => {
                break Ending::ExitedWithBackground;
            }
            exited = child.wait(), if status.is_none() => {
                status = Some(exited?);
                grace_end = Some(Instant::now() + EXIT_GRACE);
            }
            read = read_some(&mut stdout, &mut out_buf) => match read {
                Ok(n) if n > 0 => collector.push(false, &out_buf[..n]),
                _ => stdout = None,
            },
            read = read_some(&mut stderr, &mut err_buf) => match read {
                Ok(n) if n > 0 => collector.push(true, &err_buf[..n]),
                _ => stderr = None,
            },
            () = sleep_until(flush_at.unwrap_or(deadline)), if flush_at.is_some() => {}
        }
        if collector.batcher.ready() {
            let now = Instant::now();
            match last_update {
                Some(last) if now < last + UPDATE_INTERVAL => {
                    flush_at = Some(last + UPDATE_INTERVAL);
                }
                _ => {
                    if let Some(batch) = collector.batcher.take() {
                        updates.send(batch);
                    }
                    last_update = Some(now);
                    flush_at = None;
                }
            }
        }
    };

    match ending {
        Ending::TimedOut | Ending::Cancelled => {
            guard.kill();
            if status.is_none() {
                status = Some(child.wait().await?);
            }
            drain(&mut stdout, &mut stderr, &mut collector, KILL_DRAIN).await;
        }
        Ending::Exited | Ending::ExitedWithBackground => {}
    }
    // Background processes outlive a command that exited on its own, by design.
    guard.disarm();
    let rest = collector.status.finish();
    collector.stderr.push(&rest);
    Ok(RunOutcome {
        stdout: collector.stdout,
        stderr: collector.stderr,
        status,
        ending,
        sandbox: collector.status.status,
    })
}

/// Reads what is left in the pipes after a kill, until they close or `limit` passes.
async fn drain<O: AsyncRead + Unpin, E: AsyncRead + Unpin>(
    stdout: &mut Option<O>,
    stderr: &mut Option<E>,
    collector: &mut Collector,
    limit: Duration,
) {
    let deadline = Instant::now() + limit;
    let mut out_buf = vec![0u8; 64 * 1024];
    let mut err_buf = vec![0u8; 64 * 1024];
    while stdout.is_some() || stderr.is_some() {
        tokio::select! {
            () = sleep_until(deadline) => return,
            read = read_some(stdout, &mut out_buf) => match read {
                Ok(n) if n > 0 => collector.push(false, &out_buf[..n]),
                _ => *stdout = None,
            },
            read = read_some(stderr, &mut err_buf) => match read {
                Ok(n) if n > 0 => collector.push(true, &err_buf[..n]),
                _ => *stderr = None,
            },
        }
    }
}
