//! Running one command through the sandbox launcher: reading both output pipes and the
//! launcher's status pipe while streaming batched lines, and stopping every process of
//! the command on timeout, cancellation, or when the call is abandoned.
//!
//! Stopping means SIGTERM to the launcher, which kills the whole namespace or tree and
//! exits once everything is gone. A command that exits on its own may leave background
//! processes: the call returns, and the launcher kills them at the time limit, or when
//! claw-tui exits (the status pipe, held until then by a small task, closes).

use super::background::{Launcher, Live};
use super::launcher::{LauncherOptions, STATUS_FD};
use super::output::{Capture, LineBatcher};
use super::report::{Report, SandboxReport};
use claw_agent::ToolUpdates;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Child;
use tokio::time::{Instant, sleep_until, timeout};
use tokio_util::sync::CancellationToken;

/// At most one streamed update per this interval (20 per second).
const UPDATE_INTERVAL: Duration = Duration::from_millis(50);
/// After the shell exits, how long background processes may keep the pipes open.
const EXIT_GRACE: Duration = Duration::from_millis(300);
/// After a stop request, how long the launcher gets to kill everything and exit.
const STOP_WAIT: Duration = Duration::from_secs(5);
/// After the stop, how long to wait for the pipes to close.
const KILL_DRAIN: Duration = Duration::from_secs(2);
/// The longest status line read; longer ones are not reports.
const MAX_STATUS_LINE: usize = 64 * 1024;

/// What to run and how.
#[derive(Debug)]
pub(crate) struct RunSpec {
    /// The launcher executable.
    pub launcher: PathBuf,
    /// Its options, the shell command included.
    pub options: LauncherOptions,
    /// Working directory.
    pub cwd: PathBuf,
    /// The complete environment (already without secrets).
    pub env: Vec<(OsString, OsString)>,
    /// Wall-clock limit.
    pub timeout: Duration,
    /// Bytes of output kept in all (split between the two streams).
    pub max_output_bytes: usize,
    /// What the command reads on stdin (`None`: nothing, stdin is /dev/null).
    pub stdin: Option<Vec<u8>>,
    /// Where the launcher is recorded once started, so that it can be stopped at exit.
    pub live: Option<Arc<Live>>,
}

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The shell and every process it started ended, and the pipes closed.
    Exited,
    /// The shell exited, but processes it started in the background still run.
    ExitedWithBackground {
        /// They hold the output pipes open (their further output is lost).
        pipes_held: bool,
    },
    /// The time limit passed; everything was killed.
    TimedOut,
    /// The call was cancelled; everything was killed.
    Cancelled,
}

/// What the launcher reported.
#[derive(Debug, Default)]
pub(crate) struct Reports {
    /// How the processes are contained.
    pub containment: Option<Report>,
    /// The sandbox set up around the shell.
    pub sandbox: Option<SandboxReport>,
    /// Why setting up failed, if it did.
    pub failed: Option<String>,
    /// The shell's exit.
    pub exit: Option<ExitStatus>,
}

impl Reports {
    fn take(&mut self, report: Report) {
        match report {
            Report::Containment { .. } => self.containment = Some(report),
            Report::Sandbox(sandbox) => self.sandbox = Some(sandbox),
            Report::Failed { reason } => self.failed = Some(reason),
            Report::Exit { code, signal } => {
                let raw = match (code, signal) {
                    (Some(code), _) => (code & 0xff) << 8,
                    (None, Some(signal)) => signal & 0x7f,
                    (None, None) => return,
                };
                self.exit = Some(ExitStatus::from_raw(raw));
            }
        }
    }
}

