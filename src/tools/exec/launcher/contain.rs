//! Process containment: a new pid namespace (plus a mount namespace for its own /proc and
//! /dev/pts) whose init supervises the command, or, where the kernel refuses namespaces,
//! the launcher as a child subreaper.
//!
//! As root, `unshare(CLONE_NEWPID | CLONE_NEWNS)` needs nothing else. Otherwise (or in a
//! container without CAP_SYS_ADMIN) a user namespace mapping only the caller's own uid
//! and gid comes with it; some systems forbid unprivileged user namespaces, so that is
//! probed in a throwaway child first, since a half-made one cannot be left again.

use super::super::report::{ContainmentMode, Report};
use super::exit_now;
use nix::errno::Errno;
use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sched::{CloneFlags, unshare};
use nix::sys::prctl;
use nix::sys::signal::Signal;
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Gid, Pid, Uid, fork};
use std::os::fd::OwnedFd;

/// What this process is after [`enter`].
pub(super) enum Role {
    /// The launcher, outside the new namespace: waits for `init`.
    Launcher {
        /// Pid 1 of the new namespace.
        init: Pid,
    },
    /// Pid 1 of the new namespace: supervises the command.
    Init {
        /// The report to send.
        containment: Report,
        /// Read end of a pipe only the launcher writes to: it hangs up when the launcher
        /// dies.
        alive: OwnedFd,
    },
    /// No namespaces: the launcher supervises as a child subreaper.
    Subreaper {
        /// The report to send.
        containment: Report,
    },
}

/// Sets up containment; with `namespaces`, forks the namespace's init.
pub(super) fn enter(namespaces: bool) -> Role {
    let fallback_reason = if namespaces {
        match unshare_namespaces() {
            Ok(()) => match fork_init() {
                Ok(role) => return role,
                Err(why) => Some(why.to_string()),
            },
            Err(why) => Some(why.to_string()),
        }
    } else {
        None
    };
    let mut fallback_reason = fallback_reason;
    if let Err(e) = prctl::set_child_subreaper(true) {
        // Practically never (Linux >= 3.4); orphans then escape to the system's init.
        let why = format!("cannot become a child subreaper ({e})");
        fallback_reason = Some(match fallback_reason {
            Some(first) => format!("{first}; {why}"),
            None => why,
        });
    }
    Role::Subreaper {
        containment: Report::Containment {
            mode: ContainmentMode::Subreaper,
            private_proc: false,
            private_pts: false,
            fallback_reason,
        },
    }
}

/// Why no pid namespace could be made; the text is the report's fallback reason.
#[derive(Debug, thiserror::Error)]
enum ContainError {
    #[error("pid namespace refused ({direct}); with a user namespace: {probe}")]
    NoUserNamespace { direct: Errno, probe: ProbeError },
    #[error("pid namespace refused ({direct}); unshare: {source}")]
    Unshare { direct: Errno, source: Errno },
    #[error("pid namespace refused ({direct}); user namespace map: {source}")]
    Map {
        direct: Errno,
        source: std::io::Error,
    },
    #[error("pipe: {0}")]
    Pipe(Errno),
    #[error("fork into the pid namespace: {0}")]
    ForkInit(Errno),
}

/// Why the throwaway child found no usable user namespace.
#[derive(Debug, thiserror::Error)]
enum ProbeError {
    #[error("not allowed on this system")]
    NotAllowed,
    #[error("probe failed: {0}")]
    Wait(Errno),
    #[error("fork: {0}")]
    Fork(Errno),
}

const NAMESPACES: CloneFlags = CloneFlags::CLONE_NEWPID.union(CloneFlags::CLONE_NEWNS);

