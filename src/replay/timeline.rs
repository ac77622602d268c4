//! What a replay plays: the session's recorded events (or, for a session recorded
//! before events were logged, its messages one at a time), each at the time it
//! happened, and where each turn begins.

use super::log::{LogLine, LogText, Source};
use crate::agent::{AgentEvent, Compaction, Message};
use crate::inspect::{RequestLog, requests_path};
use crate::runtime::RuntimeEvent;
use crate::session::{self, SessionData};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One step of a replay.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// An event of the main agent.
    Agent(AgentEvent),
    /// An event of the background runtime.
    Runtime(RuntimeEvent),
    /// The cron jobs' list as it was (the dashboard).
    CronJobs(Vec<crate::runtime::cron::CronJobInfo>),
    /// What changed in the cron jobs' list (the dashboard).
    CronChanges(crate::session::CronChanges),
    /// The session as it was after its first `n` messages (a replay from messages).
    History(usize),
}

/// A session ready to be replayed.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// The session's id.
    pub id: String,
    /// Its file.
    pub path: PathBuf,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// When each step happened, from the start of the recording.
    pub at: Vec<Duration>,
    /// The index of the first step of each turn the recording holds, in order.
    pub turns: Vec<usize>,
    /// The turns of the history the recording starts from (its answers): the
    /// recording's first turn is the session's turn `before + 1`, as the client and the
    /// request log number it.
    pub before: usize,
    /// The session's messages: those it had before its events were recorded are the
    /// history the replay starts from; a replay from messages steps through all.
    pub messages: Vec<Message>,
    /// How many of `messages` the replay starts with.
    pub initial: usize,
    /// The session's compactions (the chat marks those within the initial history).
    pub compactions: Vec<Compaction>,
    /// The wall-clock time the recording began.
    pub wall_start: SystemTime,
    /// The provider and model the session was created with.
    pub provider: String,
    /// See `provider`.
    pub model: String,
    /// Whether it replays messages (no event log was recorded).
    pub from_messages: bool,
    /// What the user should know (damaged lines, a replay from messages).
    pub notes: Vec<String>,
    /// The session's request log (empty when none was recorded), for the inspector.
    pub requests: Arc<RequestLog>,
}

/// Why a session cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    /// The session file could not be read.
    #[error(transparent)]
    Session(#[from] session::SessionError),
    /// The event log could not be read.
    #[error("cannot read the event log {path}: {source}")]
    Log {
        /// The log.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The request log could not be read.
    #[error(transparent)]
    Requests(#[from] crate::inspect::LogError),
}

impl Timeline {
    /// Reads the session at `path` and its event log (or its messages, without one).
    pub fn load(path: &Path) -> Result<Self, TimelineError> {
        let data = session::load(path)?;
        let log_path = session::events_path(path);
        let log = LogText::read(&log_path).map_err(|source| TimelineError::Log {
            path: log_path.display().to_string(),
            source,
        })?;
        let mut timeline = match log {
            Some(log) if log.parsed().any(|l| matches!(l, LogLine::Event { .. })) => {
                let mut timeline = from_log(&data, &log);
                timeline.notes.extend(missing_turns(&log, &data));
                timeline
            }
            // A log that is there but gives back nothing is said, not taken for a
            // session recorded before events were.
            Some(log) => from_messages(
                &data,
                format!(
                    "{}: this replay steps through the session's messages, one at a time, \
                     instead of its events.",
                    empty_log(&log_path, &log)
                ),
            ),
            None => from_messages(
                &data,
                "This session was recorded before claw-tui logged events: it replays from its \
                 messages, one message at a time."
                    .to_owned(),
            ),
        };
        timeline.notes.splice(0..0, data.warnings.iter().cloned());
        let requests = RequestLog::load(&requests_path(path))?;
        if requests.damaged > 0 {
            timeline.notes.push(format!(
                "{} damaged line(s) of the request log were skipped",
                requests.damaged
            ));
        }
        timeline.requests = Arc::new(requests);
        Ok(timeline)
    }

    /// The provider and model to show (the session's, as recorded at its start).
    pub fn provider_and_model(&self) -> (String, String) {
        (self.provider.clone(), self.model.clone())
    }

    /// How long the recording lasted.
    pub fn duration(&self) -> Duration {
        self.at.last().copied().unwrap_or_default()
    }

    /// The session's turn (from 1) step `index` belongs to; `before` ahead of the
    /// recording's first.
    pub fn turn_of(&self, index: usize) -> usize {
        self.before + self.turns.partition_point(|&start| start <= index)
    }

    /// The session's turns: those of the history the recording starts from, then its own.
    pub fn turn_count(&self) -> usize {
        self.before + self.turns.len()
    }

    /// The wall-clock time of step `index` (ms since the epoch), as the request log
    /// dates its requests.
    pub fn wall_ms(&self, index: usize) -> u64 {
        let at = self.at.get(index).copied().unwrap_or_default();
        let since = self
            .wall_start
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            + at;
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    }
}

fn base(data: &SessionData) -> Timeline {
    Timeline {
        id: data.id().to_owned(),
        path: data.path.clone(),
        steps: Vec::new(),
        at: Vec::new(),
        turns: Vec::new(),
        before: 0,
        messages: Vec::new(),
        initial: 0,
        compactions: data.compactions.clone(),
        wall_start: UNIX_EPOCH,
        provider: data
            .header
            .as_ref()
            .map(|h| h.provider.clone())
            .unwrap_or_default(),
        model: data
            .header
            .as_ref()
            .map(|h| h.model.clone())
            .unwrap_or_default(),
        from_messages: false,
        notes: Vec::new(),
        requests: Arc::default(),
    }
}

/// The steps of an event log. Each segment (a process that recorded the session)
/// follows the previous one after the wall-clock time that separated them.
fn from_log(data: &SessionData, log: &LogText) -> Timeline {
    let mut timeline = base(data);
    let mut offset = Duration::ZERO;
    let mut segment_wall: Option<u64> = None;
    let mut first = true;
    for line in log.parsed() {
        match line {
            LogLine::Start(start) => {
                match segment_wall {
                    None => {
                        timeline.wall_start = UNIX_EPOCH + Duration::from_millis(start.wall_ms);
                        if first {
                            timeline.initial = start.messages.min(data.messages.len());
                        }
                    }
                    Some(wall) => {
                        let apart = Duration::from_millis(start.wall_ms.saturating_sub(wall));
                        offset = (offset + apart).max(timeline.duration());
                    }
                }
                segment_wall = Some(start.wall_ms);
            }
            LogLine::Event { us, source, json } => {
                let step = match source {
                    Source::Agent => serde_json::from_str(json).map(Step::Agent),
                    Source::Runtime => serde_json::from_str(json).map(Step::Runtime),
                    Source::CronJobs => serde_json::from_str(json).map(Step::CronJobs),
                    Source::CronChanges => serde_json::from_str(json).map(Step::CronChanges),
                };
                let Ok(step) = step else { continue };
                if matches!(step, Step::Agent(AgentEvent::TurnStart { .. })) {
                    timeline.turns.push(timeline.steps.len());
                }
                let at = (offset + Duration::from_micros(us)).max(timeline.duration());
                timeline.steps.push(step);
                timeline.at.push(at);
            }
        }
        first = false;
    }
    if log.damaged > 0 {
        timeline.notes.push(format!(
            "{} damaged line(s) of the event log were skipped",
            log.damaged
        ));
    }
    timeline.messages = data.messages[..timeline.initial].to_vec();
    // The client counts a loaded history's turns by its answers.
    timeline.before = timeline
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant(_)))
        .count();
    timeline
}

