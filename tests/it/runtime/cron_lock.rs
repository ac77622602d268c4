//! One scheduler per workspace: `flock` on `scheduler.lock` makes exactly one service
//! (or process) fire the jobs, and a standby one takes over when it goes away.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::cron::*;
use claw_tui::runtime::cron::{Clock, CronOptions, CronService, SchedulerRole};
use claw_tui::tools::cron::CronSchedule;
use std::time::Duration;
use tokio::sync::mpsc::error::TryRecvError;

#[tokio::test(start_paused = true)]
async fn only_one_service_per_workspace_schedules() {
    let env = Env::new();
    let (a, clock) = env.open_at(t0());
    let (b, _) = env.open_at(t0());
    let (fire_a, mut rx_a) = recorder();
    let (fire_b, mut rx_b) = recorder();
    let sched_a = a.start_scheduler(fire_a).unwrap();
    role(&sched_a, SchedulerRole::Active).await;
    let sched_b = b.start_scheduler(fire_b).unwrap();
    role(&sched_b, SchedulerRole::Standby).await;

    a.add(None, "tick".into(), CronSchedule::EverySeconds(60))
        .unwrap();
    for minute in 1..=3 {
        assert_eq!(next(&mut rx_a).await.scheduled_at, t0() + secs(60 * minute));
    }
    assert_eq!(rx_b.try_recv().unwrap_err(), TryRecvError::Empty);
    assert_eq!(sched_b.role(), SchedulerRole::Standby);

    // When the scheduling process goes away, the standby one takes over, and the slots
    // continue without a repeat.
    sched_a.stop().await;
    role(&sched_b, SchedulerRole::Active).await;
    let fired = next(&mut rx_b).await;
    assert_eq!(fired.scheduled_at, t0() + secs(240));
    assert!(clock.now() >= t0() + secs(240));
    assert_eq!(rx_a.try_recv().unwrap_err(), TryRecvError::Disconnected);
}

/// Another OS process holding the lock (util-linux `flock`, standing in for a second
/// claw-tui) keeps this one on standby until it exits. Real time: a real process.
#[tokio::test]
async fn a_scheduler_in_another_process_keeps_this_one_on_standby() {
    use std::io::BufRead;
    let env = Env::new();
    let options = CronOptions {
        recheck_interval: Duration::from_millis(20),
        ..CronOptions::default()
    };
    let service = CronService::open(&env.data, &env.workspace, options).unwrap();
    let lock = service.dir().join("scheduler.lock");
    let mut holder = std::process::Command::new("flock")
        .arg(&lock)
        .args(["-c", "echo locked; exec cat"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux flock is installed");
    let mut line = String::new();
    std::io::BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "locked");

    let (on_fire, _rx) = recorder();
    let scheduler = service.start_scheduler(on_fire).unwrap();
    let mut watch = scheduler.watch_role();
    let first = tokio::time::timeout(
        Duration::from_secs(10),
        watch.wait_for(|r| *r != SchedulerRole::Starting),
    )
    .await
    .expect("the scheduler tried the lock")
    .map(|r| *r)
    .unwrap();
    assert_eq!(first, SchedulerRole::Standby);

    // Closing its stdin ends `cat`, and with it the other process and its lock.
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    tokio::time::timeout(
        Duration::from_secs(10),
        watch.wait_for(|r| *r == SchedulerRole::Active),
    )
    .await
    .expect("took over after the other process exited")
    .unwrap();
}
