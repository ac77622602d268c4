//! Cron schedules as pure functions of an explicit `now`: next fire for every schedule
//! kind (time zones with DST changes included), due windows, and invalid input.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::cron::utc;
use claw_tui::runtime::cron::ScheduleError;
use claw_tui::runtime::cron::schedule::{
    CompiledSchedule, JobSchedule, parse_at, validate, validate_with_local,
};
use claw_tui::runtime::cron::zone::{Zone, parse_tz};
use claw_tui::tools::cron::CronSchedule;

fn cron(expr: &str, tz: &str) -> CompiledSchedule {
    CompiledSchedule::compile(&JobSchedule::Cron {
        expr: expr.into(),
        tz: Some(tz.into()),
    })
    .unwrap()
}

/// The next `n` fire times after `from`, as RFC 3339 UTC strings.
fn fires(schedule: &CompiledSchedule, from: &str, n: usize) -> Vec<String> {
    let mut at = utc(from);
    let mut out = Vec::new();
    for _ in 0..n {
        at = schedule.next_after(at).expect("a next fire");
        out.push(at.to_rfc3339());
    }
    out
}

#[test]
fn wednesday_at_1430_in_the_jobs_zone() {
    let s = cron("30 14 * * WED", "Europe/Berlin");
    // Monday 2026-03-09; Berlin is on CET (UTC+1) until 2026-03-29.
    assert_eq!(
        fires(&s, "2026-03-09T08:00:00Z", 2),
        ["2026-03-11T13:30:00+00:00", "2026-03-18T13:30:00+00:00"]
    );
    // Across Berlin's spring change the wall time stays 14:30 (now UTC+2).
    assert_eq!(
        fires(&s, "2026-03-25T14:00:00Z", 1),
        ["2026-04-01T12:30:00+00:00"]
    );
    // Exactly at a slot, the next one is a week later (strictly after).
    assert_eq!(
        fires(&s, "2026-03-11T13:30:00Z", 1),
        ["2026-03-18T13:30:00+00:00"]
    );
}

#[test]
fn new_york_spring_forward() {
    // 2026-03-08: 02:00 EST jumps to 03:00 EDT.
    let daily_nine = cron("0 9 * * *", "America/New_York");
    assert_eq!(
        fires(&daily_nine, "2026-03-07T12:00:00Z", 2),
        ["2026-03-07T14:00:00+00:00", "2026-03-08T13:00:00+00:00"]
    );
    // 02:30 does not exist on the 8th: the job runs when the clock resumes (03:00 EDT),
    // then at 02:30 EDT again from the 9th.
    let in_gap = cron("30 2 * * *", "America/New_York");
    assert_eq!(
        fires(&in_gap, "2026-03-07T12:00:00Z", 2),
        ["2026-03-08T07:00:00+00:00", "2026-03-09T06:30:00+00:00"]
    );
}

#[test]
fn new_york_fall_back() {
    // 2026-11-01: 02:00 EDT falls back to 01:00 EST, so 01:30 happens twice.
    let fixed = cron("30 1 * * *", "America/New_York");
    assert_eq!(
        fires(&fixed, "2026-11-01T00:00:00Z", 2),
        // Once, at the first 01:30 (EDT), then 01:30 EST the next day.
        ["2026-11-01T05:30:00+00:00", "2026-11-02T06:30:00+00:00"]
    );
    // An interval job runs in both halves of the repeated hour.
    let half_hourly = cron("*/30 * * * *", "America/New_York");
    assert_eq!(
        fires(&half_hourly, "2026-11-01T04:45:00Z", 5),
        [
            "2026-11-01T05:00:00+00:00",
            "2026-11-01T05:30:00+00:00",
            "2026-11-01T06:00:00+00:00",
            "2026-11-01T06:30:00+00:00",
            "2026-11-01T07:00:00+00:00",
        ]
    );
}

