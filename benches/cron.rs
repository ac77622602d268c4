//! Next-fire computation for 1,000 loaded cron jobs (a mix of intervals, cron
//! expressions in several time zones, and one-shot times). Target: under 5 ms for all.
//!
//! Also measured: the same right before New York's spring-forward gap, where the jobs
//! scheduled inside the skipped hour fire at its end (croner finds that end by walking
//! the hour second by second; `CompiledSchedule` takes it from the zone's data), and
//! loading the jobs (`CronService::open`: read, parse, compile).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use chrono::{DateTime, Duration, Utc};
use claw_tui::runtime::cron::store::{JobRecord, JobsFile};
use claw_tui::runtime::cron::{CompiledSchedule, CronOptions, CronService, JobSchedule};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

const JOBS: usize = 1000;

const EXPRS: [&str; 10] = [
    "30 14 * * WED",
    "0 9 * * MON-FRI",
    "*/15 9-17 * * *",
    "0 0 1 * *",
    "0 9-17/4 1 JAN,JUL *",
    "*/20 * * * * *",
    "0 0 L * *",
    "15 30 2 * * SUN",
    "0 12 * JUN-AUG SAT,SUN",
    "5 4 * * *",
];
const ZONES: [&str; 5] = [
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Asia/Tokyo",
    "Australia/Sydney",
];

/// An ordinary Wednesday morning.
fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-03-11T06:30:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

/// 01:30 in New York on 2026-03-08, half an hour before 02:00 jumps to 03:00; the jobs
/// with "15 30 2 * * SUN" in New York are due inside the skipped hour.
fn before_gap() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-03-08T06:30:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn best_of_50(compiled: &[CompiledSchedule], at: DateTime<Utc>) -> std::time::Duration {
    (0..50)
        .map(|_| {
            let start = std::time::Instant::now();
            let fires: Vec<_> = compiled.iter().map(|s| s.next_after(at)).collect();
            black_box(fires);
            start.elapsed()
        })
        .min()
        .unwrap()
}

fn schedule(i: usize) -> JobSchedule {
    match i % 10 {
        0..=1 => JobSchedule::Every {
            seconds: 30 + i as u64,
            anchor: now() - Duration::hours(3),
        },
        2 => JobSchedule::At {
            at: now() + Duration::minutes(i as i64),
        },
        // Every expression in every zone, spread over the jobs.
        _ => JobSchedule::Cron {
            expr: EXPRS[(i / 10) % EXPRS.len()].to_owned(),
            tz: Some(ZONES[(i / 100 + i) % ZONES.len()].to_owned()),
        },
    }
}

fn jobs_file() -> JobsFile {
    JobsFile {
        version: 1,
        workspace: "/bench".into(),
        next_id: JOBS as u64 + 1,
        jobs: (0..JOBS)
            .map(|i| JobRecord {
                id: format!("cron-{}", i + 1),
                name: format!("job {i}"),
                message: format!("message {i}"),
                schedule: schedule(i),
                created_at: now() - Duration::hours(3),
                paused: false,
                done: false,
                handled_until: now(),
                runs: Vec::new(),
                session: None,
            })
            .collect(),
    }
}

fn cron(c: &mut Criterion) {
    let compiled: Vec<CompiledSchedule> = (0..JOBS)
        .map(|i| CompiledSchedule::compile(&schedule(i)).unwrap())
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let data = tmp.path().join("data");
    let service = CronService::open(&data, &workspace, CronOptions::default()).unwrap();
    let jobs_path = service.dir().join("jobs.json");
    std::fs::write(&jobs_path, serde_json::to_vec(&jobs_file()).unwrap()).unwrap();
    let service = CronService::open(&data, &workspace, CronOptions::default()).unwrap();
    assert_eq!(service.next_fires().len(), JOBS);

    // The headline figures, measured directly: the best of 50 rounds.
    eprintln!(
        "next fire for {JOBS} jobs: {:?} (target < 5 ms); right before a DST gap: {:?}",
        best_of_50(&compiled, now()),
        best_of_50(&compiled, before_gap())
    );

    let mut group = c.benchmark_group("cron_1000_jobs");
    group.bench_function("next_fire_all", |b| {
        b.iter(|| {
            compiled
                .iter()
                .map(|s| s.next_after(black_box(now())))
                .filter(Option::is_some)
                .count()
        })
    });
    group.bench_function("next_fire_all_before_dst_gap", |b| {
        b.iter(|| {
            compiled
                .iter()
                .map(|s| s.next_after(black_box(before_gap())))
                .filter(Option::is_some)
                .count()
        })
    });
    group.bench_function("service_next_fires", |b| b.iter(|| service.next_fires()));
    group.bench_function("open_and_compile", |b| {
        b.iter(|| CronService::open(&data, &workspace, CronOptions::default()).unwrap())
    });
    group.finish();
}

criterion_group!(benches, cron);
criterion_main!(benches);
