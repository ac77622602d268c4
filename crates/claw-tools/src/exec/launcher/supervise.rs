//! The supervisor: starts the shell, reaps every process that ends up its child, reports
//! the shell's exit, and on a stop request kills everything the command started.
//!
//! A stop comes from the time limit, SIGTERM/SIGINT/SIGHUP (claw-tui aborting the call),
//! the status pipe's reader going away (claw-tui exited, however it died), or the
//! launcher dying (in the namespace). Without a stop it runs until the last process of
//! the command is gone, so background processes live at most until the time limit.

use super::super::report::Report;
use super::contain::Inside;
use super::{EXIT_EXEC_FAILED, EXIT_SETUP_FAILED, LauncherOptions, Reporter, confine};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork};
use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

/// Exit code when the command was killed (128 + SIGKILL), as a shell reports it.
const EXIT_KILLED: i32 = 128 + 9;

/// The signals the supervisor handles, blocked and readable from a descriptor.
pub(super) struct Signals {
    mask: SigSet,
    fd: SignalFd,
}

impl Signals {
    /// Blocks SIGCHLD, SIGTERM, SIGINT and SIGHUP; the shell gets a clean mask back at
    /// exec.
    pub fn block() -> nix::Result<Self> {
        let mask: SigSet = [
            Signal::SIGCHLD,
            Signal::SIGTERM,
            Signal::SIGINT,
            Signal::SIGHUP,
        ]
        .into_iter()
        .collect();
        mask.thread_block()?;
        let fd = SignalFd::with_flags(&mask, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)?;
        Ok(Self { mask, fd })
    }

    /// Drains pending signals; true when one of them asks to stop.
    fn stop_requested(&self) -> bool {
        let mut stop = false;
        while let Ok(Some(info)) = self.fd.read_signal() {
            stop |= info.ssi_signo != Signal::SIGCHLD as u32;
        }
        stop
    }
}

/// The launcher outside the namespace: waits for the namespace's init and exits with
/// its code; on a stop signal kills it, which makes the kernel kill the whole namespace.
pub(super) fn proxy(init: Pid, signals: Signals) -> i32 {
    quiet_stdio();
    loop {
        match signals.mask.wait() {
            Ok(Signal::SIGCHLD) => {
                if let Some(code) = exit_code_of(init, Some(WaitPidFlag::WNOHANG)) {
                    return code;
                }
            }
            Ok(_) => {
                let _ = kill(init, Signal::SIGKILL);
                // Returns once every process of the namespace is gone.
                return exit_code_of(init, None).unwrap_or(EXIT_KILLED);
            }
            Err(_) => {
                if let Some(code) = exit_code_of(init, None) {
                    return code;
                }
            }
        }
    }
}

