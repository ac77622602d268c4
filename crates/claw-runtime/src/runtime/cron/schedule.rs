//! Schedules: checking what the model asked for, storing it, and computing fire times.
//! Every function here takes `now`/`after` explicitly, so it is pure and testable.
//!
//! Cron expressions follow croner's (Vixie-cron) DST rules in the job's zone: a wall
//! time skipped by a spring-forward change fires when the clock resumes (02:30 becomes
//! 03:00 that day); a time repeated by a fall-back change fires once, at its first
//! occurrence, while interval patterns (`*/30 * * * *`) fire in both repeated halves.
//! `every_seconds` is plain elapsed time and ignores DST.

use super::expr::parse_cron_expr;
use super::schedule_error::ScheduleError;
use super::zone::{NamedZone, Zone, local_zone_name, parse_tz};
use crate::tools::cron::CronSchedule;
use chrono::{DateTime, Local, LocalResult, NaiveDateTime, TimeZone, Utc};
use croner::{Cron, JobType};
use serde::{Deserialize, Serialize};

/// The longest `every_seconds` accepted: a year. Longer intervals read better as
/// `cron_expr` or `at`, and keep the millisecond arithmetic far from overflow.
pub const MAX_EVERY_SECONDS: u64 = 366 * 24 * 3600;

/// How many earlier due slots [`CompiledSchedule::due`] counts before it stops.
pub const DUE_COUNT_CAP: u64 = 1000;

/// A checked schedule as stored in `jobs.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JobSchedule {
    /// Fires at `anchor + k * seconds` for k = 1, 2, ...
    Every {
        /// The interval.
        seconds: u64,
        /// When the job was created (or its interval last restarted).
        anchor: DateTime<Utc>,
    },
    /// Fires when the wall clock in `tz` matches `expr`.
    Cron {
        /// The cron expression, 5 or 6 fields.
        expr: String,
        /// IANA zone name; `None` follows the system's local zone.
        tz: Option<String>,
    },
    /// Fires once.
    At {
        /// The instant to fire at.
        at: DateTime<Utc>,
    },
}

/// Checks `input` as of `now`, resolving defaults: a cron expression without `tz` gets
/// the system's local zone, and an `at` time without an offset is read in it.
pub fn validate(input: &CronSchedule, now: DateTime<Utc>) -> Result<JobSchedule, ScheduleError> {
    validate_with_local(input, now, local_zone_name().as_deref())
}

/// [`validate`] with the local zone given by name (`None`: chrono's `Local`).
pub fn validate_with_local(
    input: &CronSchedule,
    now: DateTime<Utc>,
    local: Option<&str>,
) -> Result<JobSchedule, ScheduleError> {
    let schedule = match input {
        CronSchedule::EverySeconds(0) => return Err(ScheduleError::ZeroInterval),
        CronSchedule::EverySeconds(s) if *s > MAX_EVERY_SECONDS => {
            return Err(ScheduleError::IntervalTooLong(*s));
        }
        CronSchedule::EverySeconds(seconds) => JobSchedule::Every {
            seconds: *seconds,
            anchor: truncate_to_millis(now),
        },
        CronSchedule::Expr { expr, tz } => {
            let tz = match tz.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
                Some(name) => Some(parse_tz(name)?.name().to_owned()),
                None => local
                    .map(|n| parse_tz(n).map(|tz| tz.name().to_owned()))
                    .transpose()?,
            };
            parse_cron_expr(expr)?;
            JobSchedule::Cron {
                expr: expr.split_whitespace().collect::<Vec<_>>().join(" "),
                tz,
            }
        }
        CronSchedule::At(text) => {
            let zone = Zone::from_stored(local)?;
            let at = parse_at(text, &zone)?;
            if at <= now {
                return Err(ScheduleError::InThePast {
                    text: text.trim().to_owned(),
                    at,
                    now,
                });
            }
            JobSchedule::At { at }
        }
    };
    let compiled = CompiledSchedule::compile(&schedule)?;
    if compiled.next_after(now).is_none() {
        return Err(ScheduleError::NeverFires {
            description: compiled.describe(),
        });
    }
    Ok(schedule)
}

