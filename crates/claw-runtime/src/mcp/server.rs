//! One configured server's life: resolve its endpoint, connect within the startup
//! timeout, list its tools, follow `list_changed`, and restart it with backoff (1 s
//! doubling to 60 s) whenever it exits or drops the connection.

use super::client::{
    self, CallError, ConnectError, Endpoint, McpConnection, RemoteTool, ServerSignal,
};
use super::config::{ServerSpec, Transport, expand_vars};
use super::manager::Shared;
use crate::runtime::mcp_state::{McpServerInfo, McpServerState, McpToolInfo};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// First wait before a restart.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// Longest wait before a restart.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// A connection that stayed up this long starts the backoff over.
const STABLE_AFTER: Duration = Duration::from_secs(60);

struct Inner {
    state: McpServerState,
    server_info: Option<String>,
    tools: Vec<McpToolInfo>,
    /// The tools as the server last listed them (to name them again).
    listed: Vec<RemoteTool>,
    connection: Option<Arc<dyn McpConnection>>,
    /// Why the last attempt to start failed; `None` once one succeeded.
    failure: Option<String>,
}

/// Why a server could not be brought up.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// `bearer_token_env` names a variable that is unset or empty.
    #[error("bearer_token_env names {var}, which is not set")]
    BearerTokenUnset {
        /// The variable's name.
        var: String,
    },
    /// The connection could not be opened.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// Connected, but the server did not list its tools.
    #[error("cannot list its tools: {0}")]
    ListTools(#[source] CallError),
    /// Connecting and listing took longer than `startup_timeout_secs`.
    #[error("not ready within {secs} s (startup_timeout_secs)")]
    StartupTimeout {
        /// The limit in seconds.
        secs: u64,
    },
}

/// A server has no live connection now; shown as its state in a few words.
#[derive(Debug, thiserror::Error)]
#[error("{}", .info.status_line())]
pub struct NotConnected {
    /// What is known about the server (boxed: it is large, and this is the rare path).
    pub info: Box<McpServerInfo>,
}

/// One server: its settings and what is known about it now.
pub struct Server {
    pub(super) spec: ServerSpec,
    inner: Mutex<Inner>,
    /// True once the first connection attempt has ended (ready or failed).
    settled: watch::Sender<bool>,
}

impl Server {
    pub(super) fn new(spec: ServerSpec, state: McpServerState) -> Self {
        let settled = !matches!(state, McpServerState::Starting);
        Self {
            spec,
            inner: Mutex::new(Inner {
                state,
                server_info: None,
                tools: Vec::new(),
                listed: Vec::new(),
                connection: None,
                failure: None,
            }),
            settled: watch::channel(settled).0,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every change under this lock is a plain assignment; nothing can be half-done.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the UI shows about it.
    pub fn info(&self) -> McpServerInfo {
        let inner = self.lock();
        McpServerInfo {
            name: self.spec.name.clone(),
            origin: self.spec.origin,
            transport: self.spec.config.transport.kind().to_owned(),
            state: inner.state.clone(),
            server_info: inner.server_info.clone(),
            tools: inner.tools.clone(),
        }
    }

    /// Why it is not ready, when its last attempt to start failed.
    pub(super) fn failure(&self) -> Option<String> {
        let inner = self.lock();
        let ready = matches!(inner.state, McpServerState::Ready);
        inner.failure.clone().filter(|_| !ready)
    }

    /// The live connection, or the server's state when there is none.
    pub(super) fn connection(&self) -> Result<Arc<dyn McpConnection>, NotConnected> {
        let inner = self.lock();
        match &inner.connection {
            Some(connection) => Ok(connection.clone()),
            None => Err(NotConnected {
                info: Box::new(self.info_of(&inner)),
            }),
        }
    }

    fn info_of(&self, inner: &Inner) -> McpServerInfo {
        McpServerInfo {
            name: self.spec.name.clone(),
            origin: self.spec.origin,
            transport: self.spec.config.transport.kind().to_owned(),
            state: inner.state.clone(),
            server_info: None,
            tools: inner.tools.clone(),
        }
    }

    /// A call found the connection gone: drop it so the watcher restarts the server.
    pub(super) fn connection_lost(&self, connection: &Arc<dyn McpConnection>) {
        let connection = connection.clone();
        tokio::spawn(async move { connection.close().await });
    }

    /// Whether the first attempt has ended.
    pub(super) fn settled(&self) -> watch::Receiver<bool> {
        self.settled.subscribe()
    }

    pub(super) fn set_state(&self, shared: &Shared, state: McpServerState) {
        let info = {
            let mut inner = self.lock();
            inner.state = state;
            McpServerInfo {
                server_info: inner.server_info.clone(),
                ..self.info_of(&inner)
            }
        };
        shared.announce(info);
    }

    pub(super) fn settle(&self) {
        self.settled.send_replace(true);
    }
}

/// The environment a stdio server starts with: ours without secrets (API keys, tokens),
/// then its configured `env`, whose `${VAR}` are filled from ours. A secret reaches a
/// server only when its config names it.
fn server_env(
    base: &BTreeMap<String, String>,
    configured: &BTreeMap<String, String>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    let mut env = base.clone();
    for (key, value) in configured {
        env.insert(key.clone(), expand_vars(value, lookup));
    }
    env
}

/// The endpoint of `spec` with variables, tokens and paths resolved; `lookup` fills
/// `${VAR}` (for a project server, only the variables the user allowed it).
pub(super) fn endpoint(
    spec: &ServerSpec,
    base_env: &BTreeMap<String, String>,
    lookup: &dyn Fn(&str) -> Option<String>,
    workspace: &Path,
) -> Result<Endpoint, StartError> {
    match &spec.config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => Ok(Endpoint::Stdio {
            program: command.clone(),
            args: args.clone(),
            env: server_env(base_env, env, lookup),
            cwd: super::trust::server_cwd(cwd.as_deref(), workspace),
        }),
        Transport::Http {
            url,
            headers,
            bearer_token_env,
        } => {
            let bearer_token = match bearer_token_env {
                Some(var) => Some(
                    lookup(var)
                        .filter(|v| !v.is_empty())
                        .ok_or_else(|| StartError::BearerTokenUnset { var: var.clone() })?,
                ),
                None => None,
            };
            Ok(Endpoint::Http {
                url: url.clone(),
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.clone(), expand_vars(v, lookup)))
                    .collect(),
                bearer_token,
            })
        }
    }
}

