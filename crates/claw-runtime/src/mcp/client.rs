//! The one file that speaks `rmcp` (with its stdio transport, `client/stdio.rs`): a
//! connection to one MCP server behind our own small [`McpConnection`] trait, so that a
//! breaking rmcp release changes these files only.
//!
//! Everything crossing the trait ([`super::connection`]) is plain data: tool definitions
//! as the protocol's JSON (`serde_json::Value`), call results read into our own
//! [`CallResult`] (rmcp's result, or the JSON it could not type, read the same way),
//! progress as numbers, failures as [`CallError`]. The rest of `src/mcp` never names an
//! rmcp type.

pub use super::connection::{
    CallError, CallResult, ConnectError, Endpoint, McpConnection, Progress, ProgressFn, RemoteTool,
    ServerSignal,
};
use super::process_group::{self, GroupGuard};
use super::progress::Routes;
use async_trait::async_trait;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientRequest, Implementation,
    InitializeRequestParams, JsonRpcMessage, ProtocolVersion, ServerNotification, ServerResult,
};
use rmcp::service::{
    NotificationContext, PeerRequestOptions, RoleClient, RunningService, ServiceError,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use rmcp::{ClientHandler, Peer, ServiceExt};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Once};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

mod plain;
mod stderr_tail;
mod stdio;

use stderr_tail::StderrTail;

/// The protocol version we ask for: every current server speaks it, and its list-change
/// notifications need no subscription.
const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_06_18;

/// Times a broken HTTP event stream is resumed before the connection counts as lost.
const RESUME_ATTEMPTS: usize = 3;

/// Routes the server's list changes to the connection's owner; progress takes the
/// [`InOrder`] path instead.
#[derive(Clone)]
struct Handler {
    progress: Arc<Mutex<Routes>>,
    signals: mpsc::UnboundedSender<ServerSignal>,
}

impl Handler {
    fn routes(&self) -> MutexGuard<'_, Routes> {
        // Each change is one insert, remove or push; a panic elsewhere leaves it whole.
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // The owner being gone means the connection is being dropped: nothing to tell.
        let _ = self.signals.send(ServerSignal::ToolsChanged);
    }

    fn get_info(&self) -> InitializeRequestParams {
        InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("claw-tui", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(PROTOCOL_VERSION)
    }
}

struct RmcpConnection {
    peer: Peer<RoleClient>,
    handler: Handler,
    info: String,
    stop: CancellationToken,
    /// `Some(reason)` once the connection has ended.
    ended: watch::Receiver<Option<String>>,
    /// The stdio server's process group, to stop its children too.
    process_group: Option<i32>,
}

