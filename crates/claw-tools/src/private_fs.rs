//! Files only their owner may read. Everything claw-tui keeps under its data and state
//! dirs (sessions, inboxes, the composer history, cron jobs and their locks, the log)
//! may hold secrets pasted into a prompt, so each file there is 0600 in a 0700
//! directory whatever the umask; a file or directory left looser by an older version is
//! tightened when it is next opened.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Whether `file` ends in the middle of a line: an append-only log torn by a crash or a
/// full disk, where the next record must start a line of its own.
pub fn ends_mid_line(file: &File) -> io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0u8];
    file.read_exact_at(&mut last, len - 1)?;
    Ok(last[0] != b'\n')
}

/// The mode of a private file.
pub const FILE_MODE: u32 = 0o600;
/// The mode of a private directory.
pub const DIR_MODE: u32 = 0o700;

/// Makes `dir` a private directory below (or equal to) the private `top` (the data or
/// state dir): what is missing is created 0700, as XDG asks of new base directories,
/// and `top` and each directory from it down to `dir` lose any group and other
/// access. Directories above `top` that exist are left as they are. Tightening is
/// best effort (a file system without modes, a directory someone else owns): a failure
/// is logged, not fatal, since nothing better could be done about it here.
pub fn create_dir(top: &Path, dir: &Path) -> io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    let below = dir.strip_prefix(top).map_err(|_| {
        io::Error::other(format!("{} is not inside {}", dir.display(), top.display()))
    })?;
    let mut current = top.to_path_buf();
    tighten_path(&current);
    for component in below.components() {
        current.push(component);
        tighten_path(&current);
    }
    Ok(())
}

/// Opens `path` with `options`, creating the file 0600 if it is missing; an existing
/// file that others could read is tightened through the open handle (best effort, as
/// for directories).
pub fn open(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    let file = options.mode(FILE_MODE).open(path)?;
    let tightened = file.metadata().and_then(|meta| {
        let mode = meta.permissions().mode();
        if mode & 0o077 == 0 {
            return Ok(());
        }
        file.set_permissions(PermissionsExt::from_mode(mode & 0o7700))
    });
    if let Err(e) = tightened {
        tracing::warn!("cannot make {} private: {e}", path.display());
    }
    Ok(file)
}

/// Takes group and other access away from the directory at `path`.
fn tighten_path(path: &Path) {
    let tightened = std::fs::metadata(path).and_then(|meta| {
        let mode = meta.permissions().mode();
        if mode & 0o077 == 0 {
            return Ok(());
        }
        std::fs::set_permissions(path, PermissionsExt::from_mode(mode & 0o7700))
    });
    if let Err(e) = tightened {
        tracing::warn!("cannot make {} private: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_new_tree_is_private_and_an_old_one_is_tightened() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("xdg/claw-tui");
        let dir = top.join("sessions/slug");
        create_dir(&top, &dir).unwrap();
        for d in [
            tmp.path().join("xdg"),
            top.clone(),
            top.join("sessions"),
            dir.clone(),
        ] {
            assert_eq!(mode(&d), DIR_MODE, "{}", d.display());
        }
        std::fs::set_permissions(&top, PermissionsExt::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&dir, PermissionsExt::from_mode(0o775)).unwrap();
        create_dir(&top, &dir).unwrap();
        assert_eq!((mode(&top), mode(&dir)), (DIR_MODE, DIR_MODE));
        assert!(create_dir(&top, tmp.path()).is_err(), "outside the top");
    }

    #[test]
    fn files_are_created_private_and_loose_ones_tightened() {
        let tmp = tempfile::tempdir().unwrap();
        let new = tmp.path().join("new.jsonl");
        open(&new, OpenOptions::new().create(true).append(true)).unwrap();
        assert_eq!(mode(&new), FILE_MODE);
        let old = tmp.path().join("old.log");
        std::fs::write(&old, "x").unwrap();
        std::fs::set_permissions(&old, PermissionsExt::from_mode(0o644)).unwrap();
        open(&old, OpenOptions::new().read(true)).unwrap();
        assert_eq!(mode(&old), FILE_MODE);
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "x");
    }
}