/// Connects and lists the tools within the startup timeout.
async fn open(
    server: &Server,
    shared: &Shared,
    signals: mpsc::UnboundedSender<ServerSignal>,
) -> Result<(Arc<dyn McpConnection>, Vec<RemoteTool>), StartError> {
    let access = &shared.access;
    let lookup = access.lookup_for(server.spec.origin);
    let endpoint = endpoint(
        &server.spec,
        &access.base_env,
        lookup.as_ref(),
        &access.workspace,
    )?;
    // Its turn first: the timeout is for the server's own start, not for the others'.
    let _turn = shared.starts.acquire().await;
    let limit = Duration::from_secs(server.spec.config.startup_timeout_secs);
    let attempt = async {
        let connection = client::connect(&server.spec.name, &endpoint, signals).await?;
        match connection.list_tools().await {
            Ok(tools) => Ok((connection, tools)),
            Err(e) => {
                connection.close().await;
                Err(StartError::ListTools(e))
            }
        }
    };
    match tokio::time::timeout(limit, attempt).await {
        Ok(result) => result,
        Err(_) => Err(StartError::StartupTimeout {
            secs: limit.as_secs(),
        }),
    }
}

/// Runs `server` until claw-tui stops: connect, serve, restart.
pub(super) async fn run(server: Arc<Server>, shared: Arc<Shared>) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        if !super::trust::wait_until_trusted(&server, &shared).await {
            return;
        }
        server.set_state(&shared, McpServerState::Starting);
        let (signals_tx, mut signals) = mpsc::unbounded_channel();
        let opened = tokio::select! {
            () = shared.stop.cancelled() => return,
            opened = open(&server, &shared, signals_tx) => opened,
        };
        let reason = match opened {
            Err(error) => {
                let reason = error.to_string();
                tracing::warn!(server = %server.spec.name, "MCP server failed to start: {reason}");
                server.lock().failure = Some(reason.clone());
                server.set_state(
                    &shared,
                    McpServerState::Failed {
                        reason: reason.clone(),
                        retry_in_secs: Some(backoff.as_secs()),
                    },
                );
                server.settle();
                Err(reason)
            }
            Ok((connection, tools)) => {
                {
                    let mut inner = server.lock();
                    inner.server_info = Some(connection.server_info());
                    inner.connection = Some(connection.clone());
                    inner.failure = None;
                }
                shared.install_tools(&server, &tools);
                server.set_state(&shared, McpServerState::Ready);
                server.settle();
                let up_since = Instant::now();
                let reason = loop {
                    tokio::select! {
                        () = shared.stop.cancelled() => {
                            server.lock().connection = None;
                            connection.close().await;
                            return;
                        }
                        Some(ServerSignal::ToolsChanged) = signals.recv() => {
                            match connection.list_tools().await {
                                Ok(tools) => {
                                    shared.install_tools(&server, &tools);
                                    server.set_state(&shared, McpServerState::Ready);
                                }
                                Err(e) => tracing::warn!(server = %server.spec.name, "cannot list the changed tools: {e}"),
                            }
                        }
                        reason = connection.closed() => break reason,
                    }
                };
                server.lock().connection = None;
                // What the server started may outlive it (its process group).
                connection.close().await;
                tracing::warn!(server = %server.spec.name, "MCP server stopped: {reason}");
                if up_since.elapsed() >= STABLE_AFTER {
                    backoff = FIRST_BACKOFF;
                }
                Ok(reason)
            }
        };
        // Count down in whole seconds so the dashboard's "restarting in N s" is true.
        let deadline = Instant::now() + backoff;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let secs = left.as_secs_f64().ceil() as u64;
            let state = match &reason {
                Ok(why) => McpServerState::Restarting {
                    reason: why.clone(),
                    retry_in_secs: secs,
                },
                Err(why) => McpServerState::Failed {
                    reason: why.clone(),
                    retry_in_secs: Some(secs),
                },
            };
            server.set_state(&shared, state);
            let tick = left - Duration::from_secs(secs.saturating_sub(1));
            tokio::select! {
                () = shared.stop.cancelled() => return,
                () = tokio::time::sleep(tick) => {}
            }
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

