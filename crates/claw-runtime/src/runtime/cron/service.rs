//! [`CronService`]: the jobs of one workspace, shared by the tool, the dashboard and the
//! scheduler. Each change re-reads `jobs.json` under the lock, applies itself and writes
//! the file back, so processes sharing the workspace never lose each other's changes.

use super::schedule::{CompiledSchedule, describe_stored, validate};
use super::store::{FileStamp, JobRecord, JobsFile, Store};
use super::{CronError, CronJobInfo, CronOptions, ScheduleError};
use crate::runtime::event::RuntimeEvent;
use crate::tools::cron::CronSchedule;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{Notify, watch};

/// Longest automatic job name, taken from the message when no name is given.
const AUTO_NAME_CHARS: usize = 40;

/// The cron jobs of one workspace. Cheap to clone; clones share everything.
///
/// Methods do short blocking file I/O (a read and an atomic write under `flock`);
/// async callers should use the [`crate::tools::cron::CronBackend`] impl, which moves
/// them to a blocking thread.
#[derive(Clone)]
pub struct CronService {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) store: Store,
    pub(super) options: CronOptions,
    /// Held across each read or write of `jobs.json` and the install of what it gave:
    /// two threads installing in the other order than they read would put an older
    /// version over a newer one, and a job just added would be missing from it.
    io: Mutex<()>,
    snapshot: Mutex<Snapshot>,
    /// Wakes the scheduler to recompute its sleep after a change in this process.
    pub(super) wake: Notify,
    feed: watch::Sender<Vec<CronJobInfo>>,
    /// The session that jobs added from now on belong to.
    origin: Mutex<Option<String>>,
    /// Why `jobs.json` cannot be used right now, as last reported.
    problem: Mutex<Option<String>>,
}

/// The jobs as last read or written, with their schedules compiled once.
#[derive(Default)]
pub(super) struct Snapshot {
    pub(super) jobs: Vec<Loaded>,
    stamp: Option<FileStamp>,
}

pub(super) struct Loaded {
    pub(super) record: JobRecord,
    pub(super) compiled: Result<CompiledSchedule, ScheduleError>,
    /// `next_fire`, computed once: it depends only on the record, which a `Loaded`
    /// never changes, and the scheduler asks for it on every wake.
    next: Option<DateTime<Utc>>,
}

impl Loaded {
    pub(super) fn new(
        record: JobRecord,
        compiled: Result<CompiledSchedule, ScheduleError>,
    ) -> Self {
        let next = if record.paused || record.done {
            None
        } else {
            compiled
                .as_ref()
                .ok()
                .and_then(|c| c.next_after(record.handled_until))
        };
        Self {
            record,
            compiled,
            next,
        }
    }

    /// The next slot this job would fire, if it is active.
    pub(super) fn next_fire(&self) -> Option<DateTime<Utc>> {
        self.next
    }

    fn info(&self) -> CronJobInfo {
        let last = self.record.runs.last();
        CronJobInfo {
            id: self.record.id.clone(),
            name: self.record.name.clone(),
            message: self.record.message.clone(),
            schedule: match &self.compiled {
                Ok(c) => c.describe(),
                Err(_) => describe_stored(&self.record.schedule),
            },
            next_fire: self.next_fire(),
            paused: self.record.paused,
            done: self.record.done,
            last_status: last.map(|r| r.status),
            last_run_at: last.map(|r| r.recorded_at),
            problem: self.compiled.as_ref().err().map(ToString::to_string),
        }
    }
}

/// The result of pause or resume.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobChange {
    /// The job after the call.
    pub job: CronJobInfo,
    /// False when it already was in the requested state.
    pub changed: bool,
}

impl CronService {
    /// Opens the jobs of `workspace` stored under `data_dir`, creating the directory
    /// (failing only if that is impossible). A `jobs.json` that cannot be read is left
    /// alone and reported (see [`Self::problem`]): the service then has no jobs, every
    /// action fails with the reason, and it recovers once the file is fixed. Does not
    /// fire anything; see [`Self::start_scheduler`].
    pub fn open(
        data_dir: &Path,
        workspace: &Path,
        options: CronOptions,
    ) -> Result<Self, CronError> {
        let store = Store::new(data_dir, workspace)?;
        let inner = Arc::new(Inner {
            store,
            options,
            io: Mutex::new(()),
            snapshot: Mutex::new(Snapshot::default()),
            wake: Notify::new(),
            feed: watch::Sender::new(Vec::new()),
            origin: Mutex::new(None),
            problem: Mutex::new(None),
        });
        // A failure is reported by `refresh` and remembered in `problem`.
        let _ = inner.refresh();
        Ok(Self { inner })
    }

