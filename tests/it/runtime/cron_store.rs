//! The cron service's storage: persistence across restarts, the versioned and atomically
//! written `jobs.json`, changes from several services (processes) on one workspace,
//! pause/resume/remove, and the `cron` tool over the real service.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::cron::utc;
use crate::support::names_in;
use chrono::{DateTime, Utc};
use claw_tui::runtime::cron::{
    Clock, CronError, CronOptions, CronService, RunStatus, workspace_slug,
};
use claw_tui::tools::cron::{CronSchedule, CronTool};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// A wall clock that moves only when told to.
struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    fn at(text: &str) -> Arc<Self> {
        Arc::new(Self(Mutex::new(utc(text))))
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap()
    }
}

struct Env {
    _tmp: tempfile::TempDir,
    data: PathBuf,
    workspace: PathBuf,
    clock: Arc<ManualClock>,
}

impl Env {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let workspace = tmp.path().join("my project");
        std::fs::create_dir_all(&workspace).unwrap();
        Self {
            data,
            workspace,
            clock: ManualClock::at("2026-03-09T08:00:00Z"),
            _tmp: tmp,
        }
    }

    fn open(&self) -> CronService {
        self.try_open().unwrap()
    }

    fn try_open(&self) -> Result<CronService, CronError> {
        let options = CronOptions {
            clock: self.clock.clone(),
            ..CronOptions::default()
        };
        CronService::open(&self.data, &self.workspace, options)
    }

    fn dir(&self) -> PathBuf {
        let canonical = std::fs::canonicalize(&self.workspace).unwrap();
        self.data.join("cron").join(workspace_slug(&canonical))
    }

    fn jobs_json(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.dir().join("jobs.json")).unwrap())
            .unwrap()
    }
}

fn every(seconds: u64) -> CronSchedule {
    CronSchedule::EverySeconds(seconds)
}

fn expr(e: &str, tz: &str) -> CronSchedule {
    CronSchedule::Expr {
        expr: e.into(),
        tz: Some(tz.into()),
    }
}

#[test]
fn jobs_survive_a_restart() {
    let env = Env::new();
    let first = env.open();
    let a = first
        .add(
            Some("standup".into()),
            "Post the standup notes".into(),
            expr("30 14 * * WED", "Europe/Berlin"),
        )
        .unwrap();
    let b = first
        .add(None, "Check the build".into(), every(300))
        .unwrap();
    let c = first
        .add(
            Some("launch".into()),
            "Launch!".into(),
            CronSchedule::At("2026-04-01T10:00:00Z".into()),
        )
        .unwrap();
    first.pause(&b.id).unwrap();
    assert_eq!(
        (a.id.as_str(), b.id.as_str(), c.id.as_str()),
        ("cron-1", "cron-2", "cron-3")
    );
    assert_eq!(a.next_fire, Some(utc("2026-03-11T13:30:00Z")));
    assert_eq!(b.name, "Check the build");
    let before = first.list().unwrap();
    drop(first);

    let second = env.open();
    let after = second.list().unwrap();
    assert_eq!(after, before);
    assert!(after[1].paused);
    assert_eq!(after[1].next_fire, None);
    assert_eq!(after[2].next_fire, Some(utc("2026-04-01T10:00:00Z")));
    // Ids keep counting after a restart.
    let d = second.add(None, "more".into(), every(60)).unwrap();
    assert_eq!(d.id, "cron-4");

    let json = env.jobs_json();
    assert_eq!(json["version"], 1);
    assert_eq!(json["jobs"][0]["schedule"]["kind"], "cron");
    assert_eq!(json["jobs"][0]["schedule"]["tz"], "Europe/Berlin");
    assert_eq!(json["jobs"][1]["schedule"]["kind"], "every");
    assert_eq!(json["jobs"][2]["schedule"]["at"], "2026-04-01T10:00:00Z");
}

#[test]
fn the_file_lives_under_the_workspace_slug() {
    let env = Env::new();
    let service = env.open();
    service.add(None, "m".into(), every(60)).unwrap();
    let dir = env.dir();
    assert_eq!(service.dir(), dir);
    let slug = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(slug.starts_with("my_project-"), "{slug}");
    assert!(dir.join("jobs.json").is_file());

    // Another workspace with the same folder name elsewhere gets its own jobs.
    let other = env._tmp.path().join("elsewhere").join("my project");
    std::fs::create_dir_all(&other).unwrap();
    let options = CronOptions {
        clock: env.clock.clone(),
        ..CronOptions::default()
    };
    let other_service = CronService::open(&env.data, &other, options).unwrap();
    assert_ne!(other_service.dir(), dir);
    assert!(other_service.list().unwrap().is_empty());
}