/// Everything a run produced.
#[derive(Debug)]
pub(crate) struct RunOutcome {
    pub stdout: Capture,
    pub stderr: Capture,
    /// The shell's status (from the launcher's report, else the launcher's own).
    pub status: Option<ExitStatus>,
    pub ending: Ending,
    pub reports: Reports,
    /// With processes left in the background: resolves once the launcher has exited,
    /// that is, once every process of the command is gone.
    pub finished: Option<tokio::sync::oneshot::Receiver<()>>,
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

/// Owns the launcher while a call runs; dropped with the call (its future abandoned),
/// it asks the launcher to stop everything.
struct LauncherGuard {
    child: Option<Child>,
}

impl LauncherGuard {
    fn stop(&self) {
        if let Some(pid) = self.child.as_ref().and_then(Child::id) {
            // The child is not reaped yet, so the pid is still its own.
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
        }
    }
}

impl Drop for LauncherGuard {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Splits the status pipe into reports.
#[derive(Default)]
struct StatusLines {
    buffer: Vec<u8>,
    reports: Reports,
}

impl StatusLines {
    fn feed(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
        while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            if let Some(report) = Report::decode(&line[..end]) {
                self.reports.take(report);
            }
        }
        if self.buffer.len() > MAX_STATUS_LINE {
            self.buffer.clear();
        }
    }
}

/// Receives output from both pipes.
struct Collector {
    stdout: Capture,
    stderr: Capture,
    batcher: LineBatcher,
}

impl Collector {
    fn push(&mut self, stderr: bool, bytes: &[u8]) {
        if stderr {
            self.stderr.push(bytes);
        } else {
            self.stdout.push(bytes);
        }
        self.batcher.push(stderr, bytes);
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

async fn wait_for(child: &mut Option<Child>) -> io::Result<ExitStatus> {
    match child {
        Some(child) => child.wait().await,
        None => std::future::pending().await,
    }
}

/// Starts the launcher with the status pipe's write end as [`STATUS_FD`].
fn spawn(spec: &RunSpec) -> io::Result<(Child, tokio::net::unix::pipe::Receiver)> {
    let (status_read, status_write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let mut command = tokio::process::Command::new(&spec.launcher);
    command
        .args(spec.options.to_args())
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let raw = status_write.as_raw_fd();
    // SAFETY: runs in the forked child before exec and only calls dup2 and fcntl, which
    // are async-signal-safe; `raw` stays open in the parent until spawn returns.
    unsafe {
        command.pre_exec(move || {
            let done = if raw == STATUS_FD {
                nix::libc::fcntl(raw, nix::libc::F_SETFD, 0)
            } else {
                nix::libc::dup2(raw, STATUS_FD)
            };
            if done < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command.spawn()?;
    drop(status_write);
    let status = tokio::net::unix::pipe::Receiver::from_owned_fd(status_read)?;
    Ok((child, status))
}

/// Runs `spec` to completion, timeout or cancellation, streaming lines to `updates`.
pub(crate) async fn run(
    spec: RunSpec,
    cancel: &CancellationToken,
    updates: &ToolUpdates,
) -> io::Result<RunOutcome> {
    let (mut child, status_pipe) = spawn(&spec)?;
    if let (Some(live), Some(pid)) = (&spec.live, child.id()) {
        let _ = live.launcher().set(Launcher::of(pid));
    }
    if let (Some(mut pipe), Some(input)) = (child.stdin.take(), spec.stdin.clone()) {
        // Written on the side: a command that never reads its stdin must not block the
        // run, and one that exits early closes the pipe (the error is of no interest).
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let _ = pipe.write_all(&input).await;
        });
    }
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut status_pipe = Some(status_pipe);
    let mut guard = LauncherGuard { child: Some(child) };
    let mut collector = Collector {
        stdout: Capture::new(spec.max_output_bytes / 2),
        stderr: Capture::new(spec.max_output_bytes - spec.max_output_bytes / 2),
        batcher: LineBatcher::new(spec.max_output_bytes),
    };
    let mut lines = StatusLines::default();
    let mut finished = None;
    let mut out_buf = vec![0u8; 64 * 1024];
    let mut err_buf = vec![0u8; 64 * 1024];
    let mut status_buf = vec![0u8; 4096];
    let deadline = Instant::now() + spec.timeout;
    let mut launcher_status: Option<ExitStatus> = None;
    let mut grace_end: Option<Instant> = None;
    let mut last_update: Option<Instant> = None;
    let mut flush_at: Option<Instant> = None;

    let ending = loop {
        let shell_done = lines.reports.exit.is_some() || launcher_status.is_some();
        if shell_done && grace_end.is_none() {
            grace_end = Some(Instant::now() + EXIT_GRACE);
        }
        let pipes_open = stdout.is_some() || stderr.is_some();
        if launcher_status.is_some() && !pipes_open && status_pipe.is_none() {
            break Ending::Exited;
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => break Ending::Cancelled,
            () = sleep_until(deadline), if !shell_done => break Ending::TimedOut,
            () = sleep_until(grace_end.unwrap_or(deadline)), if grace_end.is_some() => {
                break Ending::ExitedWithBackground { pipes_held: pipes_open };
            }
            exited = wait_for(&mut guard.child), if launcher_status.is_none() => {
                launcher_status = Some(exited?);
            }
            read = read_some(&mut status_pipe, &mut status_buf) => match read {
                Ok(n) if n > 0 => lines.feed(&status_buf[..n]),
                _ => status_pipe = None,
            },
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
            if launcher_status.is_none() {
                launcher_status = Some(stop(&mut guard).await?);
            }
            drain(&mut stdout, &mut stderr, &mut collector, KILL_DRAIN).await;
        }
        Ending::ExitedWithBackground { .. } if launcher_status.is_none() => {
            // The launcher ends them at the time limit; until then it must keep seeing
            // the status pipe open, or it would stop them now.
            if let Some(mut child) = guard.child.take() {
                let status_pipe = status_pipe.take();
                let (done, done_rx) = tokio::sync::oneshot::channel();
                finished = Some(done_rx);
                tokio::spawn(async move {
                    let _ = child.wait().await;
                    drop(status_pipe);
                    let _ = done.send(());
                });
            }
        }
        Ending::Exited | Ending::ExitedWithBackground { .. } => {}
    }
    // Reports written just before the end may still be in the pipe.
    if let Some(pipe) = status_pipe.as_mut() {
        while let Ok(Ok(n)) = timeout(Duration::ZERO, pipe.read(&mut status_buf)).await {
            if n == 0 {
                break;
            }
            lines.feed(&status_buf[..n]);
        }
    }
    guard.child = None;
    let status = lines.reports.exit.or(launcher_status);
    Ok(RunOutcome {
        stdout: collector.stdout,
        stderr: collector.stderr,
        status,
        ending,
        reports: lines.reports,
        finished,
    })
}

/// Asks the launcher to stop everything and waits for it; kills it if it does not.
async fn stop(guard: &mut LauncherGuard) -> io::Result<ExitStatus> {
    guard.stop();
    let Some(child) = guard.child.as_mut() else {
        return Ok(ExitStatus::from_raw(Signal::SIGKILL as i32));
    };
    match timeout(STOP_WAIT, child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            tracing::warn!("the exec sandbox launcher did not stop in {STOP_WAIT:?}; killing it");
            child.start_kill()?;
            child.wait().await
        }
    }
}

/// Reads what is left in the pipes after a stop, until they close or `limit` passes.
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
