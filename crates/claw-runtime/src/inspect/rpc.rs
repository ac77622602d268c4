//! RPC `get_requests` (the list) and `get_request {index}` (one request, its body
//! exactly as sent): read from the session's request log once what was reported is
//! written.

use super::log::RequestLog;
use super::{breakdown, rows};
use crate::llm::RequestTap;
use serde_json::{Value, json};

/// Why the requests cannot be given.
#[derive(Debug, thiserror::Error)]
pub enum RequestsError {
    /// Nothing is recorded.
    #[error(
        "no request log: the session is not recorded (--no-session) or `[session] \
         record_requests = false`"
    )]
    NotRecorded,
    /// The reading task failed.
    #[error("the request log could not be read: {0}")]
    Reader(#[from] tokio::task::JoinError),
    /// The log could not be read, or holds no such request.
    #[error(transparent)]
    Log(#[from] super::LogError),
    /// Index 0.
    #[error("requests count from 1")]
    FromOne,
}

/// The session's request log once every call reported is written.
pub async fn load(tap: &RequestTap) -> Result<RequestLog, RequestsError> {
    let path = tap.log_path().ok_or(RequestsError::NotRecorded)?;
    tap.sync().await;
    Ok(tokio::task::spawn_blocking(move || RequestLog::load(&path)).await??)
}

/// `{"requests": [row, ...]}`.
pub async fn list(tap: &RequestTap) -> Result<Value, RequestsError> {
    let log = load(tap).await?;
    Ok(json!({ "requests": rows(&log) }))
}

/// `{"request": row, "url", "headers", "raw": body text, "body": body JSON,
/// "breakdown": {...}}` for request `index` (from 1, send order, all agents).
pub async fn one(tap: &RequestTap, index: usize) -> Result<Value, RequestsError> {
    let log = load(tap).await?;
    if index == 0 {
        return Err(RequestsError::FromOne);
    }
    let n = index - 1;
    let raw = log.body(n)?;
    let request = log.get(n)?;
    let row = rows(&log).into_iter().nth(n);
    let body: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
    let breakdown = breakdown(&log, n).map(|b| {
        json!({
            "tokens": b.tokens,
            "estimated": b.estimated,
            "parts": b.parts.iter().map(|p| json!({
                "label": p.label, "tokens": p.tokens, "bytes": p.bytes,
            })).collect::<Vec<_>>(),
        })
    });
    Ok(json!({
        "request": row,
        "provider": request.sent.provider,
        "url": request.sent.url,
        "headers": request.headers,
        "response": request.response,
        "raw": raw,
        "body": body,
        "breakdown": breakdown,
    }))
}
