//! Restarts and crashes: the missed-fire policy (within the grace window a missed slot
//! fires once, beyond it is recorded as missed) and no slot ever fires twice, also when
//! the app dies between recording a fire and delivering it.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::cron::*;
use chrono::Duration as Span;
use claw_tui::runtime::cron::{Clock, FiredCallback, RunStatus};
use claw_tui::tools::cron::CronSchedule;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::{error::TryRecvError, unbounded_channel};

#[tokio::test(start_paused = true)]
async fn a_missed_slot_within_the_grace_window_fires_once_at_startup() {
    let env = Env::new();
    {
        let (service, _) = env.open_at(t0());
        service
            .add(None, "hourly".into(), CronSchedule::EverySeconds(3600))
            .unwrap();
    }
    // The app was closed over the +1 h slot and reopens 5 minutes after it.
    let restart = t0() + Span::hours(1) + Span::minutes(5);
    let (service, clock) = env.open_at(restart);
    let (on_fire, mut rx) = recorder();
    let _scheduler = service.start_scheduler(on_fire).unwrap();
    let fired = next(&mut rx).await;
    assert_eq!(fired.scheduled_at, t0() + Span::hours(1));
    assert_eq!(clock.now(), restart);
    // The next one is the +2 h slot: the missed slot is not fired again.
    assert_eq!(next(&mut rx).await.scheduled_at, t0() + Span::hours(2));
    feed_until(&service, |jobs| {
        jobs[0].last_status == Some(RunStatus::Fired)
    })
    .await;
    let slot = |h: i64| (t0() + Span::hours(h)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    assert_eq!(
        statuses(&env.jobs_json(&service), 0),
        [(slot(1), "fired".into()), (slot(2), "fired".into())]
    );
}

#[tokio::test(start_paused = true)]
async fn a_slot_missed_beyond_the_grace_window_is_recorded_not_fired() {
    let env = Env::new();
    {
        let (service, _) = env.open_at(t0());
        service
            .add(None, "hourly".into(), CronSchedule::EverySeconds(3600))
            .unwrap();
    }
    let (service, _clock) = env.open_at(t0() + Span::hours(1) + Span::minutes(20));
    let (on_fire, mut rx) = recorder();
    let _scheduler = service.start_scheduler(on_fire).unwrap();
    feed_until(&service, |jobs| {
        jobs[0].last_status == Some(RunStatus::Missed)
    })
    .await;
    assert_eq!(rx.try_recv().unwrap_err(), TryRecvError::Empty);
    assert_eq!(next(&mut rx).await.scheduled_at, t0() + Span::hours(2));
    let json = env.jobs_json(&service);
    let runs = &json["jobs"][0]["runs"];
    assert_eq!(runs[0]["status"], "missed");
    let note = runs[0]["note"].as_str().unwrap();
    assert!(
        note.contains("20m late, past the 10m grace window"),
        "{note}"
    );
    assert_eq!(runs[1]["status"], "fired");
}

#[tokio::test(start_paused = true)]
async fn after_a_long_absence_only_the_latest_slot_fires() {
    let env = Env::new();
    {
        let (service, _) = env.open_at(t0());
        service
            .add(None, "hourly".into(), CronSchedule::EverySeconds(3600))
            .unwrap();
    }
    // Slots at +1 h .. +5 h passed; the latest is 3 minutes old.
    let (service, _clock) = env.open_at(t0() + Span::hours(5) + Span::minutes(3));
    let (on_fire, mut rx) = recorder();
    let _scheduler = service.start_scheduler(on_fire).unwrap();
    assert_eq!(next(&mut rx).await.scheduled_at, t0() + Span::hours(5));
    assert_eq!(next(&mut rx).await.scheduled_at, t0() + Span::hours(6));
    let json = env.jobs_json(&service);
    let runs = json["jobs"][0]["runs"].as_array().unwrap();
    assert_eq!(runs[0]["status"], "missed");
    assert!(
        runs[0]["note"]
            .as_str()
            .unwrap()
            .starts_with("4 slot(s) from "),
        "{}",
        runs[0]
    );
    assert_eq!(runs[1]["status"], "fired");
}

#[tokio::test(start_paused = true)]
async fn a_crash_between_recording_and_delivery_never_fires_twice() {
    let env = Env::new();
    let (service, _) = env.open_at(t0());
    service
        .add(None, "tick".into(), CronSchedule::EverySeconds(60))
        .unwrap();
    // The callback copies jobs.json as it is on disk at delivery time: exactly what a
    // crash at that moment would leave behind.
    let on_disk = Arc::new(Mutex::new(None::<String>));
    let (tx, mut rx) = unbounded_channel();
    let jobs_path = service.dir().join("jobs.json");
    let jobs_file = jobs_path.clone();
    let copy = on_disk.clone();
    let on_fire: FiredCallback = Arc::new(move |fired| {
        copy.lock()
            .unwrap()
            .get_or_insert_with(|| std::fs::read_to_string(&jobs_path).unwrap());
        drop(tx.send(fired));
    });
    let scheduler = service.start_scheduler(on_fire).unwrap();
    assert_eq!(next(&mut rx).await.scheduled_at, t0() + secs(60));
    scheduler.stop().await;
    drop(service);

    let crashed = on_disk.lock().unwrap().take().unwrap();
    assert!(crashed.contains("\"status\": \"firing\""), "{crashed}");
    std::fs::write(&jobs_file, &crashed).unwrap();

    // Restart 10 s later, well within the grace window of the +60 s slot.
    let (service, _) = env.open_at(t0() + secs(70));
    let (on_fire, mut rx) = recorder();
    let _scheduler = service.start_scheduler(on_fire).unwrap();
    feed_until(&service, |jobs| {
        jobs[0].last_status == Some(RunStatus::Failed)
    })
    .await;
    assert_eq!(rx.try_recv().unwrap_err(), TryRecvError::Empty);
    assert_eq!(next(&mut rx).await.scheduled_at, t0() + secs(120));
    let json = env.jobs_json(&service);
    let runs = json["jobs"][0]["runs"].as_array().unwrap();
    assert_eq!(runs[0]["status"], "failed");
    assert!(
        runs[0]["note"]
            .as_str()
            .unwrap()
            .contains("never delivered twice")
    );
}