/// Reads an ISO 8601 date-time. With an offset (`Z`, `+01:00`) it is exact; without one
/// it is a wall-clock time in `zone`.
pub fn parse_at(text: &str, zone: &Zone) -> Result<DateTime<Utc>, ScheduleError> {
    let text = text.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    for format in ["%Y-%m-%dT%H:%M%:z", "%Y-%m-%d %H:%M%:z", "%Y-%m-%dT%H:%M%z"] {
        if let Ok(t) = DateTime::parse_from_str(text, format) {
            return Ok(t.with_timezone(&Utc));
        }
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(text, format) {
            return zone.resolve_naive(&naive);
        }
    }
    Err(ScheduleError::NotADateTime {
        text: text.to_owned(),
        zone: zone.label(),
    })
}

/// The due slots in a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    /// The earliest slot in the window.
    pub first: DateTime<Utc>,
    /// The latest slot in the window.
    pub latest: DateTime<Utc>,
    /// Slots in the window before `latest` (so `first` is one of them unless this is
    /// 0), counted up to [`DUE_COUNT_CAP`].
    pub earlier: u64,
}

/// A schedule ready for fire-time computation (the cron expression parsed once).
#[derive(Clone, Debug)]
pub struct CompiledSchedule {
    kind: Kind,
    /// The words, made once: croner's `describe` costs about as much as a parse.
    description: String,
}

#[derive(Clone, Debug)]
enum Kind {
    Every {
        period_ms: i64,
        anchor_ms: i64,
    },
    Cron {
        cron: Box<Cron>,
        zone: Zone,
        expr: String,
        /// One second, minute and hour (croner's `JobType::FixedTime`), worked out once:
        /// croner counts the set values of three fields to tell.
        fixed_time: bool,
    },
    At(DateTime<Utc>),
}

impl CompiledSchedule {
    /// Prepares a stored schedule; fails if it no longer parses (e.g. an edited file).
    pub fn compile(schedule: &JobSchedule) -> Result<Self, ScheduleError> {
        let kind = match schedule {
            JobSchedule::Every { seconds, anchor } => {
                if *seconds == 0 || *seconds > MAX_EVERY_SECONDS {
                    return Err(ScheduleError::StoredIntervalOutOfRange(*seconds));
                }
                Kind::Every {
                    period_ms: i64::try_from(*seconds).unwrap_or(i64::MAX) * 1000,
                    anchor_ms: anchor.timestamp_millis(),
                }
            }
            JobSchedule::Cron { expr, tz } => {
                let cron = parse_cron_expr(expr)?;
                Kind::Cron {
                    fixed_time: cron.determine_job_type() == JobType::FixedTime,
                    cron: Box::new(cron),
                    zone: Zone::from_stored(tz.as_deref())?,
                    expr: expr.clone(),
                }
            }
            JobSchedule::At { at } => Kind::At(*at),
        };
        let description = describe_kind(&kind);
        Ok(Self { kind, description })
    }

