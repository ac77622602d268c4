//! The cron scheduler's timer on paused tokio time: it fires at the right instant for
//! every schedule kind, wakes on changes, honours pause/resume/remove, and records runs.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::cron::*;
use chrono::Duration as Span;
use claw_tui::runtime::cron::{Clock, CronFired, FiredCallback, RunStatus, SchedulerRole};
use claw_tui::tools::cron::CronSchedule;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc::unbounded_channel;

#[tokio::test(start_paused = true)]
async fn fires_at_the_scheduled_instant() {
    let env = Env::new();
    let (service, clock) = env.open_at(t0());
    let job = service
        .add(
            Some("tick".into()),
            "Check the queue".into(),
            CronSchedule::EverySeconds(60),
        )
        .unwrap();
    let (on_fire, mut rx) = recorder();
    let _scheduler = service.start_scheduler(on_fire).unwrap();

    let fired = next(&mut rx).await;
    assert_eq!(clock.now(), t0() + secs(60));
    assert_eq!(
        fired,
        CronFired {
            job_id: job.id.clone(),
            name: "tick".into(),
            message: "Check the queue".into(),
            scheduled_at: t0() + secs(60),
            session: None,
        }
    );
    assert_eq!(
        fired.notification(),
        "[Cron job \"tick\" (cron-1) fired]\nCheck the queue"
    );
    assert_eq!(next(&mut rx).await.scheduled_at, t0() + secs(120));
    assert_eq!(clock.now(), t0() + secs(120));

    feed_until(&service, |jobs| {
        jobs[0].last_status == Some(RunStatus::Fired)
    })
    .await;
    let jobs = service.list().unwrap();
    assert_eq!(jobs[0].next_fire, Some(t0() + secs(180)));
    // What the model reads: the last run's status and the next fire, relative and local.
    let text = claw_tui::runtime::cron::list_text(&jobs, clock.now());
    assert!(
        text.contains("- cron-1 \"tick\" (active): every minute"),
        "{text}"
    );
    assert!(text.contains("next: in 1m ("), "{text}");
    assert!(text.contains("last run: fired at "), "{text}");
}

#[tokio::test(start_paused = true)]
async fn cron_expressions_fire_on_the_wall_clock() {
    let env = Env::new();
    // 08:59:50 in New York (EDT, UTC-4, since 2026-03-08) is 12:59:50 UTC.
    let start = t0() + Span::hours(4) + secs(59 * 60 + 50);
    let (service, clock) = env.open_at(start);
    let expr = CronSchedule::Expr {
        expr: "0 9 * * MON-FRI".into(),
        tz: Some("America/New_York".into()),
    };
    service
        .add(Some("standup".into()), "Standup".into(), expr)
        .unwrap();
    let (on_fire, mut rx) = recorder();
    let _scheduler = service.start_scheduler(on_fire).unwrap();
    let fired = next(&mut rx).await;
    assert_eq!(fired.scheduled_at, start + secs(10));
    assert_eq!(clock.now(), start + secs(10));
}

#[tokio::test(start_paused = true)]
async fn adding_a_job_wakes_the_sleeping_timer() {
    let env = Env::new();
    let (service, clock) = env.open_rechecking(t0(), std::time::Duration::from_secs(30));
    let (on_fire, mut rx) = recorder();
    let scheduler = service.start_scheduler(on_fire).unwrap();
    role(&scheduler, SchedulerRole::Active).await;
    // The scheduler now sleeps its full recheck interval (30 s here); a job due in 5 s
    // must wake it rather than wait for that.
    service
        .add(
            None,
            "soon".into(),
            CronSchedule::At((t0() + secs(5)).to_rfc3339()),
        )
        .unwrap();
    let fired = next(&mut rx).await;
    assert_eq!(fired.scheduled_at, t0() + secs(5));
    assert_eq!(clock.now(), t0() + secs(5));
}

#[tokio::test(start_paused = true)]
async fn jobs_added_by_another_process_are_picked_up() {
    let env = Env::new();
    let (scheduling, clock) = env.open_at(t0());
    let (on_fire, mut rx) = recorder();
    let scheduler = scheduling.start_scheduler(on_fire).unwrap();
    role(&scheduler, SchedulerRole::Active).await;
    // A second service stands for a `-p` process: it only writes the file.
    let (other, _) = env.open_at(t0());
    other
        .add(
            None,
            "from elsewhere".into(),
            CronSchedule::At((t0() + secs(100)).to_rfc3339()),
        )
        .unwrap();
    let fired = next(&mut rx).await;
    assert_eq!(fired.message, "from elsewhere");
    assert_eq!(clock.now(), t0() + secs(100));
}

/// Another process adds a job due every 2 s while the scheduler runs: it is seen at the
/// scheduler's next look at the file (a second at most), so its first slot fires on
/// time and no slot is ever recorded as missed.
#[tokio::test(start_paused = true)]
async fn a_job_from_another_process_is_seen_at_once_and_fires_every_slot() {
    let env = Env::new();
    let (scheduling, clock) = env.open_at(t0());
    let (on_fire, mut rx) = recorder();
    let scheduler = scheduling.start_scheduler(on_fire).unwrap();
    role(&scheduler, SchedulerRole::Active).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let (other, _) = env.open_at(clock.now());
    other
        .add(None, "ping".into(), CronSchedule::EverySeconds(2))
        .unwrap();
    let added = clock.now();
    for n in 1..=5 {
        let fired = next(&mut rx).await;
        assert_eq!(fired.scheduled_at, added + secs(2 * n));
        assert_eq!(clock.now(), added + secs(2 * n), "slot {n} fired late");
    }
    feed_until(&scheduling, |jobs| {
        jobs[0].last_status == Some(RunStatus::Fired)
    })
    .await;
    let json = env.jobs_json(&scheduling);
    assert!(
        statuses(&json, 0)
            .iter()
            .all(|(_, status)| status == "fired"),
        "{json:#}"
    );
}

