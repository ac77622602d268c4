//! Cron expressions: parsed by `croner`, with errors that name the bad field and its
//! position, since croner's own messages ("Number out of bounds.") do not.

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use std::sync::Arc;

/// What each field is called and what it accepts, for error messages.
struct FieldSpec {
    name: &'static str,
    allowed: &'static str,
    words: &'static [&'static str],
}

const SECONDS: FieldSpec = FieldSpec {
    name: "seconds",
    allowed: "0-59 and * , - / (e.g. */10, 0-30/5)",
    words: &[],
};
const MINUTE: FieldSpec = FieldSpec {
    name: "minute",
    allowed: "0-59 and * , - / (e.g. */15, 0,30)",
    words: &[],
};
const HOUR: FieldSpec = FieldSpec {
    name: "hour",
    allowed: "0-23 and * , - / (e.g. 9-17, */2)",
    words: &[],
};
const DAY_OF_MONTH: FieldSpec = FieldSpec {
    name: "day-of-month",
    allowed: "1-31 and * , - / ? L (last day) W (nearest weekday, e.g. 15W)",
    words: &["L", "W", "LW"],
};
const MONTH: FieldSpec = FieldSpec {
    name: "month",
    allowed: "1-12 or JAN-DEC and * , - / (e.g. JAN-MAR, */3)",
    words: &[
        "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
    ],
};
const DAY_OF_WEEK: FieldSpec = FieldSpec {
    name: "day-of-week",
    allowed: "0-7 or SUN-SAT (0 and 7 are Sunday) and * , - / ? # L (e.g. MON-FRI, FRI#2, 5L)",
    words: &["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "L"],
};

const NICKNAMES: [&str; 6] = [
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@hourly",
];

const SHAPE: &str = "Give 5 fields (minute hour day-of-month month day-of-week), or 6 with \
                     seconds first, e.g. \"30 14 * * WED\" for Wednesdays at 14:30.";

/// A cron expression that does not parse, with the field and column when one is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CronExprError {
    /// Nothing but spaces.
    #[error("cron_expr is empty. {SHAPE}")]
    Empty,
    /// `@something` that is not a nickname.
    #[error(
        "cron_expr \"{expr}\" is not a known nickname; use one of {}, or a 5-field \
         expression.",
        NICKNAMES.join(", ")
    )]
    UnknownNickname {
        /// The expression (trimmed).
        expr: String,
    },
    /// A nickname croner refuses.
    #[error("cron_expr \"{expr}\" is invalid: {reason}")]
    BadNickname {
        /// The expression (trimmed).
        expr: String,
        /// croner's refusal.
        #[source]
        reason: CronerError,
    },
    /// Not 5 or 6 fields.
    #[error(
        "cron_expr \"{expr}\" has {count} field{}, but needs 5 or 6. {SHAPE}",
        if *.count == 1 { "" } else { "s" }
    )]
    FieldCount {
        /// The expression (trimmed).
        expr: String,
        /// The fields it has.
        count: usize,
    },
    /// One field is wrong.
    #[error(transparent)]
    Field(Box<BadField>),
    /// Every field parses alone, but croner refuses the whole.
    #[error("cron_expr \"{expr}\" is invalid: {} {SHAPE}", .reason.message())]
    Invalid {
        /// The expression (trimmed).
        expr: String,
        /// croner's refusal.
        #[source]
        reason: CronerError,
    },
}

/// The field of a cron expression that is wrong, where it is and what it accepts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "cron_expr \"{expr}\": field {number} ({field}) \"{text}\" at column {column} is \
     invalid: {problem} The {field} field accepts {allowed}."
)]
pub struct BadField {
    /// The expression (trimmed).
    pub expr: String,
    /// The field's place, from 1.
    pub number: usize,
    /// The field's name, e.g. `minute`.
    pub field: &'static str,
    /// The field as written.
    pub text: String,
    /// The character column it starts at, from 1.
    pub column: usize,
    /// What is wrong with it.
    pub problem: FieldProblem,
    /// What the field accepts.
    pub allowed: &'static str,
}

/// What is wrong with one field of a cron expression.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldProblem {
    /// A character outside ASCII.
    #[error("the character '{0}' is not allowed.")]
    NotAscii(char),
    /// `0,,5` or a comma at an end.
    #[error("it has an empty list item (a doubled comma, or one at an end).")]
    EmptyListItem,
    /// A word the field does not know.
    #[error("\"{word}\" is not valid in this field; {}.", known_words(.known))]
    UnknownWord {
        /// The word as written.
        word: String,
        /// The words the field knows.
        known: &'static [&'static str],
    },
    /// croner refuses the field (its reason).
    #[error("{}", .0.message())]
    Refused(#[source] CronerError),
}

/// croner's refusal of an expression, shared so the errors carrying it stay cheap to
/// clone; two are equal when they say the same.
#[derive(Clone, Debug)]
pub struct CronerError(Arc<croner::errors::CronError>);

impl CronerError {
    /// croner's own words without its category prefix (`Invalid pattern: ` etc.), for
    /// messages that say "invalid" themselves.
    pub fn message(&self) -> String {
        use croner::errors::CronError as E;
        match &*self.0 {
            E::ComponentError(m) | E::InvalidPattern(m) | E::IllegalCharacters(m) => m.clone(),
            other => other.to_string(),
        }
    }
}

impl From<croner::errors::CronError> for CronerError {
    fn from(e: croner::errors::CronError) -> Self {
        Self(Arc::new(e))
    }
}

impl std::fmt::Display for CronerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for CronerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