impl Server {
    pub(super) fn set_tools(&self, tools: Vec<McpToolInfo>) {
        self.lock().tools = tools;
    }

    pub(super) fn set_listed(&self, tools: Vec<RemoteTool>) {
        self.lock().listed = tools;
    }

    pub(super) fn listed(&self) -> Vec<RemoteTool> {
        self.lock().listed.clone()
    }

    pub(super) fn tool_names(&self) -> Vec<String> {
        self.lock().tools.iter().map(|t| t.name.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_env_wins_and_expands() {
        let base = BTreeMap::from([("PATH".to_owned(), "/bin".to_owned())]);
        let configured = BTreeMap::from([
            ("TOKEN".to_owned(), "${GH_TOKEN}".to_owned()),
            ("PATH".to_owned(), "/opt/bin:${PATH}".to_owned()),
        ]);
        let lookup = |name: &str| match name {
            "GH_TOKEN" => Some("t0k".to_owned()),
            "PATH" => Some("/bin".to_owned()),
            _ => None,
        };
        let env = server_env(&base, &configured, &lookup);
        assert_eq!(env["TOKEN"], "t0k");
        assert_eq!(env["PATH"], "/opt/bin:/bin");
    }

    fn http_spec(headers: &[(&str, &str)], bearer_token_env: Option<&str>) -> ServerSpec {
        ServerSpec {
            name: "remote".to_owned(),
            config: super::super::ServerConfig::new(Transport::Http {
                url: "http://127.0.0.1:9/mcp".to_owned(),
                headers: headers
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
                bearer_token_env: bearer_token_env.map(str::to_owned),
            }),
            origin: super::super::Origin::User,
            entry: None,
        }
    }

    #[test]
    fn an_unset_bearer_token_variable_is_named() {
        let spec = http_spec(&[], Some("NO_SUCH_TOKEN"));
        let unset = |_: &str| None;
        let error = endpoint(&spec, &BTreeMap::new(), &unset, Path::new("/")).unwrap_err();
        assert!(
            matches!(&error, StartError::BearerTokenUnset { var } if var == "NO_SUCH_TOKEN"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "bearer_token_env names NO_SUCH_TOKEN, which is not set"
        );
        let empty = |_: &str| Some(String::new());
        assert!(endpoint(&spec, &BTreeMap::new(), &empty, Path::new("/")).is_err());
    }

    #[tokio::test]
    async fn a_bad_header_fails_before_any_connection_with_its_cause() {
        let spec = http_spec(&[("bad name", "v")], None);
        let lookup = |_: &str| None;
        let endpoint = endpoint(&spec, &BTreeMap::new(), &lookup, Path::new("/")).unwrap();
        let (signals, _) = mpsc::unbounded_channel();
        let error = match client::connect("remote", &endpoint, signals).await {
            Err(error) => StartError::from(error),
            Ok(_) => panic!("connected with an invalid header name"),
        };
        assert!(
            matches!(
                &error,
                StartError::Connect(ConnectError::HeaderName { name, .. }) if name == "bad name"
            ),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .starts_with("header name \"bad name\" is invalid: "),
            "{error}"
        );
        assert!(std::error::Error::source(&error).is_some());
    }

    #[test]
    fn a_failed_handshake_quotes_the_servers_last_words() {
        let quiet = ConnectError::Handshake {
            reason: "connection closed: initialize response".to_owned(),
            last_words: None,
        };
        assert_eq!(quiet.to_string(), "connection closed: initialize response");
        let said = ConnectError::Handshake {
            reason: "connection closed: initialize response".to_owned(),
            last_words: Some("missing DATABASE_URL".to_owned()),
        };
        assert_eq!(
            said.to_string(),
            "connection closed: initialize response (its last words: missing DATABASE_URL)"
        );
    }

    #[test]
    fn startup_timeout_and_listing_failures_read_as_before() {
        let error = StartError::StartupTimeout { secs: 30 };
        assert_eq!(
            error.to_string(),
            "not ready within 30 s (startup_timeout_secs)"
        );
        let error = StartError::ListTools(CallError::Server("method not found".to_owned()));
        assert_eq!(error.to_string(), "cannot list its tools: method not found");
    }
}