/// What is said of an event log that holds no event: empty, or nothing readable.
pub fn empty_log(path: &Path, log: &LogText) -> String {
    let what = match log.damaged {
        0 => "is empty".to_owned(),
        n => format!("holds no readable event ({n} damaged line(s))"),
    };
    format!("The event log {} {what}", path.display())
}

/// What the event log cannot give back of the session `data`: a note when it holds
/// fewer turns than the session has answers (their events were never written).
pub fn missing_turns(log: &LogText, data: &SessionData) -> Option<String> {
    let initial = log
        .parsed()
        .find_map(|line| match line {
            LogLine::Start(start) => Some(start.messages.min(data.messages.len())),
            LogLine::Event { .. } => None,
        })
        .unwrap_or(0);
    let answers = |messages: &[Message]| {
        messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant(_)))
            .count()
    };
    let before = answers(&data.messages[..initial]);
    let recorded = log
        .parsed()
        .filter(|line| {
            matches!(line, LogLine::Event { source: Source::Agent, json, .. }
                if json.starts_with(r#"{"type":"turn_start""#))
        })
        .count();
    let total = answers(&data.messages);
    let held = before + recorded;
    (held < total).then(|| {
        let lost = total - held;
        format!(
            "The event log holds {held} of the session's {total} turns: {lost} turn{} could \
             not be rebuilt from it (their events were never written); the session file has \
             them (`claw-tui export` shows them)",
            if lost == 1 { "" } else { "s" }
        )
    })
}

/// A session replayed from its messages (recorded before events were logged, or with
/// an event log that gives back nothing; `note` says which): one step per message, at
/// the time it was recorded; each assistant answer begins a turn.
fn from_messages(data: &SessionData, note: String) -> Timeline {
    let mut timeline = base(data);
    timeline.from_messages = true;
    timeline.messages = data.messages.clone();
    let first = data.messages.first().map_or(0, timestamp);
    timeline.wall_start = UNIX_EPOCH + Duration::from_millis(first);
    for (index, message) in data.messages.iter().enumerate() {
        if matches!(message, Message::Assistant(_)) {
            timeline.turns.push(index);
        }
        let at = Duration::from_millis(timestamp(message).saturating_sub(first));
        timeline.at.push(at.max(timeline.duration()));
        timeline.steps.push(Step::History(index + 1));
    }
    timeline.notes.push(note);
    timeline
}

fn timestamp(message: &Message) -> u64 {
    match message {
        Message::User(m) => m.timestamp,
        Message::Assistant(m) => m.timestamp,
        Message::ToolResult(m) => m.timestamp,
        Message::Notification(m) => m.timestamp,
        Message::Notice(m) => m.timestamp,
    }
}
