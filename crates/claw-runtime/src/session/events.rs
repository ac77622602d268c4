//! The session's event log (`<session>.events.jsonl`): every agent and runtime event
//! with the time it arrived, for `claw-tui replay`.
//!
//! Each process that records the session starts a segment with a `start` line (the wall
//! clock, and how many messages the session already had); then one line per event:
//! `{"us":T,"agent":EVENT}` or `{"us":T,"runtime":EVENT}`, `T` in microseconds since
//! the segment began (a monotonic clock), `EVENT` exactly the line `--mode json` prints
//! for it ([`event_json`]); for the cron jobs (the client's dashboard), the list as it is
//! when the segment begins, `{"us":T,"cron_jobs":[...]}`, then only what changed,
//! `{"us":T,"cron_changes":{"changed":[...],"removed":[...]}}` ([`CronChanges`]), so a
//! fire of one job among a thousand logs that job; a `turn_end` or `agent_end` refers to
//! the `message_end` lines of its messages (`{"us":T,"agent_refs":...}`, see
//! `event_refs.rs`), so a message is written once. The lines are serialised and written by the session's writer
//! thread, buffered, and flushed at each turn boundary (the session's sync) and on
//! close: a crash may lose the events of the turn in progress, never the session. A
//! write that fails waits in memory for the next flush with room (`side_log.rs`).

use super::event_refs::{self, EndedMessages, REFS_KEY, message_of};
use super::side_log::SideLog;
use super::sink::SideLogReport;
use crate::agent::AgentEvent;
use crate::runtime::cron::CronJobInfo;
use crate::runtime::{RuntimeEvent, RuntimeEventSender};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The event log beside the session file at `session`.
pub fn events_path(session: &Path) -> PathBuf {
    session.with_extension("events.jsonl")
}

/// The JSON text of one event, as `--mode json` prints it (without the newline).
pub fn event_json(value: &impl Serialize) -> Option<String> {
    serde_json::to_string(value).ok()
}

/// What a recorder records besides the session itself.
#[derive(Clone, Debug, Default)]
pub struct EventRecording {
    /// Whether the event log is written at all (`[session] record_events`).
    pub enabled: bool,
    /// The runtime's event sender, whose events (subagents, cron, MCP, hooks) are
    /// mirrored into the log while this recording runs.
    pub runtime: Option<RuntimeEventSender>,
    /// The cron jobs as the dashboard lists them: each new list is logged.
    pub cron_jobs: Option<tokio::sync::watch::Receiver<Vec<CronJobInfo>>>,
}

impl EventRecording {
    /// Agent events only (no background runtime to listen to).
    pub fn agent_only(enabled: bool) -> Self {
        Self {
            enabled,
            runtime: None,
            cron_jobs: None,
        }
    }
}

/// What changed in the cron jobs' list since the line before: the jobs added (at the
/// end of the list) or changed (in place), whole, and the ids of those removed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CronChanges {
    /// Jobs added or changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<CronJobInfo>,
    /// Ids of the jobs removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
}

impl CronChanges {
    /// The changes that turn `before` into `after`; `before` becomes `after` (by id).
    pub fn between(
        before: &mut std::collections::HashMap<String, CronJobInfo>,
        after: &[CronJobInfo],
    ) -> Self {
        let changed: Vec<CronJobInfo> = after
            .iter()
            .filter(|job| before.get(&job.id) != Some(job))
            .cloned()
            .collect();
        let ids: std::collections::HashSet<&str> = after.iter().map(|j| j.id.as_str()).collect();
        let removed: Vec<String> = before
            .keys()
            .filter(|id| !ids.contains(id.as_str()))
            .cloned()
            .collect();
        for id in &removed {
            before.remove(id);
        }
        for job in &changed {
            before.insert(job.id.clone(), job.clone());
        }
        Self { changed, removed }
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.removed.is_empty()
    }

    /// Makes these changes to `jobs`.
    pub fn apply(&self, jobs: &mut Vec<CronJobInfo>) {
        jobs.retain(|job| !self.removed.contains(&job.id));
        for job in &self.changed {
            match jobs.iter_mut().find(|j| j.id == job.id) {
                Some(slot) => *slot = job.clone(),
                None => jobs.push(job.clone()),
            }
        }
    }
}

/// The event's text of an agent line `{"us":T,"agent":EVENT}\n`.
fn agent_event_text(line: &[u8]) -> Option<&str> {
    let line = std::str::from_utf8(line).ok()?;
    let (_, rest) = line.split_once(",\"agent\":")?;
    rest.strip_suffix("}\n")
}

/// The first line of a segment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentStart {
    /// When the segment began, ms since the epoch.
    pub wall_ms: u64,
    /// How many messages the session had when it began (a resumed session's history
    /// comes from the session file, not from events).
    pub messages: usize,
}

