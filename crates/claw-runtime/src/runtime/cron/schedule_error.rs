//! Why a schedule cannot be used: what the model asked for (a bad interval, a time in
//! the past, an unknown zone, a cron expression with a bad field) or what a stored job
//! holds. The messages are what the model reads back, so each says how to fix it.

use super::expr::CronExprError;
use super::schedule::local_text;
use chrono::{DateTime, NaiveDateTime, Utc};

/// A schedule that is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// `every_seconds: 0`.
    #[error("every_seconds must be at least 1.")]
    ZeroInterval,
    /// An interval longer than [`super::schedule::MAX_EVERY_SECONDS`].
    #[error(
        "every_seconds {0} is longer than a year; use cron_expr for long intervals or at \
         for a single time."
    )]
    IntervalTooLong(u64),
    /// A stored interval outside the accepted range (an edited file).
    #[error("every_seconds {0} is out of range")]
    StoredIntervalOutOfRange(u64),
    /// An `at` time that has passed.
    #[error(
        "at \"{text}\" is in the past: it is {}, and now is {}. Give a future time.",
        local_text(*.at),
        local_text(*.now)
    )]
    InThePast {
        /// The time as given.
        text: String,
        /// The instant it names.
        at: DateTime<Utc>,
        /// The time of the check.
        now: DateTime<Utc>,
    },
    /// An `at` time that is not ISO 8601.
    #[error(
        "at \"{text}\" is not an ISO 8601 date-time. Use e.g. 2026-03-08T14:30:00+01:00, \
         2026-03-08T14:30:00Z, or 2026-03-08T14:30 for {zone}."
    )]
    NotADateTime {
        /// The time as given.
        text: String,
        /// The zone a time without an offset is read in, as shown to people.
        zone: String,
    },
    /// A wall-clock time that a daylight-saving change skips.
    #[error(
        "{time} does not exist in {zone} (the clocks skip it for daylight saving time); \
         pick a time outside the gap or give an explicit offset like +01:00."
    )]
    SkippedTime {
        /// The wall-clock time.
        time: NaiveDateTime,
        /// The zone, as shown to people.
        zone: String,
    },
    /// A zone name that is not an IANA zone.
    #[error("Unknown time zone \"{name}\". {}", zone_hint(.similar))]
    UnknownZone {
        /// The name as given (trimmed).
        name: String,
        /// Up to three zone names that contain it.
        similar: Vec<String>,
    },
    /// A schedule no date matches (e.g. February 30).
    #[error(
        "{description} never fires: no date matches it (e.g. February 30). Check the \
         day-of-month and month fields."
    )]
    NeverFires {
        /// The schedule in words.
        description: String,
    },
    /// A cron expression that does not parse.
    #[error(transparent)]
    Expr(#[from] CronExprError),
}

/// Names like the unknown one, or what an IANA name looks like.
fn zone_hint(similar: &[String]) -> String {
    if similar.is_empty() {
        "Use an IANA name such as Europe/Berlin, America/New_York or UTC.".to_owned()
    } else {
        format!("Did you mean {}?", similar.join(", "))
    }
}
