//! Reading a session's event log (`<session>.events.jsonl`, written by
//! `session::events`) back: its segments and each event's JSON text as it was recorded.

use crate::session::event_refs;
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
    let (us, key, json) = split_line(line)?;
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

/// A line's time, key and value text: `{"us":T,"KEY":VALUE}`.
fn split_line(line: &str) -> Option<(u64, &str, &str)> {
    let rest = line.trim_end().strip_prefix("{\"us\":")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let us: u64 = rest[..digits].parse().ok()?;
    let rest = rest[digits..].strip_prefix(",\"")?;
    let (key, json) = rest.split_once("\":")?;
    Some((us, key, json.strip_suffix('}')?))
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
        // The segment's `message_end` lines (their place in `lines`, their time), which
        // a `turn_end` or `agent_end` written with references names.
        let mut ended: Vec<(usize, u64)> = Vec::new();
        for line in std::io::BufReader::new(file).split(b'\n') {
            let Ok(line) = String::from_utf8(line?) else {
                text.damaged += 1;
                continue;
            };
            let kind = match parse_line(&line) {
                Some(LogLine::Start(_)) => Some(true),
                Some(LogLine::Event {
                    us,
                    source: Source::Agent,
                    json,
                }) if event_refs::message_of(json).is_some() => {
                    ended.push((text.lines.len(), us));
                    Some(false)
                }
                Some(_) => Some(false),
                None => None,
            };
            match kind {
                Some(segment_start) => {
                    if segment_start {
                        ended.clear();
                    }
                    text.lines.push(line);
                }
                None if line.trim().is_empty() => {}
                None => match text.expand(&line, &ended) {
                    Some((us, whole)) => {
                        // A message line itself, which later ones may name.
                        if let Some(LogLine::Event { json, .. }) = parse_line(&whole)
                            && event_refs::message_of(json).is_some()
                        {
                            ended.push((text.lines.len(), us));
                        }
                        text.lines.push(whole);
                    }
                    None => text.damaged += 1,
                },
            }
        }
        Ok(Some(text))
    }

    /// The line of an event written with references to the segment's `ended` messages,
    /// as it would have been written whole (`None`: not such a line, or a reference
    /// names no message of the segment).
    fn expand(&self, line: &str, ended: &[(usize, u64)]) -> Option<(u64, String)> {
        let (us, key, refs) = split_line(line)?;
        if key != event_refs::REFS_KEY {
            return None;
        }
        let message = |k: usize, at: u64| {
            let &(i, logged_at) = ended.get(k)?;
            if logged_at != at {
                return None;
            }
            match parse_line(&self.lines[i])? {
                LogLine::Event { json, .. } => event_refs::message_of(json),
                LogLine::Start(_) => None,
            }
        };
        let event = event_refs::expand(refs, message)?;
        Some((us, format!("{{\"us\":{us},\"agent\":{event}}}")))
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

    /// A log written with references reads back as the whole lines; with a message
    /// line lost, the lines that name it are unreadable, never given another message.
    #[test]
    fn references_read_back_whole_and_a_lost_line_is_never_replaced() {
        let user = r#"{"role":"user","content":"hi","timestamp":1}"#;
        let start = r#"{"us":0,"start":{"wall_ms":5,"messages":0}}"#;
        let message_start =
            format!(r#"{{"us":10,"agent":{{"type":"message_start","message":{user}}}}}"#);
        let end_refs = r#"{"us":11,"agent_refs":{"type":"message_end","message":[0,10]}}"#;
        let agent_end_refs = r#"{"us":12,"agent_refs":{"type":"agent_end","messages":[[1,11]]}}"#;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.events.jsonl");
        let read = |lines: &[&str]| {
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            LogText::read(&path).unwrap().unwrap()
        };
        let log = read(&[start, &message_start, end_refs, agent_end_refs]);
        assert_eq!(log.damaged, 0);
        assert_eq!(
            log.lines[2],
            format!(r#"{{"us":11,"agent":{{"type":"message_end","message":{user}}}}}"#)
        );
        assert_eq!(
            log.lines[3],
            format!(r#"{{"us":12,"agent":{{"type":"agent_end","messages":[{user}]}}}}"#)
        );
        // The start is lost: the end that names it, and the run's end that names the
        // end, cannot be read.
        let log = read(&[start, end_refs, agent_end_refs]);
        assert_eq!((log.lines.len(), log.damaged), (1, 2));
        // Another message line in its place, at another time, is not taken for it.
        let other = message_start.replace("\"us\":10", "\"us\":9");
        let log = read(&[start, &other, end_refs, agent_end_refs]);
        assert_eq!((log.lines.len(), log.damaged), (2, 2));
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
