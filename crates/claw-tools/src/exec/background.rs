//! The commands whose protected paths are not settled yet, so that a change made by a
//! process of a command is found however late it comes.
//!
//! A command may leave processes in the background, and they keep running (until the
//! time limit) after its result is in. Each run is registered here before it starts;
//! while processes of it remain, its protected paths are checked again every
//! [`RECHECK`] (a new repository stays only while it is still plain at each check), and
//! once more when the last of them is gone. When claw-tui exits, in every mode and on a
//! stop signal, [`stop_commands`] first stops the launcher of every run still here
//! (which kills all of its processes), then settles each one: no process of a command
//! outlives the last check.

use super::protect::{Outcome, Watch};
use super::running::Counted;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How often the protected paths are checked while a command's processes remain.
pub(super) const RECHECK: Duration = Duration::from_millis(250);
/// How long a launcher gets to stop its processes at exit.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// Every run not settled for the last time.
static LIVE: Mutex<Vec<Arc<Live>>> = Mutex::new(Vec::new());

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every change under these locks is one push, one removal or one settle.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The launcher of a run: its pid and, where the kernel has them, a pidfd that names
/// it without any doubt (the pid could be reused once it is reaped).
#[derive(Debug)]
pub(crate) struct Launcher {
    pid: Pid,
    pidfd: Option<OwnedFd>,
}

impl Launcher {
    /// The launcher just started as `pid` (a child of this process, not reaped yet).
    pub(crate) fn of(pid: u32) -> Self {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid as i32, 0) };
        Self {
            pid: Pid::from_raw(pid as i32),
            // SAFETY: a descriptor just returned by the kernel, owned by nobody else.
            pidfd: (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) }),
        }
    }

    /// Asks it to stop every process of its command.
    fn stop(&self) {
        match &self.pidfd {
            Some(fd) => {
                // SAFETY: sends a signal to the process the descriptor names.
                unsafe {
                    nix::libc::syscall(
                        nix::libc::SYS_pidfd_send_signal,
                        std::os::fd::AsRawFd::as_raw_fd(fd),
                        Signal::SIGTERM as i32,
                        std::ptr::null::<u8>(),
                        0,
                    )
                };
            }
            None => {
                let _ = nix::sys::signal::kill(self.pid, Signal::SIGTERM);
            }
        }
    }

    /// Waits until it has exited (its processes are gone then), at most until `until`.
    fn wait(&self, until: Instant) {
        let Some(fd) = &self.pidfd else {
            // Without a pidfd: until /proc says it is gone or a zombie.
            while Instant::now() < until && !gone(self.pid) {
                std::thread::sleep(Duration::from_millis(10));
            }
            return;
        };
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let ms = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
            let mut fds = [nix::poll::PollFd::new(
                fd.as_fd(),
                nix::poll::PollFlags::POLLIN,
            )];
            match nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(ms)) {
                Err(nix::errno::Errno::EINTR) => continue,
                Ok(0) if !left.is_zero() => continue,
                _ => return,
            }
        }
    }
}

fn gone(pid: Pid) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
        matches!(state.and_then(|s| s.chars().next()), Some('Z' | 'X'))
    })
}

/// One run whose protected paths are still to be settled.
#[derive(Debug)]
pub(super) struct Live {
    _counted: Counted,
    watch: Watch,
    launcher: OnceLock<Launcher>,
    /// One settle at a time.
    settling: Mutex<()>,
}

impl Live {
    /// Registers a run about to start, with what to check after it; `counted` counts
    /// it among its tool's running commands until nothing of it is left.
    pub fn register(watch: Watch, counted: Counted) -> Arc<Self> {
        let live = Arc::new(Self {
            _counted: counted,
            watch,
            launcher: OnceLock::new(),
            settling: Mutex::new(()),
        });
        lock(&LIVE).push(live.clone());
        live
    }

    /// Where the run records its launcher once started.
    pub fn launcher(&self) -> &OnceLock<Launcher> {
        &self.launcher
    }

    /// Checks the protected paths now.
    pub fn settle(&self) -> Vec<super::protect::Settled> {
        let _one = lock(&self.settling);
        self.watch.settle()
    }

