//! Cron expressions: parsed by `croner`, with errors that name the bad field and its
//! position, since croner's own messages ("Number out of bounds.") do not.

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

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

fn parser() -> CronParser {
    CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Disallowed)
        .build()
}

/// Parses a 5- or 6-field cron expression (or an `@daily`-style nickname). The error
/// says which field is wrong, where it starts, and what that field accepts.
pub fn parse_cron_expr(expr: &str) -> Result<Cron, String> {
    let trimmed = expr.trim();
    if trimmed.is_empty() {
        return Err(format!("cron_expr is empty. {SHAPE}"));
    }
    if trimmed.starts_with('@') {
        if !NICKNAMES.iter().any(|n| n.eq_ignore_ascii_case(trimmed)) {
            return Err(format!(
                "cron_expr \"{trimmed}\" is not a known nickname; use one of {}, or a \
                 5-field expression.",
                NICKNAMES.join(", ")
            ));
        }
        return parser()
            .parse(trimmed)
            .map_err(|e| format!("cron_expr \"{trimmed}\" is invalid: {e}"));
    }
    let fields = split_fields(expr);
    let specs: &[FieldSpec] = match fields.len() {
        5 => &[MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK],
        6 => &[SECONDS, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK],
        n => {
            return Err(format!(
                "cron_expr \"{trimmed}\" has {n} field{}, but needs 5 or 6. {SHAPE}",
                if n == 1 { "" } else { "s" }
            ));
        }
    };
    let offset = 6 - specs.len();
    let field_error = |index: usize, column: usize, text: &str, spec: &FieldSpec, why: String| {
        format!(
            "cron_expr \"{trimmed}\": field {} ({}) \"{text}\" at column {column} is \
             invalid: {why} The {} field accepts {}.",
            index + 1,
            spec.name,
            spec.name,
            spec.allowed
        )
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
    Err(format!(
        "cron_expr \"{trimmed}\" is invalid: {} {SHAPE}",
        describe_croner_error(&full_error)
    ))
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
fn check_words(text: &str, spec: &FieldSpec) -> Result<(), String> {
    if let Some(ch) = text.chars().find(|c| !c.is_ascii()) {
        return Err(format!("the character '{ch}' is not allowed."));
    }
    // croner skips empty list items, which would hide a typo such as "0,,5".
    if text.split(',').any(str::is_empty) {
        return Err("it has an empty list item (a doubled comma, or one at an end).".to_owned());
    }
    for word in text
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
    {
        let upper = word.to_ascii_uppercase();
        if !spec.words.contains(&upper.as_str()) {
            let named = if spec.words.is_empty() {
                "it takes numbers only".to_owned()
            } else {
                format!("known names here are {}", spec.words.join(", "))
            };
            return Err(format!("\"{word}\" is not valid in this field; {named}."));
        }
    }
    Ok(())
}

/// Parses one field alone, every other field `*`, to find which one croner rejects.
/// `slot` is the field's index in the 6-field (seconds-first) layout.
fn probe_field(text: &str, slot: usize) -> Result<(), String> {
    let mut probe = ["*"; 6];
    probe[slot] = text;
    parser()
        .parse(&probe.join(" "))
        .map(|_| ())
        .map_err(|e| describe_croner_error(&e))
}

fn describe_croner_error(e: &croner::errors::CronError) -> String {
    use croner::errors::CronError as E;
    match e {
        E::ComponentError(m) | E::InvalidPattern(m) | E::IllegalCharacters(m) => m.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_one_based_characters() {
        assert_eq!(
            split_fields("  0 9  * *"),
            vec![(3, "0"), (5, "9"), (8, "*"), (10, "*")]
        );
    }
}
