//! Durable cron jobs for one workspace.
//!
//! Jobs live in `<data_dir>/cron/<workspace-slug>/jobs.json` and survive restarts. Any
//! process can add, list, pause, resume and remove jobs ([`CronService::open`]); only one
//! process per workspace fires them ([`CronService::start_scheduler`]), chosen by a
//! `flock` on `scheduler.lock`, so no job fires twice however many claw-tui processes
//! share the workspace. `-p` mode opens the service for the tool and never starts the
//! scheduler.
//!
//! Exactly-once per slot: the scheduler records a slot as handled (`handled_until`, and a
//! run with status `firing`) in `jobs.json`, synced to disk, *before* it calls the fired
//! callback, and marks the run `fired` afterwards. A crash in between leaves a `firing`
//! run, which the next scheduler turns into `failed` instead of firing again: a slot is
//! delivered at most once, never twice.
//!
//! A `jobs.json` that cannot be read (corrupt, from a newer version, unreadable) is never
//! overwritten: the service opens anyway, every action answers with what is wrong, no job
//! fires, and [`RuntimeEvent::CronStatus`] reports the problem once, and again when the
//! file can be read again (the scheduler keeps looking), after which jobs fire again.

mod backend;
mod error;
mod expr;
pub mod schedule;
mod schedule_error;
mod scheduler;
mod service;
pub mod store;
pub mod zone;

pub use backend::{list_text, relative_text};
pub use error::{CorruptReason, CronError};
pub use schedule::{CompiledSchedule, Due, JobSchedule};
pub use schedule_error::ScheduleError;
pub use scheduler::{SchedulerHandle, SchedulerRole};
pub use service::{CronService, JobChange};
pub use store::{JobRecord, RunRecord, RunStatus, workspace_slug};

#[cfg(doc)]
use crate::runtime::event::RuntimeEvent;
use crate::runtime::event::RuntimeEventSender;
use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::time::Duration;

/// A job fired; the lead publishes it on the bus `system` channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronFired {
    /// The job id, e.g. `cron-3`.
    pub job_id: String,
    /// The job name.
    pub name: String,
    /// The job's message.
    pub message: String,
    /// The slot that fired (a delivery after a restart comes later than this).
    pub scheduled_at: DateTime<Utc>,
    /// The session that added the job, which the notification goes back to.
    pub session: Option<String>,
}

impl CronFired {
    /// The notification text: `[Cron job "NAME" (ID) fired]` and the message.
    pub fn notification(&self) -> String {
        format!(
            "[Cron job \"{}\" ({}) fired]\n{}",
            self.name, self.job_id, self.message
        )
    }
}

/// Called once per fired slot, from the scheduler task; it should only hand the
/// message on (e.g. publish it on the bus), not block.
pub type FiredCallback = Arc<dyn Fn(CronFired) + Send + Sync>;

/// One job as the dashboard and `list` show it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CronJobInfo {
    /// The job id.
    pub id: String,
    /// The job name.
    pub name: String,
    /// The message delivered when it fires.
    pub message: String,
    /// The schedule in words.
    pub schedule: String,
    /// The next slot; `None` when paused, done, or never again.
    pub next_fire: Option<DateTime<Utc>>,
    /// Whether it is paused.
    pub paused: bool,
    /// A one-shot job that has had its slot.
    pub done: bool,
    /// The status of the latest run.
    pub last_status: Option<RunStatus>,
    /// When the latest run was recorded.
    pub last_run_at: Option<DateTime<Utc>>,
    /// Why the stored schedule cannot be evaluated, if it cannot (e.g. an edited file).
    pub problem: Option<String>,
}

/// The current time, as the service sees it.
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> DateTime<Utc>;
}

/// The system wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A wall clock driven by tokio's clock from a fixed start, so that with paused tokio
/// time (tests, simulations) the scheduler's sleeps and its idea of "now" agree.
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    start: DateTime<Utc>,
    origin: tokio::time::Instant,
}

impl TokioClock {
    /// A clock that reads `start` now and advances with `tokio::time::Instant`.
    pub fn starting_at(start: DateTime<Utc>) -> Self {
        Self {
            start,
            origin: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> DateTime<Utc> {
        let elapsed = tokio::time::Instant::now().saturating_duration_since(self.origin);
        chrono::Duration::from_std(elapsed)
            .ok()
            .and_then(|d| self.start.checked_add_signed(d))
            .unwrap_or(self.start)
    }
}

/// Tunables of a [`CronService`].
#[derive(Clone)]
pub struct CronOptions {
    /// A slot missed (app closed, machine asleep) by at most this much still fires
    /// once; an older one is recorded as `missed`.
    pub grace: Duration,
    /// How often the scheduler checks `jobs.json` for changes by other processes (one
    /// `stat`), and how often a standby process retries the scheduler lock: a job added
    /// elsewhere is seen, and a scheduler that exited replaced, within this.
    pub recheck_interval: Duration,
    /// The time source.
    pub clock: Arc<dyn Clock>,
    /// Where a `jobs.json` that cannot be read (and its recovery) is reported.
    pub events: RuntimeEventSender,
}

impl Default for CronOptions {
    fn default() -> Self {
        Self {
            grace: Duration::from_secs(10 * 60),
            recheck_interval: Duration::from_secs(1),
            clock: Arc::new(SystemClock),
            events: RuntimeEventSender::discard(),
        }
    }
}

impl CronOptions {
    /// The defaults, reporting problems with `jobs.json` to `events`.
    pub fn reporting_to(events: RuntimeEventSender) -> Self {
        Self {
            events,
            ..Self::default()
        }
    }
}

impl std::fmt::Debug for CronOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CronOptions")
            .field("grace", &self.grace)
            .field("recheck_interval", &self.recheck_interval)
            .finish_non_exhaustive()
    }
}
