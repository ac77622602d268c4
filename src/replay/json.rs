//! `claw-tui replay ID --mode json`: the recorded events as the JSON lines `--mode json`
//! printed while the session ran (each line is the recorded text, unchanged).

use super::log::{LogLine, LogText, Source};
use crate::session;
use std::io::Write;
use std::path::Path;

/// Why the events cannot be printed.
#[derive(Debug, thiserror::Error)]
pub enum JsonReplayError {
    /// No event log beside the session.
    #[error(
        "session {0} has no event log (it was recorded before claw-tui logged events, or \
         with [session] record_events = false); `claw-tui export` prints its messages"
    )]
    NoLog(String),
    /// The log is there but gives back no event.
    #[error(
        "{0}; `claw-tui replay` without --mode json steps through its messages, `claw-tui \
         export` prints them"
    )]
    Empty(String),
    /// Reading the log or writing stdout failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Prints the events of the session at `session` to `out`, one JSON line each; returns
/// what the user should know of what the log could not give back (damaged lines, turns
/// the session has and the log lacks).
pub fn print_events(session: &Path, out: &mut impl Write) -> Result<Vec<String>, JsonReplayError> {
    let path = session::events_path(session);
    let log = LogText::read(&path)?
        .ok_or_else(|| JsonReplayError::NoLog(session.display().to_string()))?;
    if !log.parsed().any(|l| matches!(l, LogLine::Event { .. })) {
        return Err(JsonReplayError::Empty(super::timeline::empty_log(
            &path, &log,
        )));
    }
    for line in log.parsed() {
        // The cron jobs' lists and changes were never JSON-mode lines: the client's own.
        if let LogLine::Event { json, source, .. } = line
            && !matches!(source, Source::CronJobs | Source::CronChanges)
        {
            out.write_all(json.as_bytes())?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    let mut notes = Vec::new();
    if log.damaged > 0 {
        notes.push(format!(
            "{} damaged line(s) of the event log skipped",
            log.damaged
        ));
    }
    // The session is read only to say what the log lacks; a session that cannot be
    // read has its own errors elsewhere.
    if let Ok(data) = session::load(session) {
        notes.extend(super::timeline::missing_turns(&log, &data));
    }
    Ok(notes)
}