#[test]
fn berlin_dst_changes() {
    // 2026-03-29: 02:00 CET jumps to 03:00 CEST.
    let morning = cron("0 9 * * *", "Europe/Berlin");
    assert_eq!(
        fires(&morning, "2026-03-28T00:00:00Z", 2),
        ["2026-03-28T08:00:00+00:00", "2026-03-29T07:00:00+00:00"]
    );
    let in_gap = cron("30 2 * * *", "Europe/Berlin");
    assert_eq!(
        fires(&in_gap, "2026-03-28T12:00:00Z", 2),
        ["2026-03-29T01:00:00+00:00", "2026-03-30T00:30:00+00:00"]
    );
    // 2026-10-25: 03:00 CEST falls back to 02:00 CET.
    assert_eq!(
        fires(&morning, "2026-10-24T12:00:00Z", 2),
        ["2026-10-25T08:00:00+00:00", "2026-10-26T08:00:00+00:00"]
    );
}

#[test]
fn named_days_months_ranges_and_steps() {
    // Weekdays only: from Friday evening to Monday morning.
    let weekdays = cron("0 8 * * mon-fri", "UTC");
    assert_eq!(
        fires(&weekdays, "2026-03-13T20:00:00Z", 2),
        ["2026-03-16T08:00:00+00:00", "2026-03-17T08:00:00+00:00"]
    );
    // Hours 9, 13, 17 on the first of January and July.
    let stepped = cron("0 9-17/4 1 JAN,JUL *", "UTC");
    assert_eq!(
        fires(&stepped, "2026-01-01T10:00:00Z", 3),
        [
            "2026-01-01T13:00:00+00:00",
            "2026-01-01T17:00:00+00:00",
            "2026-07-01T09:00:00+00:00"
        ]
    );
    let quarter_hours = cron("*/15 9-10 * * *", "UTC");
    assert_eq!(
        fires(&quarter_hours, "2026-05-05T10:40:00Z", 2),
        ["2026-05-05T10:45:00+00:00", "2026-05-06T09:00:00+00:00"]
    );
    // Last day of the month.
    let last_day = cron("0 0 L * *", "UTC");
    assert_eq!(
        fires(&last_day, "2026-02-01T00:00:00Z", 2),
        ["2026-02-28T00:00:00+00:00", "2026-03-31T00:00:00+00:00"]
    );
    let daily = cron("@daily", "UTC");
    assert_eq!(
        fires(&daily, "2026-02-01T10:00:00Z", 1),
        ["2026-02-02T00:00:00+00:00"]
    );
}

#[test]
fn six_fields_have_seconds_first() {
    let every_20s = cron("*/20 * * * * *", "UTC");
    assert_eq!(
        fires(&every_20s, "2026-01-01T12:00:05Z", 3),
        [
            "2026-01-01T12:00:20+00:00",
            "2026-01-01T12:00:40+00:00",
            "2026-01-01T12:01:00+00:00"
        ]
    );
    let precise = cron("15 30 14 * * WED", "UTC");
    assert_eq!(
        fires(&precise, "2026-03-09T00:00:00Z", 1),
        ["2026-03-11T14:30:15+00:00"]
    );
}

#[test]
fn every_seconds_counts_from_its_anchor() {
    let s = CompiledSchedule::compile(&JobSchedule::Every {
        seconds: 90,
        anchor: utc("2026-03-08T06:59:00Z"),
    })
    .unwrap();
    // Plain UTC arithmetic, so New York's DST change at 07:00Z changes nothing.
    assert_eq!(
        fires(&s, "2026-03-08T06:59:00Z", 3),
        [
            "2026-03-08T07:00:30+00:00",
            "2026-03-08T07:02:00+00:00",
            "2026-03-08T07:03:30+00:00"
        ]
    );
    assert_eq!(
        fires(&s, "2026-03-08T08:00:00Z", 1),
        ["2026-03-08T08:00:30+00:00"]
    );
    // Before the anchor, the first slot is still anchor + interval.
    assert_eq!(
        fires(&s, "2026-03-01T00:00:00Z", 1),
        ["2026-03-08T07:00:30+00:00"]
    );
}

#[test]
fn one_shot_at() {
    let s = CompiledSchedule::compile(&JobSchedule::At {
        at: utc("2026-03-08T14:30:00Z"),
    })
    .unwrap();
    assert!(s.is_one_shot());
    assert_eq!(
        s.next_after(utc("2026-03-08T14:00:00Z")),
        Some(utc("2026-03-08T14:30:00Z"))
    );
    assert_eq!(s.next_after(utc("2026-03-08T14:30:00Z")), None);
}

