//! The scheduler task: one per workspace across all processes (the `scheduler.lock`
//! holder). It sleeps until the earliest next slot, capped at the recheck interval (1 s:
//! one `stat` of `jobs.json`) so that jobs written by other processes and wall-clock
//! jumps (suspend) are noticed; changes made through this process's service wake it at
//! once. Slots that fell due while it was watching but before it could fire them (a job
//! another process had just added, an unreadable `jobs.json`, a stalled process) are
//! never called missed: the one delivery made for the latest slot stands for them.

use super::schedule::local_text;
use super::service::{CronService, Inner};
use super::store::{RunRecord, RunStatus};
use super::{CronError, CronFired, FiredCallback};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// What a scheduler task is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedulerRole {
    /// Not yet tried the lock.
    Starting,
    /// Another process (or service) fires this workspace's jobs; this one retries the
    /// lock every recheck interval and takes over when that one exits.
    Standby,
    /// This task fires the jobs.
    Active,
    /// Stopped; it fires nothing.
    Stopped,
}

/// Controls a running scheduler; dropping it stops the scheduler.
#[derive(Debug)]
pub struct SchedulerHandle {
    cancel: CancellationToken,
    role: watch::Receiver<SchedulerRole>,
    task: Option<JoinHandle<()>>,
}

impl SchedulerHandle {
    /// The current role.
    pub fn role(&self) -> SchedulerRole {
        *self.role.borrow()
    }

    /// A receiver that sees every role change.
    pub fn watch_role(&self) -> watch::Receiver<SchedulerRole> {
        self.role.clone()
    }

    /// Stops the scheduler and waits until it has released the lock.
    pub async fn stop(mut self) {
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            // A join error means the task panicked, which already ended it.
            let _ = task.await;
        }
    }
}

impl Drop for SchedulerHandle {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl CronService {
    /// Starts firing this workspace's jobs, calling `on_fire` for each fired slot, if
    /// no other process does already (otherwise it stands by and takes over later).
    /// Call it only in long-running processes (TUI, rpc); needs a tokio runtime.
    pub fn start_scheduler(&self, on_fire: FiredCallback) -> Result<SchedulerHandle, CronError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| CronError::NoRuntime)?;
        let cancel = CancellationToken::new();
        let (role_tx, role) = watch::channel(SchedulerRole::Starting);
        let task = runtime.spawn(run(
            Arc::clone(&self.inner),
            on_fire,
            cancel.clone(),
            role_tx,
        ));
        Ok(SchedulerHandle {
            cancel,
            role,
            task: Some(task),
        })
    }
}

async fn run(
    inner: Arc<Inner>,
    on_fire: FiredCallback,
    cancel: CancellationToken,
    role: watch::Sender<SchedulerRole>,
) {
    let recheck = inner
        .options
        .recheck_interval
        .max(Duration::from_millis(10));
    let lock = loop {
        match inner.store.try_lock_scheduler() {
            Ok(Some(lock)) => break lock,
            Ok(None) => set_role(&role, SchedulerRole::Standby),
            Err(e) => {
                tracing::warn!("cron scheduler: {e}");
                set_role(&role, SchedulerRole::Standby);
            }
        }
        tokio::select! {
            () = cancel.cancelled() => {
                set_role(&role, SchedulerRole::Stopped);
                return;
            }
            () = tokio::time::sleep(recheck) => {}
        }
    };
    set_role(&role, SchedulerRole::Active);
    let watching_since = inner.now();
    let mut recovered = false;
    loop {
        // Until it works (the file may be unreadable now and fixed later).
        if !recovered {
            recovered = recover_interrupted(&inner).inspect_err(log).is_ok();
        }
        let result = if recovered {
            tick(&inner, &on_fire, watching_since)
        } else {
            Ok(())
        };
        let wait = match result {
            Ok(()) => next_wait(&inner, recheck),
            Err(e) => {
                log(&e);
                recheck
            }
        };
        tokio::select! {
            () = cancel.cancelled() => break,
            () = tokio::time::sleep(wait) => {}
            () = inner.wake.notified() => {}
        }
    }
    drop(lock);
    set_role(&role, SchedulerRole::Stopped);
}

