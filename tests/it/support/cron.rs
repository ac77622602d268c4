//! Shared helpers for the cron scheduler tests: a temp data dir and workspace, services
//! on a paused-time clock, and a recording fired callback.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use chrono::{DateTime, Duration as Span, Utc};
use claw_tui::runtime::cron::{
    CronFired, CronJobInfo, CronOptions, CronService, FiredCallback, SchedulerHandle,
    SchedulerRole, TokioClock,
};
use claw_tui::runtime::{RuntimeEvent, runtime_channel};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// A failure guard in virtual time; paused time reaches it at once if nothing comes.
pub const GUARD: Duration = Duration::from_secs(7 * 24 * 3600);

pub fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-03-09T08:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

pub struct Env {
    pub _tmp: tempfile::TempDir,
    pub data: PathBuf,
    pub workspace: PathBuf,
}

impl Env {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let workspace = tmp.path().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        Self {
            data: tmp.path().join("data"),
            workspace,
            _tmp: tmp,
        }
    }

    /// A service whose clock reads `start` now and follows tokio's (paused) clock.
    pub fn open_at(&self, start: DateTime<Utc>) -> (CronService, TokioClock) {
        self.open_rechecking(start, CronOptions::default().recheck_interval)
    }

    /// [`Env::open_at`] with another recheck interval (how often the scheduler looks at
    /// the file).
    pub fn open_rechecking(
        &self,
        start: DateTime<Utc>,
        recheck_interval: Duration,
    ) -> (CronService, TokioClock) {
        let clock = TokioClock::starting_at(start);
        let options = CronOptions {
            clock: Arc::new(clock),
            recheck_interval,
            ..CronOptions::default()
        };
        let service = CronService::open(&self.data, &self.workspace, options).unwrap();
        (service, clock)
    }

    /// [`Env::open_at`], with the service's reports (`cron_status`) on a channel.
    pub fn open_reporting(
        &self,
        start: DateTime<Utc>,
    ) -> (CronService, TokioClock, UnboundedReceiver<RuntimeEvent>) {
        let clock = TokioClock::starting_at(start);
        let (events, rx) = runtime_channel();
        let options = CronOptions {
            clock: Arc::new(clock),
            ..CronOptions::reporting_to(events)
        };
        let service = CronService::open(&self.data, &self.workspace, options).unwrap();
        (service, clock, rx)
    }

    /// Where this workspace's `jobs.json` lives.
    pub fn jobs_path(&self) -> PathBuf {
        let canonical = std::fs::canonicalize(&self.workspace).unwrap();
        self.data
            .join("cron")
            .join(claw_tui::runtime::cron::workspace_slug(&canonical))
            .join("jobs.json")
    }

    pub fn jobs_json(&self, service: &CronService) -> Value {
        serde_json::from_str(&std::fs::read_to_string(service.dir().join("jobs.json")).unwrap())
            .unwrap()
    }
}

pub fn recorder() -> (FiredCallback, UnboundedReceiver<CronFired>) {
    let (tx, rx) = unbounded_channel();
    (Arc::new(move |fired| drop(tx.send(fired))), rx)
}

pub async fn next(rx: &mut UnboundedReceiver<CronFired>) -> CronFired {
    tokio::time::timeout(GUARD, rx.recv())
        .await
        .expect("timed out waiting for a fire")
        .expect("callback dropped")
}

pub async fn role(handle: &SchedulerHandle, wanted: SchedulerRole) {
    let mut watch = handle.watch_role();
    tokio::time::timeout(GUARD, watch.wait_for(|r| *r == wanted))
        .await
        .expect("timed out waiting for a scheduler role")
        .unwrap();
}

/// Waits until the dashboard feed shows a job list matching `pred`.
pub async fn feed_until(service: &CronService, pred: impl Fn(&[CronJobInfo]) -> bool) {
    let mut feed = service.subscribe();
    tokio::time::timeout(GUARD, feed.wait_for(|jobs| pred(jobs)))
        .await
        .expect("timed out waiting for the feed")
        .unwrap();
}

/// The next `cron_status` report: (ok, message).
pub async fn cron_status(rx: &mut UnboundedReceiver<RuntimeEvent>) -> (bool, String) {
    loop {
        let event = tokio::time::timeout(GUARD, rx.recv())
            .await
            .expect("timed out waiting for a cron_status report")
            .expect("event channel closed");
        if let RuntimeEvent::CronStatus { ok, message } = event {
            return (ok, message);
        }
    }
}

pub fn statuses(json: &Value, job: usize) -> Vec<(String, String)> {
    json["jobs"][job]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["slot"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

pub fn secs(n: i64) -> Span {
    Span::seconds(n)
}

/// The instant an RFC 3339 `text` names, in UTC.
pub fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}