#[test]
fn at_times_with_and_without_offsets() {
    let ny = Zone::Named(parse_tz("America/New_York").unwrap());
    assert_eq!(
        parse_at("2026-03-08T14:30:00+01:00", &ny),
        Ok(utc("2026-03-08T13:30:00Z"))
    );
    assert_eq!(
        parse_at("2026-03-08T14:30:00Z", &ny),
        Ok(utc("2026-03-08T14:30:00Z"))
    );
    // Without an offset: wall-clock time in the zone (EST before the change).
    assert_eq!(
        parse_at("2026-03-07T14:30", &ny),
        Ok(utc("2026-03-07T19:30:00Z"))
    );
    assert_eq!(
        parse_at("2026-03-09 14:30:00", &ny),
        Ok(utc("2026-03-09T18:30:00Z"))
    );
    // Skipped by the DST change: an error that says so.
    let err = parse_at("2026-03-08T02:30", &ny).unwrap_err().to_string();
    assert!(err.contains("does not exist in America/New_York"), "{err}");
    // Repeated: the first occurrence.
    assert_eq!(
        parse_at("2026-11-01T01:30", &ny),
        Ok(utc("2026-11-01T05:30:00Z"))
    );
    let err = parse_at("tomorrow at noon", &ny).unwrap_err().to_string();
    assert!(err.contains("not an ISO 8601 date-time"), "{err}");
}

#[test]
fn validation_fills_in_the_local_zone() {
    let now = utc("2026-03-01T00:00:00Z");
    let expr = CronSchedule::Expr {
        expr: "0  9 * *   MON-FRI".into(),
        tz: None,
    };
    assert_eq!(
        validate_with_local(&expr, now, Some("Europe/Berlin")),
        Ok(JobSchedule::Cron {
            expr: "0 9 * * MON-FRI".into(),
            tz: Some("Europe/Berlin".into())
        })
    );
    // An unknown local zone name means: follow the system zone as chrono sees it.
    assert_eq!(
        validate_with_local(&expr, now, None),
        Ok(JobSchedule::Cron {
            expr: "0 9 * * MON-FRI".into(),
            tz: None
        })
    );
    // An explicit zone wins, in any letter case, stored canonically.
    let explicit = CronSchedule::Expr {
        expr: "0 9 * * *".into(),
        tz: Some("america/new_york".into()),
    };
    assert_eq!(
        validate_with_local(&explicit, now, Some("Europe/Berlin")),
        Ok(JobSchedule::Cron {
            expr: "0 9 * * *".into(),
            tz: Some("America/New_York".into())
        })
    );
    let at = CronSchedule::At("2026-07-01T09:00".into());
    assert_eq!(
        validate_with_local(&at, now, Some("Europe/Berlin")),
        Ok(JobSchedule::At {
            at: utc("2026-07-01T07:00:00Z")
        })
    );
    assert_eq!(
        validate(&CronSchedule::EverySeconds(30), now),
        Ok(JobSchedule::Every {
            seconds: 30,
            anchor: now
        })
    );
}

fn expr_error(expr: &str) -> String {
    let input = CronSchedule::Expr {
        expr: expr.into(),
        tz: Some("UTC".into()),
    };
    validate(&input, utc("2026-01-01T00:00:00Z"))
        .expect_err(expr)
        .to_string()
}

#[test]
fn invalid_expressions_name_the_field_and_position() {
    let cases = [
        (
            "61 * * * *",
            ["field 1 (minute)", "\"61\"", "column 1", "0-59"],
        ),
        (
            "0 25 * * *",
            ["field 2 (hour)", "\"25\"", "column 3", "0-23"],
        ),
        (
            "0 9 32 * *",
            ["field 3 (day-of-month)", "\"32\"", "column 5", "1-31"],
        ),
        (
            "0 9 * 13 *",
            ["field 4 (month)", "\"13\"", "column 7", "JAN-DEC"],
        ),
        (
            "0 9 * MON *",
            ["field 4 (month)", "\"MON\"", "column 7", "JAN"],
        ),
        (
            "0 9 * * FUNDAY",
            ["field 5 (day-of-week)", "\"FUNDAY\"", "column 9", "SUN-SAT"],
        ),
        (
            "*/0 9 * * *",
            ["field 1 (minute)", "\"*/0\"", "column 1", "zero"],
        ),
        (
            "0 9-30 * * *",
            ["field 2 (hour)", "\"9-30\"", "column 3", "0-23"],
        ),
        (
            "60 0 9 * * *",
            ["field 1 (seconds)", "\"60\"", "column 1", "0-59"],
        ),
        (
            "0,,5 9 * * *",
            [
                "field 1 (minute)",
                "\"0,,5\"",
                "column 1",
                "empty list item",
            ],
        ),
        (
            "0 0 9 * * 8",
            ["field 6 (day-of-week)", "\"8\"", "column 11", "0-7"],
        ),
    ];
    for (expr, needles) in cases {
        let err = expr_error(expr);
        for needle in needles {
            assert!(err.contains(needle), "{expr}: {err:?} lacks {needle:?}");
        }
    }
}

