//! `jobs.json` in `<data_dir>/cron/<workspace-slug>/`: the versioned file format, atomic
//! writes, and the two `flock` locks (a short one around every read-modify-write, and a
//! long one held by the process that fires jobs).

use super::schedule::JobSchedule;
use super::{CorruptReason, CronError};
use chrono::{DateTime, Utc};
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The `jobs.json` format version this build reads and writes.
pub const FILE_VERSION: u64 = 1;

/// Run records kept per job; older ones are dropped.
pub const MAX_RUNS: usize = 20;

/// The whole `jobs.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobsFile {
    /// Format version; a newer one is refused rather than misread.
    pub version: u64,
    /// The workspace the jobs belong to, for people reading the file.
    pub workspace: String,
    /// The number in the next job id (`cron-N`); ids are never reused.
    pub next_id: u64,
    /// The jobs, in creation order.
    pub jobs: Vec<JobRecord>,
}

impl JobsFile {
    fn empty(workspace: &str) -> Self {
        Self {
            version: FILE_VERSION,
            workspace: workspace.to_owned(),
            next_id: 1,
            jobs: Vec::new(),
        }
    }

    /// The job with `id`.
    pub fn job_mut(&mut self, id: &str) -> Result<&mut JobRecord, CronError> {
        self.jobs
            .iter_mut()
            .find(|j| j.id == id)
            .ok_or_else(|| CronError::UnknownJob { id: id.to_owned() })
    }
}

/// One scheduled job as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecord {
    /// `cron-N`, unique within the workspace.
    pub id: String,
    /// Short name shown in notifications and lists.
    pub name: String,
    /// Text delivered to the agent when the job fires.
    pub message: String,
    /// When it fires.
    pub schedule: JobSchedule,
    /// When it was added.
    pub created_at: DateTime<Utc>,
    /// A paused job's slots pass without firing or being recorded.
    pub paused: bool,
    /// A one-shot job whose slot has been handled.
    pub done: bool,
    /// Every slot at or before this instant has been handled (fired, missed or paused
    /// over), so a slot is never fired twice.
    pub handled_until: DateTime<Utc>,
    /// The latest runs, oldest first, at most [`MAX_RUNS`].
    pub runs: Vec<RunRecord>,
    /// The session that added it; its notifications go back there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

impl JobRecord {
    /// Appends a run, dropping the oldest beyond [`MAX_RUNS`].
    pub fn push_run(&mut self, run: RunRecord) {
        self.runs.push(run);
        let excess = self.runs.len().saturating_sub(MAX_RUNS);
        self.runs.drain(..excess);
    }
}

/// One handled slot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The slot (scheduled time).
    pub slot: DateTime<Utc>,
    /// When it was handled.
    pub recorded_at: DateTime<Utc>,
    /// What happened.
    pub status: RunStatus,
    /// Details, e.g. how many earlier slots were missed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What happened to a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Recorded just before delivery; becomes `fired` or `failed` right after.
    Firing,
    /// Delivered.
    Fired,
    /// Not delivered: the app was closed (or asleep) past the grace window.
    Missed,
    /// Delivery failed, or the app stopped during it (it is not retried, so the
    /// message is never delivered twice).
    Failed,
}

impl RunStatus {
    /// The status as a lowercase word.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Firing => "firing",
            Self::Fired => "fired",
            Self::Missed => "missed",
            Self::Failed => "failed",
        }
    }
}

/// Identifies one version of `jobs.json`: every write renames a new file in, so the
/// inode changes even when size and mtime do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    ino: u64,
    mtime_ns: i128,
    len: u64,
}

impl FileStamp {
    fn of(meta: &std::fs::Metadata) -> Self {
        Self {
            ino: meta.ino(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            len: meta.len(),
        }
    }
}

/// Held by the one process that fires this workspace's jobs; dropping it releases the
/// lock (as does the process ending, however it ends).
#[derive(Debug)]
pub struct SchedulerLock {
    _lock: Flock<File>,
}

/// The files of one workspace's jobs.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
    jobs: PathBuf,
    lock: PathBuf,
    scheduler_lock: PathBuf,
    workspace: String,
}