    /// The run is settled for the last time: nothing of it is left to check.
    pub fn finish(self: &Arc<Self>) {
        lock(&LIVE).retain(|l| !Arc::ptr_eq(l, self));
    }
}

/// What a check after the call found, as the next result tells it.
fn worded(settled: Vec<super::protect::Settled>) -> Vec<String> {
    settled
        .into_iter()
        .filter(|s| s.outcome != Outcome::NewRepository)
        .map(|s| {
            tracing::warn!("exec: after background processes: {s}");
            format!("After the background processes of an earlier command: {s}")
        })
        .collect()
}

/// Checks `live` every [`RECHECK`] until `finished` (its launcher has exited, so its
/// processes are gone), then once more; findings go into `pending`.
pub(super) fn watch_until_finished(
    live: Arc<Live>,
    mut finished: tokio::sync::oneshot::Receiver<()>,
    pending: Arc<Mutex<Vec<String>>>,
) {
    tokio::spawn(async move {
        loop {
            let done = tokio::select! {
                _ = &mut finished => true,
                () = tokio::time::sleep(RECHECK) => false,
            };
            let checked = live.clone();
            let Ok(settled) = tokio::task::spawn_blocking(move || checked.settle()).await else {
                return;
            };
            lock(&pending).extend(worded(settled));
            if done {
                live.finish();
                return;
            }
        }
    });
}

/// Stops every command whose processes may still run, waits until they are gone, and
/// then checks each one's protected paths for the last time; returns what was found,
/// worded for the user. Call it before claw-tui exits, on every way out.
pub fn stop_commands() -> Vec<String> {
    let live: Vec<Arc<Live>> = std::mem::take(&mut *lock(&LIVE));
    for run in &live {
        if let Some(launcher) = run.launcher.get() {
            launcher.stop();
        }
    }
    let until = Instant::now() + STOP_WAIT;
    for run in &live {
        if let Some(launcher) = run.launcher.get() {
            launcher.wait(until);
        }
    }
    let mut found = Vec::new();
    for run in &live {
        for settled in run.settle() {
            if settled.outcome != Outcome::NewRepository {
                tracing::warn!("exec: after stopping the commands: {settled}");
                found.push(settled.to_string());
            }
        }
    }
    found
}

/// [`stop_commands`], with what it found said on stderr.
pub fn stop_commands_and_report() {
    for found in stop_commands() {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!(
                "claw-tui: after its commands were stopped: {}\n",
                crate::visible::for_stderr(&found)
            )
            .as_bytes(),
        );
    }
}

/// Stops every command and checks their protected paths when dropped: hold one for the
/// life of the process (`main`).
#[derive(Debug)]
#[must_use = "the commands are stopped and checked when the guard is dropped"]
pub struct CommandsGuard(());

impl CommandsGuard {
    /// The guard.
    pub fn new() -> Self {
        Self(())
    }
}

impl Default for CommandsGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for CommandsGuard {
    fn drop(&mut self) {
        stop_commands_and_report();
    }
}

/// A run whose call may be dropped before it settled (its future abandoned): when
/// dropped armed, it waits on a blocking thread for the launcher (stopped by the run's
/// own guard) and settles the run there.
pub(super) struct Unsettled {
    live: Option<Arc<Live>>,
    pending: Arc<Mutex<Vec<String>>>,
}

impl Unsettled {
    /// Armed for `live`; findings go into `pending`.
    pub fn new(live: Arc<Live>, pending: Arc<Mutex<Vec<String>>>) -> Self {
        Self {
            live: Some(live),
            pending,
        }
    }

    /// The call settles the run itself.
    pub fn disarm(mut self) {
        self.live = None;
    }
}

impl Drop for Unsettled {
    fn drop(&mut self) {
        let Some(live) = self.live.take() else {
            return;
        };
        // Without a runtime (claw-tui is exiting) `stop_commands` settles it.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let pending = self.pending.clone();
        runtime.spawn_blocking(move || {
            if let Some(launcher) = live.launcher.get() {
                launcher.stop();
                launcher.wait(Instant::now() + STOP_WAIT);
            }
            lock(&pending).extend(worded(live.settle()));
            live.finish();
        });
    }
}