#[test]
fn writes_are_atomic_and_leave_no_temp_files() {
    let env = Env::new();
    let service = env.open();
    for i in 0..10 {
        let job = service
            .add(None, format!("job {i}"), every(60 + i))
            .unwrap();
        if i % 2 == 0 {
            service.remove(&job.id).unwrap();
        }
    }
    assert_eq!(names_in(&env.dir()), ["jobs.json", "jobs.lock"]);
    assert_eq!(env.jobs_json()["jobs"].as_array().unwrap().len(), 5);
}

#[test]
fn invalid_input_stores_nothing() {
    let env = Env::new();
    let service = env.open();
    let err = service
        .add(None, "m".into(), expr("0 25 * * *", "UTC"))
        .unwrap_err();
    assert!(err.to_string().contains("field 2 (hour)"), "{err}");
    let err = service
        .add(None, "m".into(), expr("0 9 * * *", "Nowhere/City"))
        .unwrap_err();
    assert!(err.to_string().contains("Unknown time zone"), "{err}");
    let err = service
        .add(
            None,
            "m".into(),
            CronSchedule::At("2026-03-09T07:59:00Z".into()),
        )
        .unwrap_err();
    assert!(err.to_string().contains("in the past"), "{err}");
    let err = service.add(None, "  ".into(), every(5)).unwrap_err();
    assert!(err.to_string().contains("message is empty"), "{err}");
    assert!(service.list().unwrap().is_empty());
    assert!(!env.dir().join("jobs.json").exists());
}

#[test]
fn pause_resume_and_remove() {
    let env = Env::new();
    let service = env.open();
    let job = service
        .add(Some("tick".into()), "tick".into(), every(60))
        .unwrap();
    assert_eq!(job.next_fire, Some(utc("2026-03-09T08:01:00Z")));

    let paused = service.pause(&job.id).unwrap();
    assert!(paused.changed && paused.job.paused);
    assert_eq!(paused.job.next_fire, None);
    assert!(!service.pause(&job.id).unwrap().changed);

    // Resuming later skips the slots that passed while paused.
    *env.clock.0.lock().unwrap() = utc("2026-03-09T09:00:30Z");
    let resumed = service.resume(&job.id).unwrap();
    assert!(resumed.changed && !resumed.job.paused);
    assert_eq!(resumed.job.next_fire, Some(utc("2026-03-09T09:01:00Z")));
    assert!(!service.resume(&job.id).unwrap().changed);

    let removed = service.remove(&job.id).unwrap();
    assert_eq!(removed.id, job.id);
    assert!(service.list().unwrap().is_empty());
    let err = service.remove(&job.id).unwrap_err();
    assert_eq!(
        err.to_string(),
        "No cron job with id \"cron-1\" in this workspace. action=list shows the job ids."
    );
    assert!(matches!(
        service.pause("cron-99"),
        Err(CronError::UnknownJob { .. })
    ));
}

#[test]
fn services_on_one_workspace_see_each_others_changes() {
    let env = Env::new();
    let a = env.open();
    let b = env.open();
    a.add(None, "from a".into(), every(60)).unwrap();
    // b re-reads the file under the lock before changing it, so nothing is lost.
    b.add(None, "from b".into(), every(60)).unwrap();
    let ids = |s: &CronService| {
        s.list()
            .unwrap()
            .into_iter()
            .map(|j| j.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&a), ["cron-1", "cron-2"]);
    assert_eq!(ids(&b), ["cron-1", "cron-2"]);
    a.remove("cron-2").unwrap();
    assert_eq!(ids(&b), ["cron-1"]);
}

