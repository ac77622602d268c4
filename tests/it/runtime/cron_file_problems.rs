//! A `jobs.json` that cannot be read, at start or while the scheduler runs: the service
//! still opens, the file is kept byte for byte, every action (and so the `cron` tool)
//! answers with the path, the parse error and what to do, no job fires, the problem is
//! reported once as a `cron_status` event, and fixing the file brings everything back.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::cron::*;
use crate::support::names_in;
use claw_tui::runtime::cron::{Clock, CronService, RunStatus};
use claw_tui::tools::cron::{CronSchedule, CronTool};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::mpsc::error::TryRecvError;

async fn call(tool: &CronTool<CronService>, args: serde_json::Value) -> (bool, String) {
    let r = crate::support::call(tool, args).await;
    (r.is_error, r.content)
}

#[tokio::test(start_paused = true)]
async fn a_corrupt_file_at_start_keeps_the_tool_and_says_what_is_wrong() {
    let env = Env::new();
    let path = env.jobs_path();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{\"version\": 1, \"jobs\": [").unwrap();
    let (service, _clock, mut events) = env.open_reporting(t0());

    let (ok, reported) = cron_status(&mut events).await;
    assert!(!ok);
    for part in [
        "Cron jobs are stopped",
        path.to_str().unwrap(),
        "not a valid cron jobs file",
        "line 1",
        "move it away",
    ] {
        assert!(reported.contains(part), "{part:?} in {reported}");
    }
    assert_eq!(service.problem().as_deref(), Some(reported.as_str()));

    let tool = CronTool::new(Arc::new(service.clone()));
    let (is_error, text) = call(&tool, json!({"action": "list"})).await;
    assert!(is_error);
    assert!(
        text.contains(path.to_str().unwrap()) && text.contains("not a valid cron jobs file"),
        "{text}"
    );
    let (is_error, text) = call(
        &tool,
        json!({"action": "add", "message": "m", "every_seconds": 60}),
    )
    .await;
    assert!(is_error, "{text}");
    assert!(text.contains("claw-tui will not overwrite it"), "{text}");
    // Reported once, however often it is met.
    assert_eq!(events.try_recv().unwrap_err(), TryRecvError::Empty);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"version\": 1, \"jobs\": ["
    );
    assert_eq!(names_in(path.parent().unwrap()), ["jobs.json", "jobs.lock"]);

    // Moved away: the service recovers and says so.
    std::fs::rename(&path, path.with_extension("broken")).unwrap();
    let (is_error, text) = call(&tool, json!({"action": "list"})).await;
    assert!(!is_error, "{text}");
    let (ok, reported) = cron_status(&mut events).await;
    assert!(ok && reported.contains("can be used again"), "{reported}");
    assert_eq!(service.problem(), None);
    let (is_error, text) = call(
        &tool,
        json!({"action": "add", "message": "m", "every_seconds": 60}),
    )
    .await;
    assert!(!is_error, "{text}");
}

#[tokio::test(start_paused = true)]
async fn a_file_from_a_newer_version_is_reported_and_left_alone() {
    let env = Env::new();
    let path = env.jobs_path();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let newer = r#"{"version": 2, "workspace": "x", "next_id": 9, "jobs": [], "future": true}"#;
    std::fs::write(&path, newer).unwrap();
    let (service, _clock, mut events) = env.open_reporting(t0());
    let (ok, reported) = cron_status(&mut events).await;
    assert!(!ok);
    assert!(
        reported.contains("newer claw-tui") && reported.contains("version 2"),
        "{reported}"
    );
    let err = service.list().unwrap_err().to_string();
    assert!(err.contains("Upgrade claw-tui"), "{err}");
    assert!(
        service
            .add(None, "m".into(), CronSchedule::EverySeconds(5))
            .is_err()
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), newer);
}

/// Corrupted while the scheduler runs: reported at its next look (a second), nothing
/// fires while it is broken, and once the file is put back the job fires again, with the
/// slots it could not fire noted on that run, never recorded as missed.
#[tokio::test(start_paused = true)]
async fn corrupted_while_running_stops_loudly_and_recovers_when_fixed() {
    let env = Env::new();
    let (service, clock, mut events) = env.open_reporting(t0());
    service
        .add(
            Some("tick".into()),
            "m".into(),
            CronSchedule::EverySeconds(10),
        )
        .unwrap();
    let (on_fire, mut fired) = recorder();
    let _scheduler = service.start_scheduler(on_fire).unwrap();
    assert_eq!(next(&mut fired).await.scheduled_at, t0() + secs(10));
    feed_until(&service, |jobs| {
        jobs[0].last_status == Some(RunStatus::Fired)
    })
    .await;

    let path = env.jobs_path();
    let good = std::fs::read(&path).unwrap();
    std::fs::write(&path, b"garbage").unwrap();
    let broken_at = clock.now();
    let (ok, reported) = cron_status(&mut events).await;
    assert!(
        !ok && reported.contains("not a valid cron jobs file"),
        "{reported}"
    );
    // Noticed at the scheduler's next look, within its one-second recheck.
    assert!(
        clock.now() - broken_at <= secs(1),
        "{:?}",
        clock.now() - broken_at
    );

    // A minute passes: six slots, none fired, the file untouched.
    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    assert_eq!(fired.try_recv().unwrap_err(), TryRecvError::Empty);
    assert_eq!(std::fs::read(&path).unwrap(), b"garbage");

    std::fs::write(&path, &good).unwrap();
    let (ok, reported) = cron_status(&mut events).await;
    assert!(ok, "{reported}");
    let again = next(&mut fired).await;
    assert!(again.scheduled_at > t0() + secs(60), "{again:?}");
    feed_until(&service, |jobs| {
        jobs[0].last_status == Some(RunStatus::Fired)
    })
    .await;
    let json = env.jobs_json(&service);
    let runs = json["jobs"][0]["runs"].as_array().unwrap();
    assert!(
        runs.iter().all(|r| r["status"] == "fired"),
        "no slot is missed while a scheduler runs: {runs:#?}"
    );
    let note = runs.last().unwrap()["note"].as_str().unwrap();
    assert!(note.contains("also stands for 5 earlier slot(s)"), "{note}");
}