/// One thing for the writer thread to put in the log.
pub(super) enum LogEntry {
    /// A segment begins.
    Start(SegmentStart),
    /// An agent event at `us` microseconds into the segment.
    Agent(u64, Box<AgentEvent>),
    /// A runtime event at `us` microseconds into the segment.
    Runtime(u64, Box<RuntimeEvent>),
    /// The cron jobs' list at `us` microseconds into the segment (the client's
    /// dashboard shows it; the JSON modes never printed it).
    CronJobs(u64, Vec<CronJobInfo>),
    /// What changed in the cron jobs' list at `us` microseconds into the segment.
    CronChanges(u64, CronChanges),
}

impl LogEntry {
    /// Writes the line (with its newline) to `out`, serialising the event straight into
    /// it: no copy of a long message is made on the way.
    fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        let (us, key) = match self {
            LogEntry::Start(_) => (0, "start"),
            LogEntry::Agent(us, _) => (*us, "agent"),
            LogEntry::Runtime(us, _) => (*us, "runtime"),
            LogEntry::CronJobs(us, _) => (*us, "cron_jobs"),
            LogEntry::CronChanges(us, _) => (*us, "cron_changes"),
        };
        write!(out, "{{\"us\":{us},\"{key}\":")?;
        // The event's text is what `event_json` gives the JSON mode (serde_json's
        // compact form either way), so replaying it in that mode copies it out unchanged.
        let written = match self {
            LogEntry::Start(start) => serde_json::to_writer(&mut *out, start),
            LogEntry::Agent(_, event) => serde_json::to_writer(&mut *out, event),
            LogEntry::Runtime(_, event) => serde_json::to_writer(&mut *out, event),
            LogEntry::CronJobs(_, jobs) => serde_json::to_writer(&mut *out, jobs),
            LogEntry::CronChanges(_, changes) => serde_json::to_writer(&mut *out, changes),
        };
        written.map_err(std::io::Error::other)?;
        out.write_all(b"}\n")
    }
}

/// The log as the writer thread keeps it: opened at its first line, buffered, written
/// with the session file's discipline (`side_log.rs`).
pub(super) struct EventLog {
    log: SideLog,
    /// The messages the run's `turn_end` and `agent_end` may refer to.
    ended: EndedMessages,
}

impl EventLog {
    pub(super) fn new(session: &Path, report: SideLogReport) -> Self {
        Self {
            log: SideLog::new(events_path(session), report),
            ended: EndedMessages::default(),
        }
    }

    /// Appends one entry.
    pub(super) fn write(&mut self, entry: &LogEntry) {
        // A whole line or none: an event that cannot be serialised is left out.
        let mut line = Vec::with_capacity(256);
        let refs = match entry {
            LogEntry::Agent(us, event) => self.ended.refs_json(event).map(|r| (*us, r)),
            _ => None,
        };
        let (written, referred) = match refs {
            Some((us, (json, digest))) => (
                writeln!(line, "{{\"us\":{us},\"{REFS_KEY}\":{json}}}"),
                digest,
            ),
            None => (entry.write_to(&mut line), None),
        };
        if let Err(e) = written {
            tracing::warn!("an event could not be logged: {e}");
            return;
        }
        match entry {
            LogEntry::Start(_) => self.ended.segment_started(),
            LogEntry::Agent(us, event) => match **event {
                AgentEvent::MessageStart { .. } | AgentEvent::MessageEnd { .. } => {
                    // The reader counts the same lines: every message line, whole or not.
                    let digest = referred.or_else(|| {
                        let message = agent_event_text(&line).and_then(message_of)?;
                        Some(event_refs::digest(message))
                    });
                    if let Some(digest) = digest {
                        self.ended.logged(*us, digest);
                    }
                }
                AgentEvent::AgentStart | AgentEvent::AgentEnd { .. } => self.ended.run_ended(),
                _ => {}
            },
            _ => {}
        }
        // Lines dropped after a long failure leave a gap the replay says it cannot
        // fill; the lines after it stand on their own (a reference into the gap makes
        // its line unreadable, see `event_refs`).
        self.log.push(&line);
    }

    /// Writes what waits (a turn boundary, or closing).
    pub(super) fn flush(&mut self) {
        self.log.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_wraps_the_json_mode_text_of_its_event() {
        let event = AgentEvent::TurnStart { turn: 3 };
        let mut line = Vec::new();
        LogEntry::Agent(1500, Box::new(event.clone()))
            .write_to(&mut line)
            .unwrap();
        let line = String::from_utf8(line).unwrap();
        let json = event_json(&event).unwrap();
        assert_eq!(line, format!("{{\"us\":1500,\"agent\":{json}}}\n"));
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["agent"]["type"], "turn_start");
    }

    #[test]
    fn the_log_sits_beside_the_session_file() {
        let path = Path::new("/d/20260101T000000Z_abc.jsonl");
        assert_eq!(
            events_path(path),
            Path::new("/d/20260101T000000Z_abc.events.jsonl")
        );
    }
}
