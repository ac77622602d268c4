//! Time zones for cron jobs: IANA names looked up in the system's time zone database
//! (`/usr/share/zoneinfo`, or `TZDIR`) through `jiff`, with a copy built in for systems
//! that have none; or the system's local zone when its IANA name cannot be found.
//!
//! Why jiff rather than chrono-tz: chrono-tz compiles every zone's transitions into the
//! binary as tables with a pointer in each entry, about 1 MB that the loader writes
//! (relocates) in every process at start, cron or not. jiff reads a zone's file when a
//! job names it, and croner searches jiff's zoned times directly.

use super::schedule_error::ScheduleError;
use chrono::Datelike;
use chrono::{DateTime, Local, LocalResult, NaiveDate, NaiveDateTime, TimeZone, Timelike, Utc};
use croner::Cron;
use jiff::tz::{AmbiguousOffset, TimeZone as JiffZone};
use jiff::{Timestamp, Zoned};
use std::path::Path;

/// The zone a job's wall-clock times are read in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Zone {
    /// A named IANA zone.
    Named(NamedZone),
    /// The system's local zone, used when its IANA name is unknown.
    Local,
}

/// An IANA zone found in the time zone database, with its canonical name.
#[derive(Clone, Debug)]
pub struct NamedZone {
    tz: JiffZone,
    name: String,
}

impl PartialEq for NamedZone {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for NamedZone {}

impl NamedZone {
    /// The zone's canonical IANA name, e.g. `Europe/Berlin` for `europe/berlin`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Croner's next (or previous) match of `cron` in this zone from `from`.
    pub fn search(
        &self,
        cron: &Cron,
        from: DateTime<Utc>,
        inclusive: bool,
        forward: bool,
    ) -> Option<DateTime<Utc>> {
        let start = to_timestamp(from)?.to_zoned(self.tz.clone());
        let found = if forward {
            cron.find_next_occurrence(&start, inclusive)
        } else {
            cron.find_previous_occurrence(&start, inclusive)
        };
        found
            .ok()
            .and_then(|z: Zoned| from_timestamp(z.timestamp()))
    }

    /// The instant `naive` names in this zone: once, twice (a repeated hour: earlier
    /// first) or never (a skipped hour).
    pub fn resolve(&self, naive: &NaiveDateTime) -> LocalResult<DateTime<Utc>> {
        let Some(civil) = to_civil(naive) else {
            return LocalResult::None;
        };
        let instant =
            |offset: jiff::tz::Offset| offset.to_timestamp(civil).ok().and_then(from_timestamp);
        match self.tz.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => {
                instant(offset).map_or(LocalResult::None, LocalResult::Single)
            }
            AmbiguousOffset::Fold { before, after } => match (instant(before), instant(after)) {
                (Some(a), Some(b)) => LocalResult::Ambiguous(a, b),
                _ => LocalResult::None,
            },
            AmbiguousOffset::Gap { .. } => LocalResult::None,
        }
    }

    /// For a wall time skipped by a change of offset, the instant the clock resumes
    /// (the change itself) and the wall time it then shows; `None` for a time that
    /// exists.
    pub fn gap_end(&self, naive: &NaiveDateTime) -> Option<(DateTime<Utc>, NaiveDateTime)> {
        let civil = to_civil(naive)?;
        let AmbiguousOffset::Gap { before, after } = self.tz.to_ambiguous_timestamp(civil).offset()
        else {
            return None;
        };
        // Read with the offset before the change, a skipped wall time lies at or after
        // the change; the change is the latest transition up to that instant.
        let late = before.to_timestamp(civil).ok()?;
        let change = self
            .tz
            .preceding(late.checked_add(jiff::SignedDuration::from_nanos(1)).ok()?)
            .next()?
            .timestamp();
        let wall = after.to_datetime(change);
        Some((from_timestamp(change)?, from_civil(wall)?))
    }

    /// The wall-clock time at `t` in this zone.
    pub fn wall(&self, t: DateTime<Utc>) -> Option<NaiveDateTime> {
        from_civil(self.tz.to_datetime(to_timestamp(t)?))
    }
}

impl Zone {
    /// The zone stored as `tz`: a name, or `None` for the system's local zone.
    pub fn from_stored(tz: Option<&str>) -> Result<Self, ScheduleError> {
        match tz {
            None => Ok(Self::Local),
            Some(name) => parse_tz(name).map(Self::Named),
        }
    }

    /// How the zone is shown to people.
    pub fn label(&self) -> String {
        match self {
            Self::Named(zone) => zone.name.clone(),
            Self::Local => "local time".to_owned(),
        }
    }

    /// The instant a wall-clock time names in this zone. A time skipped by a DST change
    /// is an error; a repeated one means its first occurrence.
    pub fn resolve_naive(&self, naive: &NaiveDateTime) -> Result<DateTime<Utc>, ScheduleError> {
        let result = match self {
            Self::Named(zone) => zone.resolve(naive),
            Self::Local => Local
                .from_local_datetime(naive)
                .map(|t| t.with_timezone(&Utc)),
        };
        match result {
            LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => Ok(t),
            LocalResult::None => Err(ScheduleError::SkippedTime {
                time: *naive,
                zone: self.label(),
            }),
        }
    }
}

/// Parses an IANA zone name, accepting any letter case, with a hint when it is unknown.
pub fn parse_tz(name: &str) -> Result<NamedZone, ScheduleError> {
    let name = name.trim();
    let db = jiff::tz::db();
    if let Ok(tz) = db.get(name)
        && let Some(canonical) = tz.iana_name()
    {
        let name = canonical.to_owned();
        return Ok(NamedZone { tz, name });
    }
    let needle = name.to_ascii_lowercase();
    let mut similar: Vec<String> = db
        .available()
        .map(|n| n.as_str().to_owned())
        .filter(|n| !needle.is_empty() && n.to_ascii_lowercase().contains(&needle))
        .collect();
    similar.sort();
    similar.truncate(3);
    Err(ScheduleError::UnknownZone {
        name: name.to_owned(),
        similar,
    })
}