    /// Why `jobs.json` cannot be used right now (no job fires until it can), if it
    /// cannot.
    pub fn problem(&self) -> Option<String> {
        self.inner
            .problem
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The directory holding this workspace's `jobs.json` and lock files.
    pub fn dir(&self) -> &Path {
        self.inner.store.dir()
    }

    /// Adds a job; nothing is stored if the schedule is invalid.
    pub fn add(
        &self,
        name: Option<String>,
        message: String,
        schedule: CronSchedule,
    ) -> Result<CronJobInfo, CronError> {
        if message.trim().is_empty() {
            return Err(CronError::EmptyMessage);
        }
        let now = self.inner.now();
        let schedule = validate(&schedule, now)?;
        let name = name
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| auto_name(&message));
        let session = self
            .inner
            .origin
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let added = self.inner.change(|file| {
            let job = JobRecord {
                id: format!("cron-{}", file.next_id),
                name,
                message,
                schedule,
                created_at: now,
                paused: false,
                done: false,
                handled_until: now,
                runs: Vec::new(),
                session: session.clone(),
            };
            file.next_id += 1;
            file.jobs.push(job.clone());
            Ok(job)
        })?;
        // Told from what this change wrote: by now another change may have removed it.
        Ok(info_of(added))
    }

    /// Sets the session that jobs added from now on belong to (their fires are
    /// delivered to it); `None` for jobs that go to whichever session is active.
    pub fn set_origin(&self, session: Option<String>) {
        *self.inner.origin.lock().unwrap_or_else(|p| p.into_inner()) = session;
    }

    /// All jobs, re-read from disk so changes by other processes show.
    pub fn list(&self) -> Result<Vec<CronJobInfo>, CronError> {
        self.inner.refresh()?;
        Ok(self.inner.infos())
    }

    /// Deletes a job; returns it as it was.
    pub fn remove(&self, id: &str) -> Result<CronJobInfo, CronError> {
        let id = id.trim();
        let removed = self.inner.change(|file| {
            let at = file
                .jobs
                .iter()
                .position(|j| j.id == id)
                .ok_or_else(|| CronError::UnknownJob { id: id.to_owned() })?;
            Ok(file.jobs.remove(at))
        })?;
        Ok(info_of(removed))
    }

    /// Stops a job from firing. Slots that pass while paused are skipped, not missed.
    pub fn pause(&self, id: &str) -> Result<JobChange, CronError> {
        let id = id.trim();
        let (job, changed) = self.inner.change(|file| {
            let job = file.job_mut(id)?;
            let changed = !job.paused;
            job.paused = true;
            Ok((job.clone(), changed))
        })?;
        Ok(JobChange {
            job: info_of(job),
            changed,
        })
    }

    /// Lets a paused job fire again, from its next slot after now.
    pub fn resume(&self, id: &str) -> Result<JobChange, CronError> {
        let id = id.trim();
        let now = self.inner.now();
        let (job, changed) = self.inner.change(|file| {
            let job = file.job_mut(id)?;
            if job.done {
                return Err(CronError::AlreadyHadItsTime {
                    name: job.name.clone(),
                    id: id.to_owned(),
                });
            }
            if !job.paused {
                return Ok((job.clone(), false));
            }
            job.paused = false;
            job.handled_until = job.handled_until.max(now);
            Ok((job.clone(), true))
        })?;
        Ok(JobChange {
            job: info_of(job),
            changed,
        })
    }

    /// The dashboard feed: the job list, updated after every change, fire and reload.
    pub fn subscribe(&self) -> watch::Receiver<Vec<CronJobInfo>> {
        self.inner.feed.subscribe()
    }

    /// The next fire time of every loaded job, as computed when the jobs were last
    /// loaded or changed (no file access).
    pub fn next_fires(&self) -> Vec<(String, Option<DateTime<Utc>>)> {
        self.inner
            .snapshot()
            .jobs
            .iter()
            .map(|j| (j.record.id.clone(), j.next_fire()))
            .collect()
    }

    /// The current time on the service's clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.inner.now()
    }
}

impl Inner {
    pub(super) fn now(&self) -> DateTime<Utc> {
        self.options.clock.now()
    }

