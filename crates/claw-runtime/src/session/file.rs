//! Where session files live, and the one place that opens and creates them (the session
//! file itself, its side files, its directory), so how they are created is decided here:
//! all of them private (`private_fs`: 0600 files in 0700 directories), since a session
//! and its side files hold whatever was pasted into a prompt.

use super::{SessionError, workspace_slug};
use crate::private_fs;
use nix::fcntl::{Flock, FlockArg};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// The directory holding a workspace's sessions.
pub fn sessions_dir(data_dir: &Path, workspace: &Path) -> PathBuf {
    data_dir.join("sessions").join(workspace_slug(workspace))
}

/// Where the bytes of damaged lines cut from a session file, or from a file beside it,
/// are kept: `.jsonl` replaced by `.damaged` (`<session>.damaged`,
/// `<session>.events.damaged`), any other name with `.damaged` added
/// (`<session>.subagents.damaged`, apart from the session's own).
pub fn damaged_path(file: &Path) -> PathBuf {
    if file.extension().is_some_and(|x| x == "jsonl") {
        return file.with_extension("damaged");
    }
    let mut name = file.as_os_str().to_owned();
    name.push(".damaged");
    PathBuf::from(name)
}

/// Where the answer being streamed is recorded while a run is active (see
/// `streaming.rs`): present only while a run is active, or after a crash.
pub fn streaming_path(session: &Path) -> PathBuf {
    session.with_extension("streaming")
}

/// Whether `path` names a session file (not one of its side files; the logs beside
/// it, `<session>.events.jsonl` and `<session>.requests.jsonl`, end in `.jsonl` too).
pub(super) fn is_session_file(path: &Path) -> bool {
    let side_log = path
        .file_stem()
        .map(Path::new)
        .and_then(Path::extension)
        .is_some_and(|x| x == "events" || x == "requests");
    path.extension().is_some_and(|x| x == "jsonl") && !side_log
}

/// The session id a file name carries (`<stamp>_<id>.jsonl`), or its whole stem.
pub(super) fn id_from_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_string_lossy();
    let id = stem.rsplit('_').next().unwrap_or(&stem);
    (!id.is_empty()).then(|| id.to_owned())
}

/// When the file was created, from its name (`<stamp>_<id>.jsonl`, the stamp in UTC to
/// the second), in ms since the epoch: for a file whose header line is missing.
pub(super) fn created_from_name(path: &Path) -> Option<u64> {
    let stem = path.file_stem()?.to_string_lossy();
    let (stamp, _) = stem.split_once('_')?;
    let time = chrono::NaiveDateTime::parse_from_str(stamp, "%Y%m%dT%H%M%SZ").ok()?;
    u64::try_from(time.and_utc().timestamp_millis()).ok()
}

/// Creates the directory of a workspace's sessions below the data dir `data_dir`, private
/// from the data dir down (tightening what an older version left open to others).
pub(super) fn create_dir(data_dir: &Path, dir: &Path) -> Result<(), SessionError> {
    private_fs::create_dir(data_dir, dir).map_err(|e| SessionError::io(dir, e))
}

/// Opens (or, with `create`, creates) a session file for appending and takes its
/// exclusive lock; `Locked` when another process holds it.
pub(super) fn open_locked(path: &Path, create: bool) -> Result<Flock<File>, SessionError> {
    let file = private_fs::open(
        path,
        OpenOptions::new().create(create).read(true).append(true),
    )
    .map_err(|e| SessionError::io(path, e))?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|_| SessionError::Locked {
        path: path.display().to_string(),
    })
}

/// Whether another process holds the lock of the session file at `path` (writes it now).
pub(super) fn in_use(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    Flock::lock(file, FlockArg::LockSharedNonblock).is_err()
}

/// Opens a side file (inbox, damaged lines) for appending, creating it private if needed.
pub(super) fn open_side_append(path: &Path) -> std::io::Result<File> {
    private_fs::open(path, OpenOptions::new().create(true).append(true))
}

/// Opens a log beside the session (events, requests) for reading and appending; with
/// `create`, creates it private if needed.
pub(super) fn open_side_log(path: &Path, create: bool) -> std::io::Result<File> {
    private_fs::open(
        path,
        OpenOptions::new().create(create).read(true).append(true),
    )
}

/// Creates (or empties) a private side file for writing from the start.
pub(super) fn create_side(path: &Path) -> std::io::Result<File> {
    private_fs::open(
        path,
        OpenOptions::new().create(true).write(true).truncate(true),
    )
}
