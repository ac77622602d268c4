//! The command's view of the file system, made by its init in the new mount namespace
//! (nothing here is seen outside it):
//!
//! - a /proc of the new pid namespace and a /dev/pts of its own;
//! - a size-limited tmpfs over the private temp dir (`--tmpfs`);
//! - every writable path bound onto itself `nosuid,nodev`, so a set-user-ID file the
//!   command makes confers nothing;
//! - the guarded paths (`--read-only`, `--pin`): protected configuration read-only, the
//!   `.git` directory pinned so it cannot be renamed away and recreated;
//! - host unix sockets masked (sockets.rs).
//!
//! Each mount that fails is named in the report's problems; the rest still happen.

use super::options::{GuardKind, LauncherOptions};
use super::sockets::{self, HostSockets};
use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sys::statvfs::{FsFlags, statvfs};
use std::path::Path;

/// What the init made of the command's view.
#[derive(Debug, Default)]
pub(super) struct View {
    pub private_proc: bool,
    pub private_pts: bool,
    /// The guarded paths now held in place.
    pub guarded: usize,
    /// Every writable path is `nosuid`.
    pub nosuid: bool,
    /// The size of the tmpfs over the private temp dir, when there is one.
    pub tmpfs: Option<u64>,
    pub sockets_masked: usize,
    pub socket_dirs_masked: usize,
    /// What did not work.
    pub problems: Vec<String>,
}

const NONE: Option<&str> = None;

/// Prepares the mount namespace for the command.
pub(super) fn prepare(options: &LauncherOptions, host: &HostSockets) -> View {
    let mut view = View::default();
    if let Err(e) = mount(NONE, "/", NONE, MsFlags::MS_REC | MsFlags::MS_PRIVATE, NONE) {
        // Without private propagation, new mounts would show up outside: make none.
        view.problems.push(format!(
            "mounts stay shared ({e}), so the command's view of the file system is the host's"
        ));
        return view;
    }
    private_proc_and_pts(&mut view);
    if let Some((dir, size)) = &options.tmpfs {
        let data = format!("size={size},mode=0700");
        match mount(
            Some("tmpfs"),
            dir,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(data.as_str()),
        ) {
            Ok(()) => view.tmpfs = Some(*size),
            Err(e) => view
                .problems
                .push(format!("no tmpfs over {} ({e})", dir.display())),
        }
    }
    view.nosuid = true;
    for path in &options.writes {
        let is_tmpfs = view.tmpfs.is_some() && options.tmpfs.as_ref().is_some_and(|t| &t.0 == path);
        if path.starts_with("/dev") || path == Path::new("/") || is_tmpfs {
            continue;
        }
        if let Err(e) = bind_self(path, MsFlags::MS_NOSUID | MsFlags::MS_NODEV) {
            view.nosuid = false;
            view.problems
                .push(format!("{} is not nosuid ({e})", path.display()));
        }
    }
    for guard in &options.guards {
        // Claw-tui never sends a symlink; one here now was swapped in since.
        if guard.path.symlink_metadata().is_ok_and(|m| m.is_symlink()) {
            view.problems.push(format!(
                "{} became a symlink and is not guarded",
                guard.path.display()
            ));
            continue;
        }
        let safe = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
        let done = match guard.kind {
            GuardKind::ReadOnly => bind_self(&guard.path, safe | MsFlags::MS_RDONLY),
            // Writable again inside a read-only parent (`.claw-tui/MEMORY.md`).
            GuardKind::Pin => {
                bind(&guard.path).and_then(|()| remount_with(&guard.path, safe, MsFlags::MS_RDONLY))
            }
        };
        match done {
            Ok(()) => view.guarded += 1,
            Err(e) => view
                .problems
                .push(format!("{} is not guarded ({e})", guard.path.display())),
        }
    }
    let masked = sockets::mask(host, &options.allow_sockets);
    view.sockets_masked = masked.sockets;
    view.socket_dirs_masked = masked.dirs;
    view.problems.extend(masked.problems);
    // The working directory still points into the mounts as they were: relative paths
    // from it would pass beneath every mount made above. Enter it again by its name.
    if let Err(e) = std::env::current_dir().and_then(std::env::set_current_dir) {
        view.guarded = 0;
        view.problems
            .push(format!("cannot enter the working directory again ({e})"));
    }
    view
}

/// A /proc of the new pid namespace (so the command sees only its own processes, and
/// `$!` matches /proc), and a /dev/pts of its own (so it cannot open the user's
/// terminals).
fn private_proc_and_pts(view: &mut View) {
    let hardened = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    match mount(Some("proc"), "/proc", Some("proc"), hardened, NONE) {
        Ok(()) => view.private_proc = true,
        Err(e) => view.problems.push(format!("no private /proc ({e})")),
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
            NONE,
            MsFlags::MS_BIND,
            NONE,
        )
        .inspect_err(|_| {
            let _ = umount2("/dev/pts", MntFlags::MNT_DETACH);
        })
    });
    match pts {
        Ok(()) => view.private_pts = true,
        Err(e) => view.problems.push(format!("no private /dev/pts ({e})")),
    }
}

/// Binds `path` onto itself (with what is mounted beneath it) and remounts that with
/// `flags` added to the ones it has.
pub(super) fn bind_self(path: &Path, flags: MsFlags) -> nix::Result<()> {
    bind(path)?;
    remount(path, flags)
}

fn bind(path: &Path) -> nix::Result<()> {
    mount(
        Some(path),
        path,
        NONE,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        NONE,
    )
}

/// Remounts the bind mount at `path` with `flags` added. The flags it has are kept: in a
/// user namespace the kernel refuses to clear those the mount came with.
pub(super) fn remount(path: &Path, flags: MsFlags) -> nix::Result<()> {
    remount_with(path, flags, MsFlags::empty())
}

/// [`remount`], clearing `clear` (only possible for flags this namespace set itself).
fn remount_with(path: &Path, flags: MsFlags, clear: MsFlags) -> nix::Result<()> {
    let mut keep = MsFlags::empty();
    if let Ok(stat) = statvfs(path) {
        let has = stat.flags();
        for (fs, ms) in [
            (FsFlags::ST_RDONLY, MsFlags::MS_RDONLY),
            (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
            (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
            (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
            (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
            (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
            (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
        ] {
            if has.contains(fs) {
                keep |= ms;
            }
        }
    }
    mount(
        NONE,
        path,
        NONE,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | (keep - clear) | flags,
        NONE,
    )
}
