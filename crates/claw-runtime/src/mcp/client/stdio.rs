//! The stdio transport: a server process's stdin and stdout as JSON-RPC lines. Unlike
//! rmcp's own, a reply it cannot decode (bytes that are not UTF-8, a line over
//! [`MAX_LINE_BYTES`], JSON that is no message) is not dropped with a log line, leaving
//! its call to wait out its timeout: the request it answers (its top-level `id`) fails at
//! once with the reason.

use super::super::lines::{
    Line, LineReader, MAX_LINE_BYTES, TopLevel, why_too_long, why_unreadable,
};
use rmcp::model::{ErrorCode, ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::Mutex;

/// What marks an error reply as made here for an unreadable one (its `data`).
const UNREADABLE: &str = "claw-tui: the reply could not be read";

/// How long a server gets to exit once its stdin is closed, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// A server process spoken to over its stdin and stdout.
pub(super) struct StdioTransport {
    child: Option<Child>,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    stdout: LineReader<BufReader<ChildStdout>>,
}

impl StdioTransport {
    /// The transport over `child`, whose stdin and stdout were piped (and are taken).
    pub(super) fn new(mut child: Child) -> std::io::Result<Self> {
        let missing = |what| std::io::Error::other(format!("the server's {what} is not piped"));
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        Ok(Self {
            child: Some(child),
            stdin: Arc::new(Mutex::new(Some(stdin))),
            stdout: LineReader::new(BufReader::with_capacity(64 * 1024, stdout), MAX_LINE_BYTES),
        })
    }

    /// The message a line gives: itself, an error for the request it answers when it
    /// cannot be read, or nothing (a line that answers no request is logged and skipped).
    fn message(&self, line: Line) -> Option<RxJsonRpcMessage<RoleClient>> {
        let (keys, reason) = match line {
            Line::Whole(bytes) => {
                let bytes = without_bom(&bytes).trim_ascii();
                if bytes.is_empty() {
                    return None;
                }
                match serde_json::from_slice(bytes) {
                    Ok(message) => return Some(message),
                    Err(e) => {
                        let reason = why_unreadable(bytes);
                        tracing::debug!("unreadable line from an MCP server: {reason}: {e}");
                        (TopLevel::of(bytes), reason)
                    }
                }
            }
            Line::TooLong { bytes, keys } => (keys, why_too_long(bytes)),
        };
        let id = keys
            .id()
            .and_then(|id| serde_json::from_slice::<RequestId>(id).ok());
        match id {
            Some(id) if !keys.has_method() => Some(JsonRpcMessage::error(
                ErrorData::new(
                    ErrorCode::PARSE_ERROR,
                    reason,
                    Some(serde_json::json!(UNREADABLE)),
                ),
                Some(id),
            )),
            _ => {
                // Output that answers nothing of ours (a server printing to stdout, or
                // its own request): nobody waits for it.
                tracing::warn!("an MCP server sent a line that is no message: {reason}");
                None
            }
        }
    }
}

/// Whether `error` was made by this transport for a reply it could not read.
pub(super) fn is_unreadable(error: &ErrorData) -> bool {
    error.data.as_ref().and_then(|d| d.as_str()) == Some(UNREADABLE)
}

fn without_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let stdin = self.stdin.clone();
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            let mut stdin = stdin.lock().await;
            let Some(stdin) = stdin.as_mut() else {
                return Err(std::io::ErrorKind::NotConnected.into());
            };
            stdin.write_all(&line).await?;
            stdin.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.stdout.next().await {
                Ok(Some(line)) => {
                    if let Some(message) = self.message(line) {
                        return Some(message);
                    }
                }
                Ok(None) => return None,
                Err(e) => {
                    tracing::warn!("cannot read an MCP server's output: {e}");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // End of input first: a server that exits on it exits cleanly.
        drop(self.stdin.lock().await.take());
        if let Some(mut child) = self.child.take()
            && tokio::time::timeout(EXIT_GRACE, child.wait())
                .await
                .is_err()
        {
            child.start_kill()?;
            child.wait().await?;
        }
        Ok(())
    }
}
