//! Process containment: the command's init is cloned into new namespaces — user, pid,
//! mount, and network with `--deny-network` — where it prepares the command's view of
//! the system (mounts.rs) and supervises it; where the kernel refuses namespaces, the
//! launcher supervises as a child subreaper.
//!
//! The user namespace comes first for everyone, root included: every mount the command
//! inherits is then locked, so it cannot be undone to uncover what is beneath, and the
//! pid namespace's `pid_max` is the command's own to set. Root maps every id onto itself, anyone else their own uid and gid; the
//! launcher writes the maps from outside while the child waits, so a refused map never
//! strands a process in an unmapped namespace. Without a user namespace, root still gets
//! the others directly.
//!
//! The process limit is the pid namespace's own `pid_max`: `RLIMIT_NPROC` never applies
//! to root (the kernel exempts uid 0, user namespace or not), a pid namespace's size
//! applies to everyone.

use super::super::report::{ContainmentMode, MountReport, Report};
use super::options::LauncherOptions;
use super::{mounts, sockets};
use nix::errno::Errno;
use nix::sched::CloneFlags;
use nix::sys::prctl;
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::waitpid;
use nix::unistd::{ForkResult, Gid, Pid, Uid};
use std::os::fd::OwnedFd;

/// What this process is after [`enter`].
pub(super) enum Role {
    /// The launcher, outside the new namespaces: waits for `init`.
    Launcher {
        /// Pid 1 of the new pid namespace.
        init: Pid,
    },
    /// Pid 1 of the new pid namespace: supervises the command.
    Init {
        /// The report to send.
        containment: Report,
        /// Read end of a pipe only the launcher writes to: it hangs up when the launcher
        /// dies.
        alive: OwnedFd,
        /// What the command's process is in, for its confinement.
        inside: Inside,
    },
    /// No namespaces: the launcher supervises as a child subreaper.
    Subreaper {
        /// The report to send.
        containment: Report,
    },
}

/// The namespaces the command runs in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Inside {
    /// A user namespace of its own.
    pub user_namespace: bool,
    /// A network namespace of its own (only loopback).
    pub network_namespace: bool,
    /// The most tasks its pid namespace can hold (its own `pid_max`, less one).
    pub pid_limit: Option<u64>,
}

/// The lowest `pid_max` the kernel accepts.
const PID_MAX_MIN: u64 = 301;

/// Sets up containment for `options`; with namespaces, clones the namespaces' init.
pub(super) fn enter(options: &LauncherOptions) -> Role {
    let mut reasons = Vec::new();
    if options.namespaces {
        // Listed here, in claw-tui's network namespace: the command's may be another.
        let host = sockets::HostSockets::scan();
        let base = CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWNS;
        let base = if options.deny_network {
            base | CloneFlags::CLONE_NEWNET
        } else {
            base
        };
        for user in [true, false] {
            if !user && !Uid::effective().is_root() {
                break;
            }
            match clone_init(base, user) {
                Ok(Cloned::Parent(init)) => return Role::Launcher { init },
                Ok(Cloned::Child(alive)) => {
                    let inside = Inside {
                        user_namespace: user,
                        network_namespace: options.deny_network,
                        pid_limit: None,
                    };
                    return init_role(options, &host, alive, inside);
                }
                Err(why) => reasons.push(why.to_string()),
            }
        }
    }
    if let Err(e) = prctl::set_child_subreaper(true) {
        // Practically never (Linux >= 3.4); orphans then escape to the system's init.
        reasons.push(format!("cannot become a child subreaper ({e})"));
    }
    Role::Subreaper {
        containment: Report::Containment {
            mode: ContainmentMode::Subreaper,
            private_proc: false,
            private_pts: false,
            fallback_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
            user_namespace: false,
            network_namespace: false,
            mounts: None,
        },
    }
}

/// In the new namespaces: the view of the system, loopback, and the report.
fn init_role(
    options: &LauncherOptions,
    host: &sockets::HostSockets,
    alive: OwnedFd,
    inside: Inside,
) -> Role {
    // The launcher is single-threaded, so this fires exactly when it dies; the `alive`
    // pipe covers a death before this line.
    let _ = prctl::set_pdeathsig(Signal::SIGKILL);
    let mut view = mounts::prepare(options, host);
    let mut inside = inside;
    if let Some(processes) = options.limits.processes
        && inside.user_namespace
        && view.private_proc
    {
        inside.pid_limit = limit_pids(processes)
            .inspect_err(|e| {
                view.problems
                    .push(format!("the pid namespace's pid_max stays as it is ({e})"));
            })
            .ok();
    }
    if inside.network_namespace
        && let Err(e) = loopback_up()
    {
        view.problems
            .push(format!("the loopback interface stays down ({e})"));
        inside.network_namespace = false;
    }
    Role::Init {
        containment: Report::Containment {
            mode: ContainmentMode::PidNamespace,
            private_proc: view.private_proc,
            private_pts: view.private_pts,
            fallback_reason: (!view.problems.is_empty()).then(|| view.problems.join("; ")),
            user_namespace: inside.user_namespace,
            network_namespace: inside.network_namespace,
            mounts: Some(MountReport {
                guarded: view.guarded,
                nosuid: view.nosuid,
                tmpfs: view.tmpfs,
                sockets_masked: view.sockets_masked,
                socket_dirs_masked: view.socket_dirs_masked,
            }),
        },
        alive,
        inside,
    }
}

