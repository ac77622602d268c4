//! Reading a session's event log (`<session>.events.jsonl`, written by
//! `session::events`) back: its segments and each event's JSON text as it was recorded.

use crate::session::events::SegmentStart;
use std::io::BufRead;
use std::path::Path;

/// Who sent a recorded event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The main agent's loop (`AgentEvent`).
    Agent,
    /// The background runtime (`RuntimeEvent`).
    Runtime,
    /// The cron jobs' list (the client's dashboard; not a JSON-mode line).
    CronJobs,
    /// What changed in the cron jobs' list (likewise).
    CronChanges,
}

/// One line of the log.
#[derive(Debug, PartialEq, Eq)]
pub enum LogLine<'a> {
    /// A process began recording the session.
    Start(SegmentStart),
    /// An event, `us` microseconds into its segment, as the JSON text `--mode json`
    /// printed for it.
    Event {
        /// Time since the segment began.
        us: u64,
        /// Its sender.
        source: Source,
        /// Its JSON text.
        json: &'a str,
    },
}

/// Splits one line; `None` for a line that is not one this build writes (a torn last
/// line after a crash, or damage).
pub fn parse_line(line: &str) -> Option<LogLine<'_>> {
    let rest = line.trim_end().strip_prefix("{\"us\":")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let us: u64 = rest[..digits].parse().ok()?;
    let rest = rest[digits..].strip_prefix(",\"")?;
    let (key, json) = rest.split_once("\":")?;
    let json = json.strip_suffix('}')?;
    // The event's text must be one whole JSON value, or the line is torn.
    serde_json::from_str::<serde::de::IgnoredAny>(json).ok()?;
    match key {
        "start" => serde_json::from_str(json).ok().map(LogLine::Start),
        "agent" => Some(LogLine::Event {
            us,
            source: Source::Agent,
            json,
        }),
        "runtime" => Some(LogLine::Event {
            us,
            source: Source::Runtime,
            json,
        }),
        "cron_jobs" => Some(LogLine::Event {
            us,
            source: Source::CronJobs,
            json,
        }),
        "cron_changes" => Some(LogLine::Event {
            us,
            source: Source::CronChanges,
            json,
        }),
        _ => None,
    }
}

/// The log's lines, read whole; lines that cannot be read are counted, not returned.
#[derive(Debug, Default)]
pub struct LogText {
    /// The lines, in order.
    pub lines: Vec<String>,
    /// How many lines were damaged and skipped.
    pub damaged: usize,
}

impl LogText {
    /// Reads the log at `path`; `Ok(None)` when there is none.
    pub fn read(path: &Path) -> std::io::Result<Option<Self>> {
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut text = LogText::default();
        for line in std::io::BufReader::new(file).split(b'\n') {
            match String::from_utf8(line?) {
                Ok(line) if parse_line(&line).is_some() => text.lines.push(line),
                Ok(line) if line.trim().is_empty() => {}
                _ => text.damaged += 1,
            }
        }
        Ok(Some(text))
    }

    /// The lines, parsed (every kept line parses).
    pub fn parsed(&self) -> impl Iterator<Item = LogLine<'_>> {
        self.lines.iter().filter_map(|line| parse_line(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_line_gives_back_its_json_text_unchanged() {
        let line = r#"{"us":42,"agent":{"type":"turn_start","turn":1}}"#;
        assert_eq!(
            parse_line(line),
            Some(LogLine::Event {
                us: 42,
                source: Source::Agent,
                json: r#"{"type":"turn_start","turn":1}"#
            })
        );
    }

    #[test]
    fn torn_and_foreign_lines_are_refused() {
        assert_eq!(parse_line(r#"{"us":42,"agent":{"type":"turn_st"#), None);
        assert_eq!(parse_line(r#"{"us":42,"other":{}}"#), None);
        assert_eq!(parse_line("garbage"), None);
        assert!(matches!(
            parse_line(r#"{"us":0,"start":{"wall_ms":5,"messages":2}}"#),
            Some(LogLine::Start(SegmentStart {
                wall_ms: 5,
                messages: 2
            }))
        ));
    }
}