/// Logs a failed tick; trouble with `jobs.json` itself is reported (once) by the
/// service, and would otherwise be logged at every recheck until it is fixed.
fn log(error: &CronError) {
    if !error.is_file_problem() {
        tracing::warn!("cron scheduler: {error}; retrying at the next recheck");
    }
}

/// Publishes `value` only if it differs, so watchers wake on real changes.
fn set_role(role: &watch::Sender<SchedulerRole>, value: SchedulerRole) {
    role.send_if_modified(|current| std::mem::replace(current, value) != value);
}

/// Picks up changes from other processes, then fires whatever is due.
fn tick(
    inner: &Inner,
    on_fire: &FiredCallback,
    watching_since: DateTime<Utc>,
) -> Result<(), CronError> {
    inner.refresh()?;
    let now = inner.now();
    if earliest_next(inner).is_some_and(|t| t <= now) {
        let fires = claim_due(inner, now, watching_since)?;
        if !fires.is_empty() {
            deliver(inner, on_fire, fires)?;
        }
    }
    Ok(())
}

fn earliest_next(inner: &Inner) -> Option<DateTime<Utc>> {
    inner
        .snapshot()
        .jobs
        .iter()
        .filter_map(|j| j.next_fire())
        .min()
}

fn next_wait(inner: &Inner, recheck: Duration) -> Duration {
    let now = inner.now();
    match earliest_next(inner) {
        None => recheck,
        Some(next) => match (next - now).to_std() {
            Ok(wait) if !wait.is_zero() => wait.min(recheck),
            // Still due right after a tick means the slot could not be handled; wait
            // a moment instead of spinning.
            _ => Duration::from_secs(1).min(recheck),
        },
    }
}

/// Records every due slot as handled, durably, before anything is delivered: the
/// latest slot becomes a `firing` run (or `missed` if older than the grace window);
/// older ones that passed before this scheduler was `watching_since` become one `missed`
/// run, and those after it are noted on the latest one. Returns what to deliver.
fn claim_due(
    inner: &Inner,
    now: DateTime<Utc>,
    watching_since: DateTime<Utc>,
) -> Result<Vec<CronFired>, CronError> {
    let grace = chrono::Duration::from_std(inner.options.grace).unwrap_or(chrono::Duration::MAX);
    inner.update_file(|file| {
        let snapshot = inner.snapshot();
        let loaded: HashMap<&str, _> = snapshot
            .jobs
            .iter()
            .map(|j| (j.record.id.as_str(), j))
            .collect();
        let mut fires = Vec::new();
        for job in file.jobs.iter_mut().filter(|j| !j.paused && !j.done) {
            let known = loaded
                .get(job.id.as_str())
                .filter(|l| l.record.schedule == job.schedule);
            // Most jobs are not due; their cached next fire says so without computing.
            if let Some(l) = known
                && l.record.handled_until == job.handled_until
                && !l.record.paused
                && !l.record.done
                && l.next_fire().is_none_or(|t| t > now)
            {
                continue;
            }
            let fresh;
            let schedule = match known {
                Some(l) => &l.compiled,
                _ => {
                    fresh = super::CompiledSchedule::compile(&job.schedule);
                    &fresh
                }
            };
            let Ok(schedule) = schedule else { continue };
            let Some(due) = schedule.due(job.handled_until, now) else {
                continue;
            };
            let (unwatched, watched) =
                split_earlier(schedule, job.handled_until, due, watching_since);
            if let Some(first) = unwatched.first {
                let more = if unwatched.count >= super::schedule::DUE_COUNT_CAP {
                    "+"
                } else {
                    ""
                };
                job.push_run(RunRecord {
                    slot: first,
                    recorded_at: now,
                    status: RunStatus::Missed,
                    note: Some(format!(
                        "{}{more} slot(s) from {} on passed while no scheduler was running",
                        unwatched.count,
                        local_text(first)
                    )),
                });
            }
            let covers = watched.first.map(|first| {
                format!(
                    "also stands for {} earlier slot(s) from {} on, which fell due while \
                     the scheduler ran but could not fire them yet (a job just added by \
                     another process, an unreadable jobs.json, a stalled process)",
                    watched.count,
                    local_text(first)
                )
            });
            let late = now - due.latest;
            if late <= grace {
                job.push_run(RunRecord {
                    slot: due.latest,
                    recorded_at: now,
                    status: RunStatus::Firing,
                    note: covers,
                });
                fires.push(CronFired {
                    job_id: job.id.clone(),
                    name: job.name.clone(),
                    message: job.message.clone(),
                    scheduled_at: due.latest,
                    session: job.session.clone(),
                });
            } else {
                job.push_run(RunRecord {
                    slot: due.latest,
                    recorded_at: now,
                    status: RunStatus::Missed,
                    note: Some(format!(
                        "{} late, past the {} grace window",
                        super::relative_text(late),
                        super::relative_text(grace)
                    )),
                });
            }
            job.handled_until = job.handled_until.max(due.latest);
            if schedule.is_one_shot() {
                job.done = true;
            }
        }
        fires.sort_by_key(|f| f.scheduled_at);
        Ok(fires)
    })
}