fn exit_code_of(pid: Pid, flags: Option<WaitPidFlag>) -> Option<i32> {
    loop {
        return match waitpid(pid, flags) {
            Ok(WaitStatus::Exited(_, code)) => Some(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => Some(128 + signal as i32),
            Ok(WaitStatus::StillAlive) => None,
            Err(Errno::EINTR) => continue,
            Err(_) => Some(EXIT_KILLED),
            Ok(_) => None,
        };
    }
}

/// Which process supervises.
pub(super) enum Supervisor {
    /// Pid 1 of the namespaces; `alive` hangs up when the launcher dies.
    Init { alive: OwnedFd, inside: Inside },
    /// The launcher itself, as a child subreaper.
    Subreaper,
}

/// Starts the shell and supervises it and everything it starts; returns the exit code.
pub(super) fn supervise(
    options: &LauncherOptions,
    reporter: &Reporter,
    signals: Signals,
    supervisor: Supervisor,
) -> i32 {
    let (alive, inside, as_init) = match supervisor {
        Supervisor::Init { alive, inside } => (Some(alive), inside, true),
        Supervisor::Subreaper => (None, Inside::default(), false),
    };
    // SAFETY: the launcher is single-threaded, so the child may run any code.
    let shell = match unsafe { fork() } {
        Ok(ForkResult::Child) => confine::exec_shell(options, reporter, inside),
        Ok(ForkResult::Parent { child }) => child,
        Err(e) => {
            reporter.send(&Report::Failed {
                reason: format!("cannot start the shell: fork: {e}"),
            });
            return EXIT_SETUP_FAILED;
        }
    };
    // Only the command may keep its output pipes open, so they close when it is done.
    quiet_stdio();
    let deadline = options.timeout.map(|t| Instant::now() + t);
    let mut shell_code = None;
    loop {
        if reap(shell, reporter, &mut shell_code, Some(WaitPidFlag::WNOHANG)) {
            return shell_code.unwrap_or(EXIT_EXEC_FAILED);
        }
        let timeout = match deadline {
            None => PollTimeout::NONE,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                // Whole milliseconds, rounded up so the loop does not spin near the end.
                let ms = left.as_millis().saturating_add(1);
                PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
            }
        };
        let mut fds = vec![
            PollFd::new(signals.fd.as_fd(), PollFlags::POLLIN),
            PollFd::new(reporter.as_fd(), PollFlags::empty()),
        ];
        if let Some(alive) = &alive {
            fds.push(PollFd::new(alive.as_fd(), PollFlags::POLLIN));
        }
        match poll(&mut fds, timeout) {
            Err(Errno::EINTR) => continue,
            Err(_) | Ok(0) if deadline.is_some_and(|d| Instant::now() >= d) => break,
            Err(_) | Ok(0) => continue,
            Ok(_) => {}
        }
        let hung_up = |fd: &PollFd| {
            fd.revents().is_some_and(|r| {
                r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP | PollFlags::POLLIN)
            })
        };
        // The status pipe's reader or the launcher is gone: claw-tui is done with us.
        if fds[1..].iter().any(hung_up) || signals.stop_requested() {
            break;
        }
    }
    kill_everything(as_init);
    while !reap(shell, reporter, &mut shell_code, None) {}
    shell_code.unwrap_or(EXIT_KILLED)
}

/// Reaps children (all that are ready, or blocking for the next one), reporting the
/// shell's exit. Returns true when no child is left.
fn reap(
    shell: Pid,
    reporter: &Reporter,
    shell_code: &mut Option<i32>,
    flags: Option<WaitPidFlag>,
) -> bool {
    loop {
        let status = match waitpid(None::<Pid>, flags) {
            Ok(WaitStatus::StillAlive) => return false,
            Ok(status) => status,
            Err(Errno::EINTR) => continue,
            Err(_) => return true,
        };
        if status.pid() == Some(shell) {
            let (code, signal, exit) = match status {
                WaitStatus::Exited(_, code) => (Some(code), None, code),
                WaitStatus::Signaled(_, signal, _) => {
                    (None, Some(signal as i32), 128 + signal as i32)
                }
                _ => continue,
            };
            *shell_code = Some(exit);
            reporter.send(&Report::Exit { code, signal });
        }
        if flags.is_none() {
            return false;
        }
    }
}

/// Kills every process the command started.
fn kill_everything(as_init: bool) {
    if as_init {
        // From pid 1 of a namespace, -1 means every other process in it.
        let _ = kill(Pid::from_raw(-1), Signal::SIGKILL);
        return;
    }
    // As a subreaper: every living descendant, again until none is left, since the
    // children of a killed process become ours and may have forked meanwhile.
    let me = Pid::this();
    for _ in 0..1000 {
        let living = descendants(me);
        if living.is_empty() {
            return;
        }
        for pid in living {
            let _ = kill(pid, Signal::SIGKILL);
        }
        // Let the killed ones die before looking again.
        let _ = waitpid(None::<Pid>, None);
        while let Ok(status) = waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            if status == WaitStatus::StillAlive {
                break;
            }
        }
    }
}

/// Every living (not zombie) descendant of `root`, from /proc.
fn descendants(root: Pid) -> Vec<Pid> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        let mut fields = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace());
        let state = fields.as_mut().and_then(|f| f.next());
        let ppid = fields
            .as_mut()
            .and_then(|f| f.next())
            .and_then(|p| p.parse().ok());
        if let (Some(state), Some(ppid)) = (state, ppid)
            && state != "Z"
            && state != "X"
        {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut queue = vec![root.as_raw()];
    while let Some(parent) = queue.pop() {
        for &child in children.get(&parent).map_or(&[][..], Vec::as_slice) {
            found.push(Pid::from_raw(child));
            queue.push(child);
        }
    }
    found
}

/// Points stdin, stdout and stderr at /dev/null.
fn quiet_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = nix::unistd::dup2_stdin(&null);
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
}