#[test]
fn concurrent_changes_from_many_services_are_all_kept() {
    let env = Env::new();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let service = env.open();
            std::thread::spawn(move || {
                for i in 0..15 {
                    service.add(None, format!("t{t} #{i}"), every(60)).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let jobs = env.open().list().unwrap();
    assert_eq!(jobs.len(), 60);
    let mut ids: Vec<String> = jobs.into_iter().map(|j| j.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 60);
}

#[tokio::test]
async fn the_dashboard_feed_follows_changes() {
    let env = Env::new();
    let service = env.open();
    let mut feed = service.subscribe();
    assert!(feed.borrow_and_update().is_empty());
    service
        .add(Some("a".into()), "m".into(), every(120))
        .unwrap();
    feed.changed().await.unwrap();
    {
        let jobs = feed.borrow_and_update();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].schedule, "every 2 minutes");
        assert_eq!(jobs[0].next_fire, Some(utc("2026-03-09T08:02:00Z")));
        assert_eq!(jobs[0].last_status, None::<RunStatus>);
    }
    service.pause("cron-1").unwrap();
    feed.changed().await.unwrap();
    assert!(feed.borrow_and_update()[0].paused);
}

async fn call(tool: &CronTool<CronService>, args: Value) -> (bool, String) {
    let r = crate::support::call(tool, args).await;
    (r.is_error, r.content)
}

#[tokio::test]
async fn the_cron_tool_runs_on_the_service() {
    let env = Env::new();
    let service = env.open();
    let tool = CronTool::new(Arc::new(service.clone()));

    let (err, text) = call(
        &tool,
        json!({"action": "add", "name": "standup", "message": "Post notes", "cron_expr": "30 14 * * WED", "tz": "Europe/Berlin"}),
    )
    .await;
    assert!(!err, "{text}");
    assert!(
        text.starts_with(
            "Added cron job \"standup\" (cron-1): cron \"30 14 * * WED\" in Europe/Berlin"
        ),
        "{text}"
    );
    assert!(text.contains("Next fire: in 2d 5h ("), "{text}");

    let (err, text) = call(
        &tool,
        json!({"action": "add", "message": "x", "cron_expr": "0 9 * * FUNDAY"}),
    )
    .await;
    assert!(err);
    assert!(
        text.contains("field 5 (day-of-week) \"FUNDAY\" at column 9"),
        "{text}"
    );

    call(
        &tool,
        json!({"action": "add", "name": "ping", "message": "ping", "every_seconds": 90}),
    )
    .await;
    let (err, text) = call(&tool, json!({"action": "pause", "id": "cron-2"})).await;
    assert!(!err);
    assert_eq!(
        text,
        "Paused cron job \"ping\" (cron-2); it will not fire until resumed."
    );

    let (err, text) = call(&tool, json!({"action": "list"})).await;
    assert!(!err);
    assert!(text.starts_with("2 cron jobs in this workspace:"), "{text}");
    assert!(
        text.contains("- cron-1 \"standup\" (active): cron \"30 14 * * WED\""),
        "{text}"
    );
    assert!(text.contains("next: in 2d 5h"), "{text}");
    assert!(text.contains("last run: never run"), "{text}");
    assert!(
        text.contains("- cron-2 \"ping\" (paused): every 90 seconds"),
        "{text}"
    );
    assert!(text.contains("next: none while paused"), "{text}");

    let (err, text) = call(&tool, json!({"action": "resume", "id": "cron-2"})).await;
    assert!(!err);
    assert!(
        text.starts_with("Resumed cron job \"ping\" (cron-2). Next fire: in 1m 30s ("),
        "{text}"
    );
    let (err, text) = call(&tool, json!({"action": "remove", "id": "cron-9"})).await;
    assert!(err);
    assert!(text.contains("No cron job with id \"cron-9\""), "{text}");
    let (err, text) = call(&tool, json!({"action": "remove", "id": "cron-1"})).await;
    assert!(!err);
    assert_eq!(text, "Removed cron job \"standup\" (cron-1).");
}

/// The model adds many jobs in one turn of a client (whose scheduler re-reads the file
/// after each change): the calls run at once on one service (each on a blocking thread,
/// as the tool runs them), and every one answers with the job it added.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_parallel_adds_each_answer_with_the_job_they_added() {
    let env = Env::new();
    let service = env.open();
    let scheduler = service.start_scheduler(Arc::new(|_| {})).unwrap();
    let tool = Arc::new(CronTool::new(Arc::new(service)));
    // Lists in the same turn re-read the file while it changes.
    let listing = CancellationToken::new();
    let lists: Vec<_> = (0..4)
        .map(|_| {
            let (tool, listing) = (tool.clone(), listing.clone());
            tokio::spawn(async move {
                while !listing.is_cancelled() {
                    let (err, text) = call(&tool, json!({"action": "list"})).await;
                    assert!(!err, "{text}");
                }
            })
        })
        .collect();
    let calls: Vec<_> = (0..1000)
        .map(|i| {
            let tool = tool.clone();
            tokio::spawn(async move {
                let args = json!({"action": "add", "name": format!("job {i}"),
                                  "message": "m", "every_seconds": 60});
                (i, call(&tool, args).await)
            })
        })
        .collect();
    let mut ids = Vec::new();
    for call in calls {
        let (i, (err, text)) = call.await.unwrap();
        assert!(!err, "add {i} answered: {text}");
        let said = format!("Added cron job \"job {i}\" (cron-");
        assert!(text.starts_with(&said), "add {i} answered: {text}");
        let id = text[said.len() - 5..].split(')').next().unwrap().to_owned();
        ids.push(id);
    }
    listing.cancel();
    for list in lists {
        list.await.unwrap();
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 1000, "every add has an id of its own");
    assert_eq!(env.jobs_json()["jobs"].as_array().unwrap().len(), 1000);
    scheduler.stop().await;
}