/// Some of a job's earlier due slots: how many, and the first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Slots {
    count: u64,
    first: Option<DateTime<Utc>>,
}

/// Splits the slots of `due` before its latest into those that passed before the
/// scheduler was watching (no scheduler ran then: missed) and those after.
fn split_earlier(
    schedule: &super::CompiledSchedule,
    handled_until: DateTime<Utc>,
    due: super::Due,
    watching_since: DateTime<Utc>,
) -> (Slots, Slots) {
    if due.earlier == 0 {
        return (Slots::default(), Slots::default());
    }
    let unwatched = match schedule.due(handled_until, watching_since) {
        // Every earlier slot passed unwatched.
        Some(before) if before.latest >= due.latest => Slots {
            count: due.earlier,
            first: Some(due.first),
        },
        Some(before) => Slots {
            count: (before.earlier + 1).min(due.earlier),
            first: Some(before.first),
        },
        None => Slots::default(),
    };
    let count = due.earlier - unwatched.count;
    let first = match unwatched.first {
        None => Some(due.first),
        Some(_) => schedule
            .next_after(watching_since)
            .filter(|t| *t < due.latest),
    };
    let watched = if count > 0 {
        Slots { count, first }
    } else {
        Slots::default()
    };
    (unwatched, watched)
}

/// Calls `on_fire` for each claimed slot, then records the outcome.
fn deliver(inner: &Inner, on_fire: &FiredCallback, fires: Vec<CronFired>) -> Result<(), CronError> {
    let outcomes: Vec<(String, DateTime<Utc>, bool)> = fires
        .into_iter()
        .map(|fired| {
            let key = (fired.job_id.clone(), fired.scheduled_at);
            // A panicking handler must not take the scheduler down with it.
            let ok = std::panic::catch_unwind(AssertUnwindSafe(|| on_fire(fired))).is_ok();
            (key.0, key.1, ok)
        })
        .collect();
    inner.update_file(|file| {
        for (id, slot, ok) in &outcomes {
            let run = file.jobs.iter_mut().find(|j| j.id == *id).and_then(|j| {
                j.runs
                    .iter_mut()
                    .rev()
                    .find(|r| r.slot == *slot && r.status == RunStatus::Firing)
            });
            if let Some(run) = run {
                if *ok {
                    run.status = RunStatus::Fired;
                } else {
                    run.status = RunStatus::Failed;
                    run.note = Some("the fired handler panicked; not retried".to_owned());
                }
            }
        }
        Ok(())
    })
}

/// Turns `firing` runs left by a scheduler that died mid-delivery into `failed`. Only
/// the lock holder calls this, so no live scheduler is delivering them.
fn recover_interrupted(inner: &Inner) -> Result<(), CronError> {
    inner.update_file(|file| {
        for run in file
            .jobs
            .iter_mut()
            .flat_map(|j| j.runs.iter_mut())
            .filter(|r| r.status == RunStatus::Firing)
        {
            run.status = RunStatus::Failed;
            run.note = Some(
                "claw-tui stopped while delivering this; not retried, so it is never \
                 delivered twice"
                    .to_owned(),
            );
        }
        Ok(())
    })
}