/// The IANA name of the system's local zone, as chrono's `Local` sees it: the `TZ`
/// variable first, then `/etc/localtime`, then `/etc/timezone`. `None` when no name can
/// be found, and jobs then follow `Local` directly.
pub fn local_zone_name() -> Option<String> {
    if let Ok(tz) = std::env::var("TZ") {
        let tz = tz.trim().trim_start_matches(':');
        if !tz.is_empty() {
            // A TZ the database does not know (e.g. a POSIX rule) means the name is
            // unknowable, and the files below would describe a different zone.
            return zone_from_path_or_name(tz);
        }
    }
    if let Ok(target) = std::fs::read_link("/etc/localtime")
        && let Some(name) = zone_from_path_or_name(&target.to_string_lossy())
    {
        return Some(name);
    }
    std::fs::read_to_string("/etc/timezone")
        .ok()
        .and_then(|s| zone_from_path_or_name(s.trim()))
}

fn zone_from_path_or_name(text: &str) -> Option<String> {
    let name = match text.rfind("zoneinfo/") {
        Some(i) => &text[i + "zoneinfo/".len()..],
        None if Path::new(text).is_absolute() => return None,
        None => text,
    };
    parse_tz(name).ok().map(|zone| zone.name)
}

fn to_timestamp(t: DateTime<Utc>) -> Option<Timestamp> {
    let nanos = i32::try_from(t.timestamp_subsec_nanos()).ok()?;
    Timestamp::new(t.timestamp(), nanos).ok()
}

fn from_timestamp(t: Timestamp) -> Option<DateTime<Utc>> {
    let nanos = u32::try_from(t.subsec_nanosecond()).ok()?;
    Utc.timestamp_opt(t.as_second(), nanos).single()
}

fn to_civil(naive: &NaiveDateTime) -> Option<jiff::civil::DateTime> {
    jiff::civil::DateTime::new(
        i16::try_from(naive.year()).ok()?,
        i8::try_from(naive.month()).ok()?,
        i8::try_from(naive.day()).ok()?,
        i8::try_from(naive.hour()).ok()?,
        i8::try_from(naive.minute()).ok()?,
        i8::try_from(naive.second()).ok()?,
        i32::try_from(naive.nanosecond()).ok()?,
    )
    .ok()
}

fn from_civil(civil: jiff::civil::DateTime) -> Option<NaiveDateTime> {
    NaiveDate::from_ymd_opt(
        i32::from(civil.year()),
        u32::try_from(civil.month()).ok()?,
        u32::try_from(civil.day()).ok()?,
    )?
    .and_hms_nano_opt(
        u32::try_from(civil.hour()).ok()?,
        u32::try_from(civil.minute()).ok()?,
        u32::try_from(civil.second()).ok()?,
        u32::try_from(civil.subsec_nanosecond()).ok()?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_names_come_from_paths() {
        assert_eq!(
            zone_from_path_or_name("/usr/share/zoneinfo/Europe/Berlin").as_deref(),
            Some("Europe/Berlin")
        );
        assert_eq!(
            zone_from_path_or_name("Etc/UTC").as_deref(),
            Some("Etc/UTC")
        );
        assert_eq!(zone_from_path_or_name("/etc/some/file"), None);
        assert_eq!(zone_from_path_or_name("CET-1CEST"), None);
    }

    #[test]
    fn names_are_case_insensitive_with_hints() {
        assert_eq!(parse_tz("europe/berlin").unwrap().name(), "Europe/Berlin");
        let err = parse_tz("Berlinn").unwrap_err().to_string();
        assert!(err.contains("Unknown time zone \"Berlinn\""), "{err}");
        let err = parse_tz("Berlin").unwrap_err().to_string();
        assert!(err.contains("Europe/Berlin"), "{err}");
    }

    /// A name is a key of the database, never a path: the model writes it.
    #[test]
    fn a_path_is_not_a_zone() {
        for name in [
            "../../../etc/passwd",
            "/etc/localtime",
            "Europe/../Europe/Berlin",
            "",
        ] {
            assert!(parse_tz(name).is_err(), "{name}");
        }
    }

    #[test]
    fn skipped_and_repeated_hours_and_the_clock_after_a_gap() {
        let berlin = parse_tz("Europe/Berlin").unwrap();
        let at = |s: &str| NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap();
        let utc = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        assert_eq!(berlin.resolve(&at("2026-03-29 02:30")), LocalResult::None);
        assert_eq!(
            berlin.gap_end(&at("2026-03-29 02:30")),
            Some((utc("2026-03-29T01:00:00Z"), at("2026-03-29 03:00")))
        );
        assert_eq!(berlin.gap_end(&at("2026-03-29 03:30")), None);
        assert_eq!(
            berlin.resolve(&at("2026-10-25 02:30")),
            LocalResult::Ambiguous(utc("2026-10-25T00:30:00Z"), utc("2026-10-25T01:30:00Z"))
        );
        assert_eq!(
            berlin.resolve(&at("2026-07-01 12:00")),
            LocalResult::Single(utc("2026-07-01T10:00:00Z"))
        );
        assert_eq!(
            berlin.wall(utc("2026-07-01T10:00:00Z")),
            Some(at("2026-07-01 12:00"))
        );
    }
}