    /// The first fire time strictly after `after`; `None` if there is none.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match &self.kind {
            Kind::Every {
                period_ms,
                anchor_ms,
            } => {
                let k = (after.timestamp_millis() - anchor_ms)
                    .div_euclid(*period_ms)
                    .saturating_add(1)
                    .max(1);
                from_millis(anchor_ms.checked_add(k.checked_mul(*period_ms)?)?)
            }
            Kind::Cron {
                cron,
                zone,
                fixed_time,
                ..
            } => match zone {
                Zone::Named(zone) => fixed_time
                    .then(|| next_fixed_time(cron, zone, after))
                    .flatten()
                    .or_else(|| zone.search(cron, after, false, true)),
                Zone::Local => cron
                    .find_next_occurrence(&after.with_timezone(&Local), false)
                    .ok()
                    .map(|t| t.with_timezone(&Utc)),
            },
            Kind::At(at) => (*at > after).then_some(*at),
        }
    }

    /// The slots in `(after, upto]`, if any: the first, the latest, and a count of the
    /// ones before the latest. Agrees with [`Self::next_after`]: whenever
    /// `next_after(after) <= upto` there is a due slot, so handling it always advances.
    pub fn due(&self, after: DateTime<Utc>, upto: DateTime<Utc>) -> Option<Due> {
        let first = self.next_after(after).filter(|t| *t <= upto)?;
        match &self.kind {
            Kind::Every {
                period_ms,
                anchor_ms,
            } => {
                let k_hi = (upto.timestamp_millis() - anchor_ms).div_euclid(*period_ms);
                let latest = anchor_ms
                    .checked_add(k_hi.checked_mul(*period_ms)?)
                    .and_then(from_millis)
                    .filter(|t| *t >= first)
                    .unwrap_or(first);
                let earlier = (latest.timestamp_millis() - first.timestamp_millis()) / period_ms;
                Some(Due {
                    first,
                    latest,
                    earlier: u64::try_from(earlier).unwrap_or(0).min(DUE_COUNT_CAP),
                })
            }
            Kind::Cron { cron, zone, .. } => {
                let latest = previous(cron, zone, upto, true)
                    .filter(|t| *t >= first)
                    .unwrap_or(first);
                let mut earlier = 0;
                let mut cursor = latest;
                while earlier < DUE_COUNT_CAP && cursor > first {
                    match previous(cron, zone, cursor, false) {
                        Some(t) if t >= first => {
                            earlier += 1;
                            cursor = t;
                        }
                        _ => break,
                    }
                }
                Some(Due {
                    first,
                    latest,
                    earlier,
                })
            }
            Kind::At(_) => Some(Due {
                first,
                latest: first,
                earlier: 0,
            }),
        }
    }

    /// Whether this is a one-shot schedule, done after its slot.
    pub fn is_one_shot(&self) -> bool {
        matches!(self.kind, Kind::At(_))
    }

    /// The schedule in words, e.g. `every 5 minutes` or
    /// `cron "30 14 * * WED" in Europe/Berlin (At 14:30, on Wednesday)`.
    pub fn describe(&self) -> String {
        self.description.clone()
    }
}

fn describe_kind(kind: &Kind) -> String {
    match kind {
        Kind::Every { period_ms, .. } => every_text(u64::try_from(period_ms / 1000).unwrap_or(0)),
        Kind::Cron {
            cron, zone, expr, ..
        } => format!(
            "cron \"{expr}\" in {} ({})",
            zone.label(),
            cron.describe().trim_end_matches('.')
        ),
        Kind::At(at) => format!("once at {}", local_text(*at)),
    }
}

/// A stored schedule in words, even when it no longer compiles.
pub fn describe_stored(schedule: &JobSchedule) -> String {
    match CompiledSchedule::compile(schedule) {
        Ok(c) => c.describe(),
        Err(_) => match schedule {
            JobSchedule::Every { seconds, .. } => every_text(*seconds),
            JobSchedule::Cron { expr, tz } => format!(
                "cron \"{expr}\" in {}",
                tz.as_deref().unwrap_or("local time")
            ),
            JobSchedule::At { at } => format!("once at {}", local_text(*at)),
        },
    }
}

/// `every 90 seconds`, `every 5 minutes`, `every hour`, `every 2 days`.
pub fn every_text(seconds: u64) -> String {
    let (n, unit) = match seconds {
        s if s >= 86_400 && s % 86_400 == 0 => (s / 86_400, "day"),
        s if s >= 3600 && s % 3600 == 0 => (s / 3600, "hour"),
        s if s >= 60 && s % 60 == 0 => (s / 60, "minute"),
        s => (s, "second"),
    };
    if n == 1 {
        format!("every {unit}")
    } else {
        format!("every {n} {unit}s")
    }
}

/// An instant in the system's local zone, e.g. `2026-03-11 14:30:00 +01:00`.
pub fn local_text(t: DateTime<Utc>) -> String {
    t.with_timezone(&Local)
        .format("%Y-%m-%d %H:%M:%S %:z")
        .to_string()
}