/// Why no namespaces could be made; the text is the report's fallback reason.
#[derive(Debug, thiserror::Error)]
enum ContainError {
    #[error("pipe: {0}")]
    Pipe(Errno),
    #[error("namespaces refused{}: {errno}", if *user { " (with a user namespace)" } else { "" })]
    Clone { errno: Errno, user: bool },
    #[error("user namespace map refused: {0}")]
    Map(std::io::Error),
}

/// Which side of the clone this process is.
enum Cloned {
    /// The launcher; the child is pid 1 of the new pid namespace.
    Parent(Pid),
    /// The child, with the read end of the `alive` pipe.
    Child(OwnedFd),
}

/// Clones the init into new namespaces (`flags`, plus a user namespace when `user`);
/// the child waits until the launcher has written its id maps.
fn clone_init(flags: CloneFlags, user: bool) -> Result<Cloned, ContainError> {
    let flags = if user {
        flags | CloneFlags::CLONE_NEWUSER
    } else {
        flags
    };
    let (uid, gid) = (Uid::effective(), Gid::effective());
    let (alive_read, alive_write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(ContainError::Pipe)?;
    let (go_read, go_write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(ContainError::Pipe)?;
    match clone_process(flags).map_err(|errno| ContainError::Clone { errno, user })? {
        ForkResult::Child => {
            drop(alive_write);
            drop(go_write);
            let mut byte = [1u8];
            // A byte 0: mapped. Anything else (or the launcher gone): end here.
            match nix::unistd::read(&go_read, &mut byte) {
                Ok(1) if byte[0] == 0 => Ok(Cloned::Child(alive_read)),
                _ => super::exit_now(super::EXIT_SETUP_FAILED),
            }
        }
        ForkResult::Parent { child } => {
            drop(alive_read);
            drop(go_read);
            if user && let Err(e) = map_ids(child, uid, gid) {
                let _ = kill(child, Signal::SIGKILL);
                let _ = waitpid(child, None);
                return Err(ContainError::Map(e));
            }
            let _ = nix::unistd::write(&go_write, &[0]);
            // Kept open (never written) for as long as the launcher lives.
            std::mem::forget(alive_write);
            Ok(Cloned::Parent(child))
        }
    }
}

/// `clone(2)` without a new stack: `fork` into new namespaces.
fn clone_process(flags: CloneFlags) -> nix::Result<ForkResult> {
    let flags = flags.bits() as nix::libc::c_ulong | nix::libc::SIGCHLD as nix::libc::c_ulong;
    let null = 0 as nix::libc::c_ulong;
    // SAFETY: with a null stack clone duplicates the caller like fork; the launcher is
    // single-threaded, so the child may run any code. s390x takes the stack first.
    let pid = unsafe {
        if cfg!(target_arch = "s390x") {
            nix::libc::syscall(nix::libc::SYS_clone, null, flags, null, null, null)
        } else {
            nix::libc::syscall(nix::libc::SYS_clone, flags, null, null, null, null)
        }
    };
    match pid {
        -1 => Err(Errno::last()),
        0 => Ok(ForkResult::Child),
        pid => Ok(ForkResult::Parent {
            child: Pid::from_raw(pid as i32),
        }),
    }
}

/// Writes the child's id maps: every id onto itself for root (falling back to root
/// alone where the launcher's own namespace maps fewer), else the caller's own.
fn map_ids(child: Pid, uid: Uid, gid: Gid) -> std::io::Result<()> {
    let proc = format!("/proc/{child}");
    let write = |file: &str, text: String| std::fs::write(format!("{proc}/{file}"), text);
    if uid.is_root() {
        let all = "0 0 4294967295".to_owned();
        if write("uid_map", all.clone()).is_ok() && write("gid_map", all).is_ok() {
            return Ok(());
        }
    }
    if !uid.is_root() {
        write("setgroups", "deny".into())?;
    }
    write("uid_map", format!("{uid} {uid} 1"))?;
    write("gid_map", format!("{gid} {gid} 1"))
}

/// Caps the tasks of the new pid namespace (Linux 6.14 and later keep `pid_max` per pid
/// namespace; the kernel's floor is [`PID_MAX_MIN`]). Only ever called in a user
/// namespace of the command's own: on an older kernel the write then fails instead of
/// changing the machine's `pid_max`. Returns the most tasks the namespace now holds.
fn limit_pids(processes: u64) -> std::io::Result<u64> {
    let pid_max = processes.saturating_add(1).max(PID_MAX_MIN);
    std::fs::write("/proc/sys/kernel/pid_max", pid_max.to_string())?;
    Ok(pid_max - 1)
}

/// Brings the new network namespace's loopback interface up.
fn loopback_up() -> std::io::Result<()> {
    use std::os::fd::{AsRawFd, FromRawFd};
    // SAFETY: socket() returns a new descriptor or -1; nothing else owns it.
    let fd = unsafe { nix::libc::socket(nix::libc::AF_INET, nix::libc::SOCK_DGRAM, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor owned here.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: ifreq is plain data; all zero is a valid value.
    let mut request: nix::libc::ifreq = unsafe { std::mem::zeroed() };
    for (to, from) in request.ifr_name.iter_mut().zip(b"lo") {
        *to = *from as nix::libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS/SIOCSIFFLAGS read and write the ifreq passed by pointer.
    unsafe {
        if nix::libc::ioctl(socket.as_raw_fd(), nix::libc::SIOCGIFFLAGS, &mut request) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        request.ifr_ifru.ifru_flags |= nix::libc::IFF_UP as nix::libc::c_short;
        if nix::libc::ioctl(socket.as_raw_fd(), nix::libc::SIOCSIFFLAGS, &request) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
