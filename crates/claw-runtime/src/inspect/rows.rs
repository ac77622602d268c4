//! The list of a session's requests, and which one `--turn N --request K` (or RPC
//! `get_request {index}`) means.

use super::log::RequestLog;
use serde::Serialize;

/// One request as the list shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestRow {
    /// Its number, from 1 in send order.
    pub index: usize,
    /// The main agent's turn it was sent in (`inspect::main_turn`).
    pub turn: u32,
    /// `main` or a subagent's id.
    pub agent: String,
    /// The model asked for.
    pub model: String,
    /// Input tokens at the normal rate.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the cache.
    pub cached: u64,
    /// Time to the first token.
    pub ttft_ms: Option<u64>,
    /// Time to the end.
    pub duration_ms: Option<u64>,
    /// The HTTP status, or what became of the call (`in flight`, `aborted`, ...).
    pub status: String,
    /// The failure, when it failed (`null` otherwise, as the RPC docs say).
    pub error: Option<String>,
    /// The body's size in bytes.
    pub bytes: usize,
}

/// Every request of `log`, in send order.
pub fn rows(log: &RequestLog) -> Vec<RequestRow> {
    log.requests
        .iter()
        .map(|request| {
            let response = request.response.as_ref();
            let status = match response {
                None => "in flight".to_owned(),
                Some(r) => match (r.status, r.stop_reason.as_str()) {
                    (_, "aborted") => "aborted".to_owned(),
                    (Some(code), "error") => format!("{code} error"),
                    (None, "error") => "error".to_owned(),
                    (Some(code), _) => code.to_string(),
                    (None, reason) => reason.to_owned(),
                },
            };
            RequestRow {
                index: request.sent.index,
                turn: request.sent.turn,
                agent: request.sent.agent.clone(),
                model: request.sent.model.clone(),
                input: response.map_or(0, |r| r.input + r.cache_write),
                output: response.map_or(0, |r| r.output),
                cached: response.map_or(0, |r| r.cache_read),
                ttft_ms: response.and_then(|r| r.ttft_ms),
                duration_ms: response.map(|r| r.duration_ms),
                status,
                error: response.and_then(|r| r.error.clone()),
                bytes: request.sent.bytes,
            }
        })
        .collect()
}

/// Why `--turn N --request K` (or `get_request {index}`) names no request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// The log is empty.
    #[error("the session has no recorded requests")]
    NoRequests,
    /// No request was sent in that turn.
    #[error("turn {turn} sent no request (the session's requests are in turns up to {last})")]
    TurnSentNone {
        /// Asked for.
        turn: u32,
        /// The last turn that sent one.
        last: u32,
    },
    /// K was 0.
    #[error("requests count from 1")]
    FromOne,
    /// Fewer requests than K (in the turn, when one was given).
    #[error("there is no request {k}{} (there are {count})", in_turn(*.turn))]
    NoSuchRequest {
        /// Asked for.
        k: usize,
        /// The turn it was counted in.
        turn: Option<u32>,
        /// How many there are.
        count: usize,
    },
}

fn in_turn(turn: Option<u32>) -> String {
    turn.map_or(String::new(), |t| format!(" in turn {t}"))
}

/// The position of the request meant: `request` K counts from 1 in send order (within
/// turn `turn` when given); `turn` alone means that turn's first request; neither, the
/// latest.
pub fn select(
    log: &RequestLog,
    turn: Option<u32>,
    request: Option<usize>,
) -> Result<usize, SelectError> {
    if log.is_empty() {
        return Err(SelectError::NoRequests);
    }
    let candidates: Vec<usize> = match turn {
        Some(turn) => log.in_turn(turn),
        None => (0..log.len()).collect(),
    };
    if candidates.is_empty() {
        return Err(SelectError::TurnSentNone {
            turn: turn.unwrap_or(0),
            last: log.requests.iter().map(|r| r.sent.turn).max().unwrap_or(0),
        });
    }
    match request {
        Some(0) => Err(SelectError::FromOne),
        Some(k) => candidates
            .get(k - 1)
            .copied()
            .ok_or(SelectError::NoSuchRequest {
                k,
                turn,
                count: candidates.len(),
            }),
        None if turn.is_some() => Ok(candidates[0]),
        None => Ok(candidates[candidates.len() - 1]),
    }
}