/// A transport that hands progress notifications to their calls as they are read, in
/// the order the server sent them and before any later response. (rmcp runs each
/// notification's handler as a task of its own, which can lose the race with the
/// call's response and reorder steps.)
struct InOrder<T> {
    inner: T,
    routes: Arc<Mutex<Routes>>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        let routes = self.routes.clone();
        let next = self.inner.receive();
        async move {
            let message = next.await;
            if let Some(JsonRpcMessage::Notification(notification)) = &message
                && let ServerNotification::ProgressNotification(progress) =
                    &notification.notification
            {
                let params = &progress.params;
                let mut routes = routes.lock().unwrap_or_else(|p| p.into_inner());
                routes.deliver(
                    params.progress_token.0.to_string(),
                    Progress {
                        progress: params.progress,
                        total: params.total,
                        message: params.message.clone(),
                    },
                );
            }
            message
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// rmcp's HTTP client is built on rustls without a crypto provider of its own (so we
/// ship one, not two): ring, the provider reqwest 0.12 already brings.
fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means another part of the process installed one first: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Connects to `endpoint` and completes the MCP handshake. The stdio server's stderr
/// lines are logged under `server` (never shown on the screen); `signals` receives its
/// list changes.
pub async fn connect(
    server: &str,
    endpoint: &Endpoint,
    signals: mpsc::UnboundedSender<ServerSignal>,
) -> Result<Arc<dyn McpConnection>, ConnectError> {
    let handler = Handler {
        progress: Arc::default(),
        signals,
    };
    let (service, process_group, stderr_tail) = match endpoint {
        Endpoint::Stdio {
            program,
            args,
            env,
            cwd,
        } => {
            let mut command = tokio::process::Command::new(program);
            command
                .args(args)
                .env_clear()
                .envs(env)
                .current_dir(cwd)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .kill_on_drop(true)
                // Its own process group: closing stops what it started (npx → node).
                .process_group(0);
            let spawn_error = |source| ConnectError::Spawn {
                program: program.clone(),
                source,
            };
            let mut child = command.spawn().map_err(spawn_error)?;
            // Stops the group if the handshake fails, times out or is given up.
            let group = GroupGuard::new(child.id());
            let tail = StderrTail::default();
            let reader = child
                .stderr
                .take()
                .map(|stderr| tokio::spawn(log_stderr(server.to_owned(), stderr, tail.clone())));
            let process = InOrder {
                inner: stdio::StdioTransport::new(child).map_err(spawn_error)?,
                routes: handler.progress.clone(),
            };
            let service = match handler.clone().serve(process).await {
                Ok(service) => Ok(service),
                Err(e) => {
                    // A server that died at start has usually written why just before:
                    // let its stderr be read to the end (briefly) before quoting it.
                    if let Some(reader) = reader {
                        let _ = tokio::time::timeout(LAST_WORDS_WAIT, reader).await;
                    }
                    Err(ConnectError::Handshake {
                        reason: plain::handshake(&e),
                        last_words: tail.last_words(),
                    })
                }
            };
            let group = if service.is_ok() {
                group.disarm()
            } else {
                drop(group);
                None
            };
            (service, group, Some(tail))
        }
        Endpoint::Http {
            url,
            headers,
            bearer_token,
        } => {
            install_crypto_provider();
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name =
                    reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|source| {
                        ConnectError::HeaderName {
                            name: name.clone(),
                            source,
                        }
                    })?;
                let value = reqwest::header::HeaderValue::from_str(value).map_err(|source| {
                    ConnectError::HeaderValue {
                        name: name.to_string(),
                        source,
                    }
                })?;
                custom.insert(name, value);
            }
            let mut config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            // rmcp resumes a broken event stream forever by default; a server that is
            // gone must end the connection instead, so the calls waiting on it fail and
            // the server is restarted.
            let mut resume = ExponentialBackoff::default();
            resume.max_times = Some(RESUME_ATTEMPTS);
            resume.base_duration = Duration::from_millis(250);
            resume.max_delay = Some(Duration::from_secs(1));
            config.retry_config = Arc::new(resume);
            if let Some(token) = bearer_token {
                config = config.auth_header(token.clone());
            }
            let transport = InOrder {
                inner: StreamableHttpClientTransport::from_config(config),
                routes: handler.progress.clone(),
            };
            let service =
                handler
                    .clone()
                    .serve(transport)
                    .await
                    .map_err(|e| ConnectError::Handshake {
                        reason: plain::handshake(&e),
                        last_words: None,
                    });
            (service, None, None)
        }
    };
    let service: RunningService<RoleClient, Handler> = service?;
    let info = service
        .peer_info()
        .and_then(|info| serde_json::to_value(info.as_ref()).ok())
        .map(|info| {
            let name = info["serverInfo"]["name"]
                .as_str()
                .unwrap_or("?")
                .to_owned();
            let version = info["serverInfo"]["version"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            format!("{name} {version}").trim().to_owned()
        })
        .unwrap_or_default();
    let peer = service.peer().clone();
    let stop = CancellationToken::new();
    let (ended_tx, ended) = watch::channel(None);
    tokio::spawn(watch_service(service, stop.clone(), ended_tx, stderr_tail));
    Ok(Arc::new(RmcpConnection {
        peer,
        handler,
        info,
        stop,
        ended,
        process_group,
    }))
}

/// How long a failed handshake waits for the server's stderr to end, so that a crash's
/// last words are read before they are quoted.
const LAST_WORDS_WAIT: Duration = Duration::from_millis(500);

/// Logs each stderr line of server `server`, keeping the last words for error messages.
async fn log_stderr(server: String, stderr: tokio::process::ChildStderr, tail: StderrTail) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::info!(target: "claw_tui::mcp::stderr", server = %server, "{line}");
        tail.push(&line);
    }
}