/// Even a scheduler that looks at the file only every 30 s (standing in for one that
/// noticed late) does not call the slots it slept through missed "while no scheduler
/// was running": one delivery stands for them, and says so.
#[tokio::test(start_paused = true)]
async fn slots_a_running_scheduler_could_not_fire_are_not_called_missed() {
    let env = Env::new();
    let (scheduling, clock) = env.open_rechecking(t0(), std::time::Duration::from_secs(30));
    let (on_fire, mut rx) = recorder();
    let scheduler = scheduling.start_scheduler(on_fire).unwrap();
    role(&scheduler, SchedulerRole::Active).await;
    let (other, _) = env.open_at(t0());
    other
        .add(None, "ping".into(), CronSchedule::EverySeconds(2))
        .unwrap();
    let fired = next(&mut rx).await;
    assert_eq!(clock.now(), t0() + secs(30));
    assert_eq!(fired.scheduled_at, t0() + secs(30));
    feed_until(&scheduling, |jobs| {
        jobs[0].last_status == Some(RunStatus::Fired)
    })
    .await;
    let json = env.jobs_json(&scheduling);
    let runs = json["jobs"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["status"], "fired");
    let note = runs[0]["note"].as_str().unwrap();
    assert!(
        note.contains("also stands for 14 earlier slot(s)")
            && !note.contains("no scheduler was running"),
        "{note}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_one_shot_job_fires_once_and_is_done() {
    let env = Env::new();
    let (service, _clock) = env.open_at(t0());
    let once = service
        .add(
            Some("once".into()),
            "only once".into(),
            CronSchedule::At((t0() + secs(10)).to_rfc3339()),
        )
        .unwrap();
    let (on_fire, mut rx) = recorder();
    let _scheduler = service.start_scheduler(on_fire).unwrap();
    assert_eq!(next(&mut rx).await.job_id, once.id);
    feed_until(&service, |jobs| {
        jobs[0].last_status == Some(RunStatus::Fired)
    })
    .await;

    let info = &service.list().unwrap()[0];
    assert!(info.done);
    assert_eq!(info.next_fire, None);
    let err = service.resume(&once.id).unwrap_err();
    assert!(err.to_string().contains("already had its time"), "{err}");
    // The next thing to fire is a later job, not the one-shot again.
    service
        .add(None, "later".into(), CronSchedule::EverySeconds(3600))
        .unwrap();
    assert_eq!(next(&mut rx).await.message, "later");
}

#[tokio::test(start_paused = true)]
async fn a_paused_job_does_not_fire_and_resumes_on_its_next_slot() {
    let env = Env::new();
    let (service, clock) = env.open_at(t0());
    let paused = service
        .add(None, "paused".into(), CronSchedule::EverySeconds(60))
        .unwrap();
    service.pause(&paused.id).unwrap();
    service
        .add(
            None,
            "marker".into(),
            CronSchedule::At((t0() + secs(90)).to_rfc3339()),
        )
        .unwrap();
    let (on_fire, mut rx) = recorder();
    let _scheduler = service.start_scheduler(on_fire).unwrap();
    // The slot at +60 s passes while paused: the first fire is the marker at +90 s.
    assert_eq!(next(&mut rx).await.message, "marker");
    assert_eq!(clock.now(), t0() + secs(90));
    service.resume(&paused.id).unwrap();
    let fired = next(&mut rx).await;
    assert_eq!(
        (fired.message.as_str(), fired.scheduled_at),
        ("paused", t0() + secs(120))
    );
    service.remove(&paused.id).unwrap();
    service
        .add(None, "after".into(), CronSchedule::EverySeconds(300))
        .unwrap();
    // Removed: nothing at +180 s; the next fire is the new job at +120 + 300 s.
    let fired = next(&mut rx).await;
    assert_eq!(
        (fired.message.as_str(), fired.scheduled_at),
        ("after", t0() + secs(420))
    );
}

#[tokio::test(start_paused = true)]
async fn runs_are_capped_and_a_panicking_handler_is_recorded() {
    let env = Env::new();
    let (service, _) = env.open_at(t0());
    service
        .add(None, "fast".into(), CronSchedule::EverySeconds(1))
        .unwrap();
    let (tx, mut rx) = unbounded_channel();
    let on_fire: FiredCallback = Arc::new(move |fired: CronFired| {
        let second = fired.scheduled_at;
        drop(tx.send(fired));
        assert!(second != t0() + secs(25), "handler fails on the 25th slot");
    });
    let _scheduler = service.start_scheduler(on_fire).unwrap();
    for n in 1..=26 {
        assert_eq!(next(&mut rx).await.scheduled_at, t0() + secs(n));
    }
    feed_until(&service, |jobs| {
        jobs[0].last_status == Some(RunStatus::Fired)
    })
    .await;
    let json = env.jobs_json(&service);
    let runs = json["jobs"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 20);
    let failed: Vec<&Value> = runs.iter().filter(|r| r["status"] == "failed").collect();
    assert_eq!(failed.len(), 1);
    assert!(failed[0]["note"].as_str().unwrap().contains("panicked"));
}