/// Croner's next fire for a fixed-time job (one second, minute and hour) in `tz`, found
/// on the bare wall clock; `None` leaves the case to croner.
///
/// Croner's search in a zone moves its cursor exactly as the same search on the bare
/// wall clock does, up to the first matching wall time `w`: an unmatched time steps on
/// the same way whether it exists, repeats or is skipped. A fixed-time job then returns
/// `w` when it happens once. When a DST gap skips `w`, croner steps one second at a time
/// to the gap's end `e`, resolving each second in the zone (up to 3,600 lookups, which
/// made the searches right before a gap twice as slow as any other), and returns `e` if
/// it is on `w`'s date (so the date still matches) and after `after`; that rule is
/// applied here from the gap's bounds. Everything else (`w` in a repeated hour, a gap
/// ending the next day, a gap over croner's two-hour limit, a search error) goes to
/// croner. `fast_path_agrees_with_croner_around_dst_changes` holds the two together.
fn next_fixed_time(cron: &Cron, zone: &NamedZone, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let wall = zone.wall(after)?;
    let w = cron.find_next_occurrence(&wall, false).ok()?;
    match zone.resolve(&w) {
        LocalResult::Single(t) => Some(t),
        LocalResult::Ambiguous(..) => None,
        LocalResult::None => {
            let (end, end_wall) = zone.gap_end(&w)?;
            let steps = (end_wall - w).num_seconds();
            let croner_rule = end_wall.date() == w.date()
                && (1..=MAX_GAP_WALK_SECONDS).contains(&steps)
                && end > after;
            croner_rule.then_some(end)
        }
    }
}

/// How far croner walks out of a DST gap before it gives up (its `MAX_GAP_SEARCH_SECONDS`).
const MAX_GAP_WALK_SECONDS: i64 = 2 * 3600;

fn previous(
    cron: &Cron,
    zone: &Zone,
    from: DateTime<Utc>,
    inclusive: bool,
) -> Option<DateTime<Utc>> {
    match zone {
        Zone::Named(zone) => zone.search(cron, from, inclusive, false),
        Zone::Local => cron
            .find_previous_occurrence(&from.with_timezone(&Local), inclusive)
            .ok()
            .map(|t| t.with_timezone(&Utc)),
    }
}

fn from_millis(ms: i64) -> Option<DateTime<Utc>> {
    Utc.timestamp_millis_opt(ms).single()
}

fn truncate_to_millis(t: DateTime<Utc>) -> DateTime<Utc> {
    from_millis(t.timestamp_millis()).unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wall-clock path gives croner's own answer (in the zone, second by second)
    /// for fixed-time and interval jobs at instants every 17 minutes across DST changes:
    /// gaps and repeated hours, half-hour shifts (Lord Howe), changes at midnight (São
    /// Paulo 2018, Havana), one that ends the next day (Nuuk) and a skipped day (Apia 2011).
    #[test]
    fn fast_path_agrees_with_croner_around_dst_changes() {
        let exprs = [
            "30 2 * * *",
            "15 30 2 * * SUN",
            "0 0 * * *",
            "30 0 * * *",
            "0 3 * * *",
            "45 1 * * *",
            "0 12 29-31 12 *",
            "*/30 * * * *",
            "0 9 * * MON-FRI",
            "30 23 * * *",
            "30 23 * * SAT",
        ];
        let cases = [
            ("America/New_York", "2026-03-08T07:00:00Z"),
            ("America/New_York", "2026-11-01T06:00:00Z"),
            ("Europe/Berlin", "2026-03-29T01:00:00Z"),
            ("Europe/Berlin", "2026-10-25T01:00:00Z"),
            ("Australia/Lord_Howe", "2026-10-03T15:30:00Z"),
            ("Australia/Lord_Howe", "2026-04-04T15:00:00Z"),
            ("America/Sao_Paulo", "2018-11-04T03:00:00Z"),
            ("America/Havana", "2026-03-08T05:00:00Z"),
            ("Pacific/Apia", "2011-12-30T10:00:00Z"),
            // Saturday 23:00 jumps to Sunday 00:00: the gap's end is on the next day.
            ("America/Nuuk", "2026-03-29T01:00:00Z"),
        ];
        for (zone, change) in cases {
            let tz = parse_tz(zone).unwrap();
            let change = DateTime::parse_from_rfc3339(change)
                .unwrap()
                .with_timezone(&Utc);
            for expr in exprs {
                let compiled = CompiledSchedule::compile(&JobSchedule::Cron {
                    expr: expr.to_owned(),
                    tz: Some(zone.to_owned()),
                })
                .unwrap();
                let cron = parse_cron_expr(expr).unwrap();
                // Every 17 minutes from 26 hours before the change to 26 hours after.
                for step in -92..=92 {
                    let after = change + chrono::Duration::seconds(step * 17 * 60 + 13);
                    let croner = tz.search(&cron, after, false, true);
                    assert_eq!(
                        compiled.next_after(after),
                        croner,
                        "{expr} in {zone} after {after}"
                    );
                }
            }
        }
    }
}