#[test]
fn invalid_shapes_zones_and_times() {
    let err = expr_error("1 2 3");
    assert!(err.contains("has 3 fields, but needs 5 or 6"), "{err}");
    let err = expr_error("0 0 0 1 1 * 2030");
    assert!(err.contains("has 7 fields"), "{err}");
    let err = expr_error("   ");
    assert!(err.contains("cron_expr is empty"), "{err}");
    let err = expr_error("@fortnightly");
    assert!(err.contains("@daily"), "{err}");
    let err = expr_error("0 0 30 2 *");
    assert!(err.contains("never fires"), "{err}");

    let now = utc("2026-01-01T00:00:00Z");
    let bad_zone = CronSchedule::Expr {
        expr: "0 9 * * *".into(),
        tz: Some("Mars/Olympus_Mons".into()),
    };
    let err = validate(&bad_zone, now).unwrap_err().to_string();
    assert!(
        err.contains("Unknown time zone \"Mars/Olympus_Mons\""),
        "{err}"
    );
    let err = validate(&CronSchedule::EverySeconds(0), now).unwrap_err();
    assert_eq!(err, ScheduleError::ZeroInterval);
    assert_eq!(err.to_string(), "every_seconds must be at least 1.");
    let err = validate(&CronSchedule::At("2025-12-31T23:00:00Z".into()), now)
        .unwrap_err()
        .to_string();
    assert!(err.contains("in the past"), "{err}");
}

#[test]
fn due_windows_report_first_latest_and_count() {
    let hourly = cron("0 * * * *", "UTC");
    assert_eq!(
        hourly.due(utc("2026-01-01T10:00:00Z"), utc("2026-01-01T10:59:59Z")),
        None
    );
    let due = hourly
        .due(utc("2026-01-01T10:00:00Z"), utc("2026-01-01T13:30:00Z"))
        .unwrap();
    assert_eq!(due.first, utc("2026-01-01T11:00:00Z"));
    assert_eq!(due.latest, utc("2026-01-01T13:00:00Z"));
    assert_eq!(due.earlier, 2);

    let every = CompiledSchedule::compile(&JobSchedule::Every {
        seconds: 60,
        anchor: utc("2026-01-01T00:00:00Z"),
    })
    .unwrap();
    let due = every
        .due(utc("2026-01-01T00:00:00Z"), utc("2026-01-01T01:00:30Z"))
        .unwrap();
    assert_eq!(due.first, utc("2026-01-01T00:01:00Z"));
    assert_eq!(due.latest, utc("2026-01-01T01:00:00Z"));
    assert_eq!(due.earlier, 59);
    // The slot exactly at the window's end is due.
    let due = every
        .due(utc("2026-01-01T00:00:00Z"), utc("2026-01-01T00:01:00Z"))
        .unwrap();
    assert_eq!((due.latest, due.earlier), (utc("2026-01-01T00:01:00Z"), 0));
}

#[test]
fn descriptions_read_well() {
    let s = cron("30 14 * * WED", "Europe/Berlin");
    let text = s.describe();
    assert!(
        text.starts_with("cron \"30 14 * * WED\" in Europe/Berlin ("),
        "{text}"
    );
    assert!(text.contains("Wednesday"), "{text}");
    let every = |seconds| {
        CompiledSchedule::compile(&JobSchedule::Every {
            seconds,
            anchor: utc("2026-01-01T00:00:00Z"),
        })
        .unwrap()
        .describe()
    };
    assert_eq!(every(1), "every second");
    assert_eq!(every(90), "every 90 seconds");
    assert_eq!(every(300), "every 5 minutes");
    assert_eq!(every(3600), "every hour");
    assert_eq!(every(2 * 86_400), "every 2 days");
}
