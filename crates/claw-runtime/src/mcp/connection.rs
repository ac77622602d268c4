//! A connection to one MCP server as the rest of claw-tui sees it: the
//! [`McpConnection`] trait and the plain data crossing it (no rmcp type; `client.rs`
//! implements it on rmcp).

pub use super::call_result::CallResult;
use async_trait::async_trait;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A tool as the server lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteTool {
    /// The server's name for it.
    pub name: String,
    /// Its description (empty when the server gave none).
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// The server marks it as changing nothing (`annotations.readOnlyHint`): plan mode
    /// offers it.
    pub read_only: bool,
}

/// One progress notification for a running call.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Work done so far.
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// What the server says it is doing.
    pub message: Option<String>,
}

/// Receives a call's progress notifications.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Why a request produced no result.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// Our side cancelled it (the server was sent `notifications/cancelled`).
    #[error("cancelled")]
    Cancelled,
    /// It took longer than allowed (the server was sent `notifications/cancelled`).
    #[error("no answer within {} s", .0.as_secs())]
    TimedOut(Duration),
    /// The connection ended before the answer came.
    #[error("the connection to the server closed: {0}")]
    Closed(String),
    /// The server answered with a protocol error.
    #[error("{0}")]
    Server(String),
    /// The server answered, but its reply could not be decoded (not UTF-8, over the
    /// line limit, no JSON-RPC message): the call failed as soon as it came.
    #[error("its reply could not be read: {0}")]
    Unreadable(String),
}

/// Why a connection to a server could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The stdio server's program could not be started.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program as configured.
        program: String,
        /// Why the operating system refused.
        #[source]
        source: std::io::Error,
    },
    /// A configured HTTP header name is not a valid header name.
    #[error("header name \"{name}\" is invalid: {source}")]
    HeaderName {
        /// The name as configured.
        name: String,
        /// What is wrong with it.
        #[source]
        source: reqwest::header::InvalidHeaderName,
    },
    /// A configured HTTP header value cannot be sent.
    #[error("the value of header \"{name}\" is invalid: {source}")]
    HeaderValue {
        /// The header's name.
        name: String,
        /// What is wrong with the value.
        #[source]
        source: reqwest::header::InvalidHeaderValue,
    },
    /// The MCP handshake failed. `reason` is the MCP library's account of it, kept as
    /// text so that no `rmcp` type crosses this module.
    #[error("{reason}{}", last_words_suffix(.last_words))]
    Handshake {
        /// What went wrong.
        reason: String,
        /// The stdio server's last line on stderr, when it said anything.
        last_words: Option<String>,
    },
}

/// ` (its last words: LINE)` when the server said something on stderr.
fn last_words_suffix(last_words: &Option<String>) -> String {
    match last_words {
        Some(line) => format!(" (its last words: {line})"),
        None => String::new(),
    }
}

/// What a connection reports without being asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerSignal {
    /// `notifications/tools/list_changed`.
    ToolsChanged,
}

/// How to reach a server, with every value already resolved (environment, tokens).
#[derive(Clone, Debug)]
pub enum Endpoint {
    /// A child process speaking over stdin and stdout.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its whole environment (nothing else is inherited).
        env: BTreeMap<String, String>,
        /// Its working directory.
        cwd: PathBuf,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint URL.
        url: String,
        /// Headers for every request.
        headers: BTreeMap<String, String>,
        /// A bearer token for the `Authorization` header.
        bearer_token: Option<String>,
    },
}

/// A live connection to one server.
#[async_trait]
pub trait McpConnection: Send + Sync {
    /// `name version` as the server introduced itself.
    fn server_info(&self) -> String;
    /// Every tool the server offers now.
    async fn list_tools(&self) -> Result<Vec<RemoteTool>, CallError>;
    /// Calls `name` with `args`; returns its result, read. `cancel` and the `timeout`
    /// send `notifications/cancelled` to the server.
    async fn call_tool(
        &self,
        name: &str,
        args: Value,
        progress: Option<ProgressFn>,
        cancel: &CancellationToken,
        timeout: Duration,
    ) -> Result<CallResult, CallError>;
    /// Waits until the connection has ended; returns why.
    async fn closed(&self) -> String;
    /// Ends the connection (and the server process, for stdio).
    async fn close(&self);
}