    pub(super) fn snapshot(&self) -> MutexGuard<'_, Snapshot> {
        // A panic while holding the lock cannot leave the snapshot half-built (it is
        // replaced whole), so a poisoned lock is still good to use.
        self.snapshot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies `f` to the file under the lock, then refreshes the snapshot and the feed
    /// and wakes the scheduler.
    pub(super) fn change<R>(
        &self,
        f: impl FnOnce(&mut JobsFile) -> Result<R, CronError>,
    ) -> Result<R, CronError> {
        let result = self.update_file(f)?;
        self.wake.notify_one();
        Ok(result)
    }

    /// Read-modify-write of `jobs.json` (see [`Store::update`]); the snapshot follows,
    /// and trouble with the file is reported.
    pub(super) fn update_file<R>(
        &self,
        f: impl FnOnce(&mut JobsFile) -> Result<R, CronError>,
    ) -> Result<R, CronError> {
        let _io = self.io();
        let (result, file, stamp) = self.store.update(f).inspect_err(|e| self.failed(e))?;
        self.install(file, stamp);
        Ok(result)
    }

    fn io(&self) -> MutexGuard<'_, ()> {
        // Guards no data of its own: a panic while it was held leaves nothing half-done.
        self.io.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Re-reads `jobs.json` if another process replaced it (or it could not be read).
    pub(super) fn refresh(&self) -> Result<bool, CronError> {
        let _io = self.io();
        let current = self.store.stamp();
        if current.is_some() && current == self.snapshot().stamp {
            return Ok(false);
        }
        let (file, stamp) = self.store.load().inspect_err(|e| self.failed(e))?;
        self.install(file, stamp);
        Ok(true)
    }

    /// Reports trouble with `jobs.json` once (until it changes or goes away).
    fn failed(&self, error: &CronError) {
        if !error.is_file_problem() {
            return;
        }
        let message = format!("Cron jobs are stopped: {error}");
        let mut problem = self.problem.lock().unwrap_or_else(|p| p.into_inner());
        if problem.as_deref() == Some(message.as_str()) {
            return;
        }
        tracing::warn!("{message}");
        *problem = Some(message.clone());
        drop(problem);
        self.options
            .events
            .send(RuntimeEvent::CronStatus { ok: false, message });
    }

    /// `jobs.json` was read or written: a problem reported earlier is over.
    fn recovered(&self) {
        let mut problem = self.problem.lock().unwrap_or_else(|p| p.into_inner());
        if problem.take().is_none() {
            return;
        }
        drop(problem);
        let message = format!(
            "Cron jobs run again: {} can be used again.",
            self.store.jobs_path().display()
        );
        tracing::info!("{message}");
        self.options
            .events
            .send(RuntimeEvent::CronStatus { ok: true, message });
    }

    /// Replaces the snapshot with `file`, compiling only schedules that changed.
    pub(super) fn install(&self, file: JobsFile, stamp: Option<FileStamp>) {
        let mut snapshot = self.snapshot();
        let mut previous: HashMap<String, Loaded> = std::mem::take(&mut snapshot.jobs)
            .into_iter()
            .map(|l| (l.record.id.clone(), l))
            .collect();
        let jobs = file
            .jobs
            .into_iter()
            .map(|record| {
                let reused = previous
                    .remove(&record.id)
                    .filter(|p| p.record.schedule == record.schedule)
                    .map(|p| p.compiled);
                let compiled =
                    reused.unwrap_or_else(|| CompiledSchedule::compile(&record.schedule));
                Loaded::new(record, compiled)
            })
            .collect();
        *snapshot = Snapshot { jobs, stamp };
        let infos = snapshot.jobs.iter().map(Loaded::info).collect();
        drop(snapshot);
        self.feed.send_replace(infos);
        self.recovered();
    }

    pub(super) fn infos(&self) -> Vec<CronJobInfo> {
        self.snapshot().jobs.iter().map(Loaded::info).collect()
    }
}

/// A job as the dashboard and `list` show it, from its record.
fn info_of(record: JobRecord) -> CronJobInfo {
    let compiled = CompiledSchedule::compile(&record.schedule);
    Loaded::new(record, compiled).info()
}

/// A name from the start of the message, for jobs added without one.
fn auto_name(message: &str) -> String {
    let line = message.trim().lines().next().unwrap_or_default().trim();
    let mut name: String = line.chars().take(AUTO_NAME_CHARS).collect();
    if line.chars().count() > AUTO_NAME_CHARS {
        name.push('…');
    }
    name
}