impl PartialEq for CronerError {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for CronerError {}

/// The names a field knows, for [`FieldProblem::UnknownWord`].
fn known_words(known: &[&str]) -> String {
    if known.is_empty() {
        "it takes numbers only".to_owned()
    } else {
        format!("known names here are {}", known.join(", "))
    }
}

fn parser() -> CronParser {
    CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Disallowed)
        .build()
}

/// Parses a 5- or 6-field cron expression (or an `@daily`-style nickname). The error
/// says which field is wrong, where it starts, and what that field accepts.
pub fn parse_cron_expr(expr: &str) -> Result<Cron, CronExprError> {
    let trimmed = expr.trim();
    if trimmed.is_empty() {
        return Err(CronExprError::Empty);
    }
    if trimmed.starts_with('@') {
        if !NICKNAMES.iter().any(|n| n.eq_ignore_ascii_case(trimmed)) {
            return Err(CronExprError::UnknownNickname {
                expr: trimmed.to_owned(),
            });
        }
        return parser()
            .parse(trimmed)
            .map_err(|e| CronExprError::BadNickname {
                expr: trimmed.to_owned(),
                reason: e.into(),
            });
    }
    let fields = split_fields(expr);
    let specs: &[FieldSpec] = match fields.len() {
        5 => &[MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK],
        6 => &[SECONDS, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK],
        count => {
            return Err(CronExprError::FieldCount {
                expr: trimmed.to_owned(),
                count,
            });
        }
    };
    let offset = 6 - specs.len();
    let field_error = |index: usize, column: usize, text: &str, spec: &FieldSpec, problem| {
        CronExprError::Field(Box::new(BadField {
            expr: trimmed.to_owned(),
            number: index + 1,
            field: spec.name,
            text: text.to_owned(),
            column,
            problem,
            allowed: spec.allowed,
        }))
    };
    for (index, ((column, text), spec)) in fields.iter().zip(specs).enumerate() {
        check_words(text, spec).map_err(|why| field_error(index, *column, text, spec, why))?;
    }
    // One parse on the common, valid path; the per-field probes below only run to
    // explain a failure.
    let full_error = match parser().parse(trimmed) {
        Ok(cron) => return Ok(cron),
        Err(e) => e,
    };
    for (index, ((column, text), spec)) in fields.iter().zip(specs).enumerate() {
        probe_field(text, index + offset)
            .map_err(|why| field_error(index, *column, text, spec, why))?;
    }
    Err(CronExprError::Invalid {
        expr: trimmed.to_owned(),
        reason: full_error.into(),
    })
}

/// The fields with the 1-based character column each starts at.
fn split_fields(expr: &str) -> Vec<(usize, &str)> {
    let mut fields = Vec::new();
    let mut start = None;
    let mut column = 0;
    let mut start_column = 0;
    for (byte, ch) in expr.char_indices() {
        column += 1;
        match (ch.is_whitespace(), start) {
            (false, None) => {
                start = Some(byte);
                start_column = column;
            }
            (true, Some(s)) => {
                fields.push((start_column, &expr[s..byte]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        fields.push((start_column, &expr[s..]));
    }
    fields
}

/// Checks a field's shape before croner sees it: no empty list items, and only words
/// the field knows (croner replaces `MON` and `JAN` by 1 anywhere in the expression,
/// so `MON` in the month field would mean January).
fn check_words(text: &str, spec: &FieldSpec) -> Result<(), FieldProblem> {
    if let Some(ch) = text.chars().find(|c| !c.is_ascii()) {
        return Err(FieldProblem::NotAscii(ch));
    }
    // croner skips empty list items, which would hide a typo such as "0,,5".
    if text.split(',').any(str::is_empty) {
        return Err(FieldProblem::EmptyListItem);
    }
    for word in text
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
    {
        let upper = word.to_ascii_uppercase();
        if !spec.words.contains(&upper.as_str()) {
            return Err(FieldProblem::UnknownWord {
                word: word.to_owned(),
                known: spec.words,
            });
        }
    }
    Ok(())
}

/// Parses one field alone, every other field `*`, to find which one croner rejects.
/// `slot` is the field's index in the 6-field (seconds-first) layout.
fn probe_field(text: &str, slot: usize) -> Result<(), FieldProblem> {
    let mut probe = ["*"; 6];
    probe[slot] = text;
    parser()
        .parse(&probe.join(" "))
        .map(|_| ())
        .map_err(|e| FieldProblem::Refused(e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_field_keeps_crons_error_as_its_source() {
        use std::error::Error as _;
        let Err(CronExprError::Field(bad)) = parse_cron_expr("61 * * * *") else {
            panic!("minute 61 is a bad field");
        };
        let FieldProblem::Refused(reason) = &bad.problem else {
            panic!("croner refuses it: {:?}", bad.problem);
        };
        let croner = reason
            .source()
            .and_then(|s| s.downcast_ref::<croner::errors::CronError>());
        assert!(croner.is_some(), "{reason:?}");
        // The line names the field and croner's words, without its category prefix.
        let text = bad.to_string();
        assert!(
            text.contains("field 1 (minute) \"61\" at column 1"),
            "{text}"
        );
        assert!(text.contains(&reason.message()), "{text}");
        assert!(!reason.message().starts_with("Component error"), "{text}");
    }

    #[test]
    fn columns_are_one_based_characters() {
        assert_eq!(
            split_fields("  0 9  * *"),
            vec![(3, "0"), (5, "9"), (8, "*"), (10, "*")]
        );
    }
}
