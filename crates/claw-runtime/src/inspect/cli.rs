//! `claw-tui inspect [ID] [--turn N] [--request K] [--raw] [--list]`: a recorded request
//! as a breakdown table, its raw body, or the list of the session's requests.

use super::log::{RequestLog, requests_path};
use super::{breakdown, rows, select};
use crate::config::Settings;
use crate::exit::EXIT_OK;
use crate::session;
use crate::text::clip;
use std::io::Write;
use std::path::PathBuf;

/// What the command line asked for.
#[derive(Clone, Debug, Default)]
pub struct Query {
    /// Session id, prefix or path; `None`: the workspace's latest.
    pub session: Option<String>,
    /// `--turn N`.
    pub turn: Option<u32>,
    /// `--request K`.
    pub request: Option<usize>,
    /// `--raw`.
    pub raw: bool,
    /// `--list`.
    pub list: bool,
}

/// Runs the command; the exit code, or the error for `main` to report (a usage error:
/// no such session, turn or request, or a log that cannot be read).
pub fn run(settings: &Settings, query: &Query) -> Result<i32, InspectError> {
    let (text, gaps) = answer(settings, query)?;
    // What the log cannot give back is said first, apart from the data.
    for gap in gaps {
        eprintln!("claw-tui: warning: {}", crate::visible::for_stderr(&gap));
    }
    let mut out = std::io::stdout().lock();
    // A body is data: byte for byte to a pipe or file, made visible on a terminal.
    let text = crate::visible::for_stdout(&text);
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    Ok(EXIT_OK)
}

/// Why `claw-tui inspect` prints no request.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// The session could not be found or read.
    #[error(transparent)]
    Session(#[from] session::SessionError),
    /// The workspace has no session.
    #[error("no session in this workspace ({workspace}) yet")]
    NoSession {
        /// The workspace.
        workspace: String,
    },
    /// The request log could not be read, or a body rebuilt.
    #[error(transparent)]
    Log(#[from] super::LogError),
    /// The session recorded no request.
    #[error(
        "session {session} has no recorded requests ({log} is missing or empty; sessions \
         recorded before requests were, with `[session] record_requests = false`, or on \
         the offline demo model have none)"
    )]
    NoRequests {
        /// The session file.
        session: String,
        /// Its request log.
        log: String,
    },
    /// `--turn` / `--request` name no request.
    #[error(transparent)]
    Select(#[from] super::rows::SelectError),
}

fn session_file(settings: &Settings, key: Option<&str>) -> Result<PathBuf, InspectError> {
    session::find_or_latest(&settings.data_dir, &settings.workspace, key)?.ok_or_else(|| {
        InspectError::NoSession {
            workspace: settings.workspace.display().to_string(),
        }
    })
}

/// What the command prints.
pub fn output(settings: &Settings, query: &Query) -> Result<String, InspectError> {
    answer(settings, query).map(|(text, _)| text)
}

/// What the command prints, and what the log could not give back ([`gaps`]).
fn answer(settings: &Settings, query: &Query) -> Result<(String, Vec<String>), InspectError> {
    let path = session_file(settings, query.session.as_deref())?;
    let log_path = requests_path(&path);
    let log = RequestLog::load(&log_path)?;
    if log.is_empty() {
        return Err(InspectError::NoRequests {
            session: path.display().to_string(),
            log: log_path.display().to_string(),
        });
    }
    // The session is read only to count its turns; one that cannot be read has its
    // own errors elsewhere.
    let turns = session::load(&path).ok().map(|data| {
        data.messages
            .iter()
            .filter(|m| matches!(m, crate::agent::Message::Assistant(_)))
            .count()
    });
    let gaps = gaps(&log, turns);
    if query.list {
        return Ok((list_table(&log, query.turn), gaps));
    }
    let n = select(&log, query.turn, query.request)?;
    if query.raw {
        return Ok((log.body(n)?, gaps));
    }
    Ok((breakdown_table(&log, n), gaps))
}