/// Owns the running service until it ends by itself or is stopped, then says why.
async fn watch_service(
    service: RunningService<RoleClient, Handler>,
    stop: CancellationToken,
    ended: watch::Sender<Option<String>>,
    stderr_tail: Option<StderrTail>,
) {
    let cancel = service.cancellation_token();
    let waiting = service.waiting();
    tokio::pin!(waiting);
    let reason = tokio::select! {
        () = stop.cancelled() => {
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(2), &mut waiting).await;
            "closed by claw-tui".to_owned()
        }
        quit = &mut waiting => {
            let last = stderr_tail.and_then(|t| t.last_words());
            let base = match quit {
                Ok(_) => "the server closed the connection".to_owned(),
                Err(e) => format!("the connection task failed: {e}"),
            };
            match last {
                Some(line) => format!("{base} (its last words: {line})"),
                None => base,
            }
        }
    };
    let _ = ended.send(Some(reason));
}

impl RmcpConnection {
    fn lost(&self, error: &ServiceError) -> CallError {
        match error {
            ServiceError::McpError(e) if stdio::is_unreadable(e) => {
                CallError::Unreadable(e.message.to_string())
            }
            ServiceError::McpError(e) => CallError::Server(e.message.to_string()),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let reason = self.ended.borrow().clone();
                CallError::Closed(reason.unwrap_or_else(|| plain::service(error)))
            }
            ServiceError::Timeout { timeout } => CallError::TimedOut(*timeout),
            other => CallError::Server(plain::service(other)),
        }
    }
}

#[async_trait]
impl McpConnection for RmcpConnection {
    fn server_info(&self) -> String {
        self.info.clone()
    }

    async fn list_tools(&self) -> Result<Vec<RemoteTool>, CallError> {
        let tools = self
            .peer
            .list_all_tools()
            .await
            .map_err(|e| self.lost(&e))?;
        Ok(tools
            .iter()
            .filter_map(|tool| serde_json::to_value(tool).ok())
            .map(|tool| RemoteTool {
                name: tool["name"].as_str().unwrap_or_default().to_owned(),
                description: tool["description"].as_str().unwrap_or_default().to_owned(),
                input_schema: tool
                    .get("inputSchema")
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({"type": "object"})),
                read_only: tool["annotations"]["readOnlyHint"].as_bool() == Some(true),
            })
            .collect())
    }

    async fn call_tool(
        &self,
        name: &str,
        args: Value,
        progress: Option<ProgressFn>,
        cancel: &CancellationToken,
        timeout: Duration,
    ) -> Result<CallResult, CallError> {
        let params: CallToolRequestParams = serde_json::from_value(serde_json::json!({
            "name": name,
            "arguments": if args.is_object() { args } else { serde_json::json!({}) },
        }))
        .map_err(|e| CallError::Server(format!("cannot build the request: {e}")))?;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.lost(&e))?;
        let token = handle.progress_token.0.to_string();
        if let Some(progress) = progress {
            self.handler.routes().register(token.clone(), progress);
        }
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(CallError::Cancelled),
            () = tokio::time::sleep(timeout) => Err(CallError::TimedOut(timeout)),
            answer = &mut handle.rx => Ok(answer),
        };
        // Notifications still on their way belong to an ended call: dropped.
        self.handler.routes().calls.remove(&token);
        match outcome {
            Ok(Ok(Ok(result))) => {
                // A result rmcp could not type (content of a type it does not know, a
                // malformed part) comes as another result kind, often its catch-all
                // JSON; an empty answer too, which still means "done". Each is read
                // into ours the same way, where each part is judged on its own.
                let json = match result {
                    ServerResult::CallToolResult(result) => serde_json::to_value(result),
                    other => serde_json::to_value(other),
                };
                json.map_err(|e| e.to_string())
                    .and_then(CallResult::from_json)
                    .map_err(CallError::Unreadable)
            }
            Ok(Ok(Err(e))) => Err(self.lost(&e)),
            Ok(Err(_)) => Err(CallError::Closed(
                self.ended
                    .borrow()
                    .clone()
                    .unwrap_or_else(|| "the connection closed".into()),
            )),
            Err(reason) => {
                let why = match &reason {
                    CallError::TimedOut(_) => "timeout",
                    _ => "cancelled by the user",
                };
                // Best effort: a closed connection has nothing left to cancel.
                let _ = handle.cancel(Some(why.to_owned())).await;
                Err(reason)
            }
        }
    }

    async fn closed(&self) -> String {
        let mut ended = self.ended.clone();
        match ended.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            Err(_) => "the connection task ended".to_owned(),
        }
    }

    async fn close(&self) {
        self.stop.cancel();
        let _ = self.closed().await;
        if let Some(group) = self.process_group {
            // What the server started may outlive it; the whole group goes.
            process_group::stop(group);
        }
    }
}