/// Moves this process into a new mount namespace, and its future children into a new
/// pid namespace; with a user namespace when it is needed and allowed.
fn unshare_namespaces() -> Result<(), ContainError> {
    let direct = match unshare(NAMESPACES) {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    let (uid, gid) = (Uid::current(), Gid::current());
    probe_user_namespace(uid, gid)
        .map_err(|probe| ContainError::NoUserNamespace { direct, probe })?;
    unshare(NAMESPACES | CloneFlags::CLONE_NEWUSER)
        .map_err(|source| ContainError::Unshare { direct, source })?;
    map_identity(uid, gid).map_err(|source| ContainError::Map { direct, source })
}

/// Tries a user namespace with the identity mapping in a child that exits right away.
fn probe_user_namespace(uid: Uid, gid: Gid) -> Result<(), ProbeError> {
    // SAFETY: the launcher is single-threaded; the child only makes syscalls and exits.
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            let ok = unshare(CloneFlags::CLONE_NEWUSER).is_ok() && map_identity(uid, gid).is_ok();
            exit_now(if ok { 0 } else { 1 })
        }
        Ok(ForkResult::Parent { child }) => match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, 0)) => Ok(()),
            Ok(_) => Err(ProbeError::NotAllowed),
            Err(e) => Err(ProbeError::Wait(e)),
        },
        Err(e) => Err(ProbeError::Fork(e)),
    }
}

/// Maps the caller's own uid and gid into its new user namespace.
fn map_identity(uid: Uid, gid: Gid) -> std::io::Result<()> {
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))
}

/// Forks pid 1 of the new namespace and prepares its mounts.
fn fork_init() -> Result<Role, ContainError> {
    let (alive_read, alive_write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(ContainError::Pipe)?;
    // SAFETY: the launcher is single-threaded, so the child may run any code.
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            drop(alive_write);
            // The launcher is single-threaded, so this fires exactly when it dies; the
            // `alive` pipe covers a death before this line.
            let _ = prctl::set_pdeathsig(Signal::SIGKILL);
            let (private_proc, private_pts, problems) = private_mounts();
            Ok(Role::Init {
                containment: Report::Containment {
                    mode: ContainmentMode::PidNamespace,
                    private_proc,
                    private_pts,
                    fallback_reason: (!problems.is_empty()).then(|| problems.join("; ")),
                },
                alive: alive_read,
            })
        }
        Ok(ForkResult::Parent { child }) => {
            drop(alive_read);
            // Kept open (never written) for as long as the launcher lives.
            std::mem::forget(alive_write);
            Ok(Role::Launcher { init: child })
        }
        Err(e) => Err(ContainError::ForkInit(e)),
    }
}

/// In the new mount namespace: a /proc of the new pid namespace (so the command sees
/// only its own processes, and `$!` matches /proc), and a /dev/pts of its own (so it
/// cannot open the user's terminals). Returns what worked and what did not.
fn private_mounts() -> (bool, bool, Vec<String>) {
    let mut problems = Vec::new();
    let none: Option<&str> = None;
    if let Err(e) = mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none) {
        // Without private propagation, new mounts would show up outside: make none.
        problems.push(format!(
            "mounts stay shared ({e}), so /proc and /dev/pts are not private"
        ));
        return (false, false, problems);
    }
    let hardened = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    let proc = mount(Some("proc"), "/proc", Some("proc"), hardened, none);
    if let Err(e) = &proc {
        problems.push(format!("no private /proc ({e})"));
    }
    let pts = mount(
        Some("devpts"),
        "/dev/pts",
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    )
    .and_then(|()| {
        // Without /dev/ptmx of the same instance no pty would work: undo the first.
        mount(
            Some("/dev/pts/ptmx"),
            "/dev/ptmx",
            none,
            MsFlags::MS_BIND,
            none,
        )
        .inspect_err(|_| {
            let _ = umount2("/dev/pts", MntFlags::MNT_DETACH);
        })
    });
    if let Err(e) = &pts {
        problems.push(format!("no private /dev/pts ({e})"));
    }
    (proc.is_ok(), pts.is_ok(), problems)
}