/// What `log` cannot give back, in words: its damaged lines, the requests whose body
/// cannot be rebuilt, and the turns of the session (`turns`, when known) it holds no
/// request of (their lines were never written).
pub fn gaps(log: &RequestLog, turns: Option<usize>) -> Vec<String> {
    let mut gaps = Vec::new();
    if log.damaged > 0 {
        gaps.push(format!(
            "{} damaged line(s) of the request log were skipped",
            log.damaged
        ));
    }
    for request in &log.requests {
        if let Err(missing) = &request.body {
            gaps.push(format!(
                "request {} cannot be rebuilt: the log is missing part of its body ({missing})",
                request.sent.index
            ));
        }
    }
    if let Some(turns) = turns {
        let missing: Vec<String> = (1..=turns)
            .filter(|&turn| {
                !log.requests
                    .iter()
                    .any(|r| r.sent.agent == "main" && r.sent.turn as usize == turn)
            })
            .map(|turn| turn.to_string())
            .collect();
        if !missing.is_empty() {
            let which = match missing.as_slice() {
                [one] => format!("turn {one}"),
                many => format!("turns {}", many.join(", ")),
            };
            gaps.push(format!(
                "the session has {turns} turns; the request log holds no request of {which}"
            ));
        }
    }
    gaps
}

/// The list of requests as a table.
pub fn list_table(log: &RequestLog, turn: Option<u32>) -> String {
    let mut out = format!(
        "{:>4} {:>4}  {:<12} {:<24} {:>8} {:>8} {:>8} {:>7} {:>8}  status\n",
        "#", "turn", "agent", "model", "input", "output", "cached", "ttft", "time"
    );
    for row in rows(log)
        .into_iter()
        .filter(|r| turn.is_none_or(|t| r.turn == t))
    {
        out.push_str(&format!(
            "{:>4} {:>4}  {:<12} {:<24} {:>8} {:>8} {:>8} {:>7} {:>8}  {}\n",
            row.index,
            row.turn,
            clip(&row.agent, 12),
            clip(&row.model, 24),
            row.input,
            row.output,
            row.cached,
            millis(row.ttft_ms),
            millis(row.duration_ms),
            row.status
        ));
    }
    out
}

/// One request's header and breakdown as a table.
pub fn breakdown_table(log: &RequestLog, n: usize) -> String {
    let Ok(request) = log.get(n) else {
        return String::new();
    };
    let sent = &request.sent;
    let mut out = format!(
        "request {} · turn {} · {} · {} {} · {}\n",
        sent.index, sent.turn, sent.agent, sent.provider, sent.model, sent.url
    );
    if let Some(r) = &request.response {
        out.push_str(&format!(
            "status {} · input {} (cache read {}, write {}) · output {} · ttft {} · {} · \
             retries {}\n",
            r.status
                .map_or_else(|| r.stop_reason.clone(), |s| s.to_string()),
            r.input,
            r.cache_read,
            r.cache_write,
            r.output,
            millis(r.ttft_ms),
            millis(Some(r.duration_ms)),
            r.retries
        ));
    }
    let Some(breakdown) = breakdown(log, n) else {
        out.push_str("(the body cannot be rebuilt from the log)\n");
        return out;
    };
    let basis = if breakdown.estimated {
        "estimated, no usage reported"
    } else {
        "as reported"
    };
    out.push_str(&format!(
        "\n{:<40} {:>9} {:>7} {:>10}\n",
        format!("input: {} tokens ({basis})", breakdown.tokens),
        "tokens",
        "share",
        "bytes"
    ));
    for part in &breakdown.parts {
        out.push_str(&format!(
            "{:<40} {:>9} {:>6.1}% {:>10}\n",
            clip(&part.label, 40),
            part.tokens,
            breakdown.share(part) * 100.0,
            part.bytes
        ));
    }
    out
}

/// Milliseconds as `850ms` or `12.3s`; `-` when unknown.
pub fn millis(ms: Option<u64>) -> String {
    match ms {
        None => "-".into(),
        Some(ms) if ms < 1_000 => format!("{ms}ms"),
        Some(ms) => format!("{:.1}s", ms as f64 / 1000.0),
    }
}