impl Store {
    /// The store for `workspace` under `data_dir`, creating its directory.
    pub fn new(data_dir: &Path, workspace: &Path) -> Result<Self, CronError> {
        let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_owned());
        let dir = data_dir.join("cron").join(workspace_slug(&workspace));
        crate::private_fs::create_dir(data_dir, &dir)
            .map_err(|e| CronError::io("create the directory", &dir, e))?;
        Ok(Self {
            jobs: dir.join("jobs.json"),
            lock: dir.join("jobs.lock"),
            scheduler_lock: dir.join("scheduler.lock"),
            workspace: workspace.to_string_lossy().into_owned(),
            dir,
        })
    }

    /// The directory holding `jobs.json` and the lock files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of `jobs.json`.
    pub fn jobs_path(&self) -> &Path {
        &self.jobs
    }

    /// Reads `jobs.json` (no file: no jobs). Readers need no lock because writers only
    /// ever rename a complete file into place.
    pub fn load(&self) -> Result<(JobsFile, Option<FileStamp>), CronError> {
        let mut file = match crate::private_fs::open(&self.jobs, OpenOptions::new().read(true)) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((JobsFile::empty(&self.workspace), None));
            }
            Err(e) => return Err(CronError::io("open", &self.jobs, e)),
        };
        // The stamp comes from the opened file, so it matches the content read below
        // even if another process renames a new version in meanwhile.
        let meta = file
            .metadata()
            .map_err(|e| CronError::io("read", &self.jobs, e))?;
        let mut text = String::new();
        file.read_to_string(&mut text)
            .map_err(|e| CronError::io("read", &self.jobs, e))?;
        Ok((self.decode(&text)?, Some(FileStamp::of(&meta))))
    }

    fn decode(&self, text: &str) -> Result<JobsFile, CronError> {
        let corrupt = |reason: CorruptReason| CronError::Corrupt {
            path: self.jobs.clone(),
            reason,
        };
        let json = |e: serde_json::Error| corrupt(CorruptReason::Json(Arc::new(e)));
        let value: serde_json::Value = serde_json::from_str(text).map_err(json)?;
        let version = value
            .get("version")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| corrupt(CorruptReason::NoVersion))?;
        if version > FILE_VERSION {
            return Err(CronError::NewerVersion {
                path: self.jobs.clone(),
                found: version,
                supported: FILE_VERSION,
            });
        }
        if version < FILE_VERSION {
            return Err(corrupt(CorruptReason::UnknownVersion(version)));
        }
        serde_json::from_value(value).map_err(json)
    }

    /// The stamp of the current `jobs.json`, to notice writes by other processes.
    pub fn stamp(&self) -> Option<FileStamp> {
        std::fs::metadata(&self.jobs)
            .ok()
            .map(|m| FileStamp::of(&m))
    }

    /// Read-modify-write under the exclusive `jobs.lock`, so changes from several
    /// processes never overwrite each other. `change` sees the file as it is on disk
    /// now; it is written back only if it changed. Returns the file as it now stands.
    pub fn update<R>(
        &self,
        change: impl FnOnce(&mut JobsFile) -> Result<R, CronError>,
    ) -> Result<(R, JobsFile, Option<FileStamp>), CronError> {
        let _lock = self.lock_exclusive()?;
        let (mut file, stamp) = self.load()?;
        let before = file.clone();
        let result = change(&mut file)?;
        if file == before {
            return Ok((result, file, stamp));
        }
        let stamp = self.write_atomically(&file)?;
        Ok((result, file, Some(stamp)))
    }

    fn lock_exclusive(&self) -> Result<Flock<File>, CronError> {
        let file = open_lock_file(&self.lock)?;
        let mut file = file;
        loop {
            match Flock::lock(file, FlockArg::LockExclusive) {
                Ok(lock) => return Ok(lock),
                Err((f, Errno::EINTR)) => file = f,
                Err((_, errno)) => {
                    return Err(CronError::io(
                        "lock",
                        &self.lock,
                        std::io::Error::from(errno),
                    ));
                }
            }
        }
    }

    /// Writes to a temp file in the same directory, syncs it, and renames it over
    /// `jobs.json`, so readers and a crash only ever see a complete file.
    fn write_atomically(&self, file: &JobsFile) -> Result<FileStamp, CronError> {
        let mut text = serde_json::to_vec_pretty(file).map_err(|e| CronError::Encode {
            path: self.jobs.clone(),
            source: Arc::new(e),
        })?;
        text.push(b'\n');
        let mut temp = tempfile::Builder::new()
            .prefix(".jobs.json.")
            .suffix(".tmp")
            .tempfile_in(&self.dir)
            .map_err(|e| CronError::io("create a temp file in", &self.dir, e))?;
        let tmp_path = temp.path().to_owned();
        temp.write_all(&text)
            .and_then(|()| temp.as_file().sync_all())
            .map_err(|e| CronError::io("write", &tmp_path, e))?;
        let persisted = temp
            .persist(&self.jobs)
            .map_err(|e| CronError::io("replace", &self.jobs, e.error))?;
        let meta = persisted
            .metadata()
            .map_err(|e| CronError::io("read", &self.jobs, e))?;
        // The rename itself must reach the disk before a fire is delivered.
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| CronError::io("sync", &self.dir, e))?;
        Ok(FileStamp::of(&meta))
    }

    /// Takes the scheduler lock if no other process (or service) holds it.
    pub fn try_lock_scheduler(&self) -> Result<Option<SchedulerLock>, CronError> {
        let mut file = open_lock_file(&self.scheduler_lock)?;
        loop {
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(lock) => return Ok(Some(SchedulerLock { _lock: lock })),
                Err((_, Errno::EWOULDBLOCK)) => return Ok(None),
                Err((f, Errno::EINTR)) => file = f,
                Err((_, errno)) => {
                    return Err(CronError::io(
                        "lock",
                        &self.scheduler_lock,
                        std::io::Error::from(errno),
                    ));
                }
            }
        }
    }
}

fn open_lock_file(path: &Path) -> Result<File, CronError> {
    crate::private_fs::open(
        path,
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true),
    )
    .map_err(|e| CronError::io("open", path, e))
}

/// The directory name for a workspace: its last path component (made safe) and a hash
/// of the whole path, so two `app` folders in different places do not share jobs.
pub fn workspace_slug(workspace: &Path) -> String {
    let full = workspace.to_string_lossy();
    // FNV-1a: tiny, and stable across Rust versions, unlike `DefaultHasher`.
    let hash = full.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let name = if name.is_empty() {
        "root".to_owned()
    } else {
        name
    };
    format!("{name}-{:012x}", hash & 0xffff_ffff_ffff)
}
