//! Host unix sockets, masked in the command's mount namespace.
//!
//! A pathname socket is a file: a network namespace does not isolate it, Landlock (up to
//! ABI 7) does not govern `connect(2)`, and seccomp cannot see the path. So the command
//! gets a view of the file system without them:
//!
//! - every pathname socket bound in claw-tui's network namespace when the command starts
//!   (`/proc/net/unix`: one read, however many there are) has `/dev/null` bound over it,
//!   read-only and `nodev`: `connect` finds no socket there, `open` is refused;
//! - the directories where host services put their sockets — the per-user runtime dirs
//!   (`/run/user`), X11's and ICE's, tmux's default one, D-Bus's — get an empty read-only
//!   tmpfs, which also hides sockets bound there later or in another network namespace.
//!
//! Sockets the command makes itself (a test binding one in the workspace or `$TMPDIR`)
//! are made after this and work as usual. `--allow-socket PATH` keeps a socket, or the
//! sockets beneath a directory, reachable: it is left unmasked, or bound back into a
//! masked directory. Abstract sockets are not files: Landlock's scope (ABI 6) and the
//! network namespace of `--deny-network` keep those out.
//!
//! Not covered: a socket bound in another network namespace at a path outside those
//! directories, one bound or renamed outside them after the command started, and one
//! bound under a relative path.

use super::mounts::remount;
use nix::mount::{MsFlags, mount};
use std::collections::BTreeSet;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// The host's sockets, listed before the command's namespaces are made.
#[derive(Debug, Default)]
pub(super) struct HostSockets {
    /// Pathname sockets bound now.
    files: BTreeSet<PathBuf>,
    /// Directories that hold host services' sockets.
    dirs: Vec<PathBuf>,
}

impl HostSockets {
    /// Lists the bound pathname sockets and the socket directories of this machine.
    pub fn scan() -> Self {
        let files = std::fs::read_to_string("/proc/net/unix")
            .map(|table| bound_paths(&table))
            .unwrap_or_default();
        let uid = nix::unistd::Uid::effective();
        let mut dirs: Vec<PathBuf> = [
            "/run/user".to_owned(),
            "/tmp/.X11-unix".to_owned(),
            "/tmp/.ICE-unix".to_owned(),
            format!("/tmp/tmux-{uid}"),
            "/run/dbus".to_owned(),
        ]
        .into_iter()
        .map(PathBuf::from)
        .collect();
        if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR") {
            dirs.push(PathBuf::from(runtime));
        }
        Self { files, dirs }
    }
}

/// The paths of bound pathname sockets in a `/proc/net/unix` table.
fn bound_paths(table: &str) -> BTreeSet<PathBuf> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            // Num RefCount Protocol Flags Type St Inode Path: the path is the rest.
            let mut rest = line;
            for _ in 0..7 {
                rest = rest.trim_start();
                rest = &rest[rest.find(' ')?..];
            }
            let path = rest.trim_start();
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

/// What [`mask`] did.
#[derive(Debug, Default)]
pub(super) struct Masked {
    pub sockets: usize,
    pub dirs: usize,
    pub problems: Vec<String>,
}

/// Whether `path` is, or is beneath, one of `allowed`.
fn is_allowed(path: &Path, allowed: &[PathBuf]) -> bool {
    allowed.iter().any(|a| path.starts_with(a))
}

/// Masks the host's sockets in this (private) mount namespace, except `allowed`.
pub(super) fn mask(host: &HostSockets, allowed: &[PathBuf]) -> Masked {
    let mut masked = Masked::default();
    // Held open by path before anything is covered, to be bound back.
    let kept: Vec<(PathBuf, OwnedFd)> = allowed
        .iter()
        .filter_map(|path| open_path(path).ok().map(|fd| (path.clone(), fd)))
        .collect();
    for dir in &host.dirs {
        let covers_allowed = allowed.iter().any(|a| dir.starts_with(a));
        if covers_allowed || !dir.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            continue;
        }
        match cover_dir(dir, &kept) {
            Ok(()) => masked.dirs += 1,
            Err(e) => masked
                .problems
                .push(format!("sockets in {} are not masked ({e})", dir.display())),
        }
    }
    for socket in &host.files {
        if is_allowed(socket, allowed) {
            continue;
        }
        // Gone, covered by a masked directory, or no longer a socket: nothing to hide.
        if !std::fs::metadata(socket).is_ok_and(|m| m.file_type().is_socket()) {
            continue;
        }
        let done = mount(
            Some("/dev/null"),
            socket,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )
        .and_then(|()| remount(socket, hidden()));
        match done {
            Ok(()) => masked.sockets += 1,
            Err(e) => masked.problems.push(format!(
                "the host socket {} is not masked ({e})",
                socket.display()
            )),
        }
    }
    masked
}

fn hidden() -> MsFlags {
    MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC
}

/// An `O_PATH` descriptor of `path` (following symlinks: the user named it).
fn open_path(path: &Path) -> nix::Result<OwnedFd> {
    nix::fcntl::open(
        path,
        nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
}

/// Covers `dir` with an empty read-only tmpfs, binding back the allowed paths beneath it.
fn cover_dir(dir: &Path, kept: &[(PathBuf, OwnedFd)]) -> nix::Result<()> {
    mount(
        Some("tmpfs"),
        dir,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        Some("size=64k,mode=0755"),
    )?;
    for (path, fd) in kept.iter().filter(|(p, _)| p.starts_with(dir) && p != dir) {
        let source = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        let is_dir = source.metadata().is_ok_and(|m| m.is_dir());
        // A mount point of the same kind, in the new tmpfs.
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = if is_dir {
            std::fs::create_dir(path)
        } else {
            std::fs::File::create(path).map(drop)
        };
        mount(
            Some(&source),
            path,
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )?;
    }
    mount(
        None::<&str>,
        dir,
        None::<&str>,
        MsFlags::MS_REMOUNT | hidden(),
        None::<&str>,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_paths_come_from_the_path_column() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 21432 /run/user/1000/bus\n\
            0000000000000000: 00000003 00000000 00000000 0001 03  1675 /run/user/1000/bus\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 21433 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 21434\n\
            0000000000000000: 00000002 00000000 00010000 0001 01   123 /tmp/with space.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01   124 relative.sock\n";
        let paths: Vec<PathBuf> = bound_paths(table).into_iter().collect();
        assert_eq!(
            paths,
            [
                PathBuf::from("/run/user/1000/bus"),
                PathBuf::from("/tmp/with space.sock")
            ]
        );
    }
}
