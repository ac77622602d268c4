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
    /// Reading the log or writing stdout failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Prints the events of the session at `session` to `out`, one JSON line each; returns
/// how many damaged lines were skipped.
pub fn print_events(session: &Path, out: &mut impl Write) -> Result<usize, JsonReplayError> {
    let log = LogText::read(&session::events_path(session))?
        .ok_or_else(|| JsonReplayError::NoLog(session.display().to_string()))?;
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
    Ok(log.damaged)
}
