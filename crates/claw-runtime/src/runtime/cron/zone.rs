//! Time zones for cron jobs: IANA names through `chrono-tz`, or the system's local zone
//! when its IANA name cannot be found.

use super::schedule_error::ScheduleError;
use chrono::{DateTime, Local, LocalResult, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use std::path::Path;

/// The zone a job's wall-clock times are read in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// A named IANA zone.
    Named(Tz),
    /// The system's local zone, used when its IANA name is unknown.
    Local,
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
            Self::Named(tz) => tz.name().to_owned(),
            Self::Local => "local time".to_owned(),
        }
    }

    /// The instant a wall-clock time names in this zone. A time skipped by a DST change
    /// is an error; a repeated one means its first occurrence.
    pub fn resolve_naive(&self, naive: &NaiveDateTime) -> Result<DateTime<Utc>, ScheduleError> {
        let result = match self {
            Self::Named(tz) => map_utc(tz.from_local_datetime(naive)),
            Self::Local => map_utc(Local.from_local_datetime(naive)),
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

fn map_utc<T: TimeZone>(r: LocalResult<DateTime<T>>) -> LocalResult<DateTime<Utc>> {
    r.map(|t| t.with_timezone(&Utc))
}

/// Parses an IANA zone name, accepting any letter case, with a hint when it is unknown.
pub fn parse_tz(name: &str) -> Result<Tz, ScheduleError> {
    let name = name.trim();
    if let Ok(tz) = name.parse::<Tz>() {
        return Ok(tz);
    }
    if let Some(tz) = chrono_tz::TZ_VARIANTS
        .iter()
        .find(|tz| tz.name().eq_ignore_ascii_case(name))
    {
        return Ok(*tz);
    }
    let needle = name.to_ascii_lowercase();
    let similar: Vec<&'static str> = chrono_tz::TZ_VARIANTS
        .iter()
        .map(|tz| tz.name())
        .filter(|n| !needle.is_empty() && n.to_ascii_lowercase().contains(&needle))
        .take(3)
        .collect();
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
    name.parse::<Tz>().ok().map(|tz| tz.name().to_owned())
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
        assert_eq!(parse_tz("europe/berlin"), Ok(chrono_tz::Europe::Berlin));
        let err = parse_tz("Berlinn").unwrap_err().to_string();
        assert!(err.contains("Unknown time zone \"Berlinn\""), "{err}");
        let err = parse_tz("Berlin").unwrap_err().to_string();
        assert!(err.contains("Europe/Berlin"), "{err}");
    }
}
