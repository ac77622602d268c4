//! The private temp dir of one claw-tui process: `claw-tui-PID-XXXXXX` in the system
//! temp dir, mode 0700, the only place under it that sandboxed commands may write
//! (exported to them as `TMPDIR`). Made on first use, removed by [`PrivateTempDir`]'s
//! guard at exit; a dir left by a process that was killed is removed by the next one.

use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

static DIR: Mutex<Option<tempfile::TempDir>> = Mutex::new(None);

const PREFIX: &str = "claw-tui-";

/// The process's private temp dir (made on first call).
pub fn private_temp_dir() -> io::Result<PathBuf> {
    let mut dir = DIR.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(dir) = dir.as_ref() {
        return Ok(dir.path().to_path_buf());
    }
    let base = std::env::temp_dir();
    let base = base.canonicalize().unwrap_or(base);
    remove_stale(&base);
    let made = tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}-", std::process::id()))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(&base)?;
    let path = made.path().to_path_buf();
    *dir = Some(made);
    Ok(path)
}

/// Removes the private temp dir when dropped; hold one for the life of the process.
#[derive(Debug)]
#[must_use = "the temp dir is removed when the guard is dropped"]
pub struct PrivateTempDir(());

impl PrivateTempDir {
    /// The guard (the dir itself is made on first use).
    pub fn guard() -> Self {
        Self(())
    }
}

impl Drop for PrivateTempDir {
    fn drop(&mut self) {
        let dir = DIR
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        drop(dir);
    }
}

/// Removes `claw-tui-PID-*` dirs of this user whose process no longer runs.
fn remove_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let me = nix::unistd::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let running = Path::new(&format!("/proc/{pid}")).exists();
        if meta.is_dir() && meta.uid() == me && !running {
            // remove_dir_all does not follow symlinks, so nothing outside can be reached.
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
