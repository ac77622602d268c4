//! Every configured MCP server of the process: started in the background, their tools
//! registered in the tool policy under stable names, their states reported as runtime
//! events, and the agents told when the tool list changed.

pub use super::access::{EnvLookup, ServerAccess};
use super::client::RemoteTool;
use super::config::{Origin, ServerSpec};
use super::names::tool_name;
use super::server::{self, Server};
use super::tool::McpTool;
use crate::agent::ToolSpec;
use crate::runtime::mcp_state::{McpServerInfo, McpServerState, McpToolInfo};
use crate::runtime::{RuntimeEvent, RuntimeEventSender};
use crate::tools::large_results::LargeResults;
use crate::tools::policy::{ToolPolicy, ToolRules};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Called after MCP tools were added, changed or removed (to re-equip the agents and
/// rebuild their system prompts).
pub type ToolsChanged = Arc<dyn Fn() + Send + Sync>;

/// What every server task shares.
pub(super) struct Shared {
    servers: Vec<Arc<Server>>,
    policy: ToolPolicy,
    events: RuntimeEventSender,
    pub(super) access: ServerAccess,
    pub(super) stop: CancellationToken,
    on_change: Mutex<Option<ToolsChanged>>,
    /// Where results too large to keep whole go, for the model to read.
    large_results: Mutex<Option<Arc<LargeResults>>>,
    /// Registry names of MCP tools, each with its server (for collision-free names).
    names: Mutex<BTreeMap<String, NameOwner>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// Whether [`McpManager::start`] ran.
    started: AtomicBool,
    /// How many servers connect at once ([`concurrent_starts`]): a start waits for its
    /// turn before its `startup_timeout_secs` begins.
    pub(super) starts: tokio::sync::Semaphore,
}

/// How many servers start at once: one per core, two at least. Eight Node servers
/// started together on two cores each took longer than any timeout; one after another
/// each is ready in a few seconds.
pub(super) fn concurrent_starts() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every change under these locks is a single insert, push or assignment.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    pub(super) fn announce(&self, server: McpServerInfo) {
        self.events.send(RuntimeEvent::McpServerUpdate { server });
    }

    /// Registers `tools` (as the server lists them now) under their names, removes the
    /// server's tools that are gone, and tells the agents. A user server's tool takes
    /// its plain name even from a project server's tool that had it (which is named
    /// again): a project file cannot make the model call its tool by the name of one of
    /// the user's.
    pub(super) fn install_tools(&self, server: &Arc<Server>, tools: &[RemoteTool]) {
        server.set_listed(tools.to_vec());
        let evicted = self.name_and_register(server, tools);
        for name in evicted {
            if let Some(loser) = self.servers.iter().find(|s| s.spec.name == name) {
                // A project server's tools take no name another tool has: no eviction.
                self.name_and_register(loser, &loser.listed());
            }
        }
        let callback = lock(&self.on_change).clone();
        if let Some(callback) = callback {
            callback();
        }
    }

    /// Names `server`'s offered `tools` and registers them; returns the servers whose
    /// tools lost their name to one of these.
    fn name_and_register(&self, server: &Arc<Server>, tools: &[RemoteTool]) -> BTreeSet<String> {
        let config = &server.spec.config;
        let user = server.spec.origin == Origin::User;
        let offered: Vec<&RemoteTool> = tools
            .iter()
            .filter(|t| config.allows_tool(&t.name))
            .collect();
        let mut evicted = BTreeSet::new();
        let mut names = lock(&self.names);
        names.retain(|_, owner| owner.server != server.spec.name);
        let mut named: Vec<(String, &RemoteTool)> = Vec::new();
        for tool in offered {
            // Built-in names never start with `mcp__`: only MCP names can clash. A user
            // server's tool yields only to another user server's.
            let taken = |n: &str| names.get(n).is_some_and(|owner| owner.user || !user);
            let name = tool_name(&server.spec.name, &tool.name, &taken);
            let owner = NameOwner {
                server: server.spec.name.clone(),
                user,
            };
            if let Some(loser) = names.insert(name.clone(), owner) {
                evicted.insert(loser.server);
            }
            named.push((name, tool));
        }
        let kept: BTreeSet<&str> = named.iter().map(|(n, _)| n.as_str()).collect();
        for old in server.tool_names() {
            // A name another server holds now is that server's tool: left alone.
            if !kept.contains(old.as_str()) && !names.contains_key(&old) {
                self.policy.unregister(&old);
            }
        }
        drop(names);
        let large_results = lock(&self.large_results).clone();
        for (name, tool) in &named {
            let mut spec = ToolSpec::new(
                name.clone(),
                tool.name.clone(),
                tool.description.clone(),
                super::schema::defaults_optional(tool.input_schema.clone()),
            )
            .lenient();
            spec.read_only = tool.read_only;
            let rules = ToolRules {
                subagents: config.subagents,
                approval: config.approval,
                read_only: spec.read_only,
            };
            self.policy.register_with(
                Arc::new(McpTool {
                    server: server.clone(),
                    spec,
                    remote_name: tool.name.clone(),
                    large_results: large_results.clone(),
                }),
                rules,
            );
        }
        server.set_tools(tool_infos(&named));
        evicted
    }
}

/// Which server holds an MCP tool name, and whether it is one of the user's.
struct NameOwner {
    server: String,
    user: bool,
}

/// The process's MCP servers; cheap to clone, clones share everything.
#[derive(Clone)]
pub struct McpManager {
    shared: Arc<Shared>,
}

impl McpManager {
    /// Servers from `specs` (the trusted ones) and `untrusted` (project servers the user
    /// has not trusted: listed, not started), registering their tools in `policy` and
    /// reporting to `events`; `access` says what they get and whether the files they
    /// run may run. Nothing starts before [`Self::start`].
    pub fn new(
        specs: Vec<ServerSpec>,
        untrusted: Vec<ServerSpec>,
        policy: ToolPolicy,
        events: RuntimeEventSender,
        access: ServerAccess,
    ) -> Self {
        let initial = |spec: &ServerSpec| {
            if spec.config.enabled {
                McpServerState::Starting
            } else {
                McpServerState::Disabled
            }
        };
        let mut servers: Vec<Arc<Server>> = specs
            .into_iter()
            .map(|spec| {
                let state = initial(&spec);
                Arc::new(Server::new(spec, state))
            })
            .collect();
        servers.extend(
            untrusted
                .into_iter()
                .map(|spec| Arc::new(Server::new(spec, McpServerState::Untrusted))),
        );
        let manager = Self {
            shared: Arc::new(Shared {
                servers,
                policy,
                events,
                access,
                stop: CancellationToken::new(),
                on_change: Mutex::new(None),
                large_results: Mutex::new(None),
                names: Mutex::new(BTreeMap::new()),
                tasks: Mutex::new(Vec::new()),
                started: AtomicBool::new(false),
                starts: tokio::sync::Semaphore::new(concurrent_starts()),
            }),
        };
        // Every server is listed from the start, also those that never change state
        // (disabled, not trusted).
        for server in &manager.shared.servers {
            manager.shared.announce(server.info());
        }
        manager
    }

    /// Keeps the whole text of results too large for the model in `store` (tools
    /// registered from now on); without it they are cut and the rest is dropped.
    pub fn keep_large_results_in(&self, store: Arc<LargeResults>) {
        *lock(&self.shared.large_results) = Some(store);
    }

    /// Calls `callback` whenever MCP tools were added, changed or removed.
    pub fn on_tools_changed(&self, callback: ToolsChanged) {
        *lock(&self.shared.on_change) = Some(callback);
    }

    /// Starts every enabled, trusted server in the background; returns at once. Needs
    /// a Tokio runtime. Later calls do nothing.
    pub fn start(&self) {
        if self.shared.started.swap(true, Ordering::SeqCst) {
            return;
        }
        for server in &self.shared.servers {
            if matches!(server.info().state, McpServerState::Starting) {
                self.spawn(server.clone());
            }
        }
    }

    fn spawn(&self, server: Arc<Server>) {
        let task = tokio::spawn(server::run(server, self.shared.clone()));
        lock(&self.shared.tasks).push(task);
    }

    /// Starts the project servers the user has just trusted.
    pub fn start_untrusted(&self) {
        for server in &self.shared.servers {
            if matches!(server.info().state, McpServerState::Untrusted) {
                if server.spec.config.enabled {
                    server.set_state(&self.shared, McpServerState::Starting);
                    self.spawn(server.clone());
                } else {
                    server.set_state(&self.shared, McpServerState::Disabled);
                }
            }
        }
    }

    /// Every server as the UI shows it, in configuration order.
    pub fn servers(&self) -> Vec<McpServerInfo> {
        self.shared.servers.iter().map(|s| s.info()).collect()
    }

    /// Whether no server is configured at all.
    pub fn is_empty(&self) -> bool {
        self.shared.servers.is_empty()
    }

    /// Waits until every started server is ready or has failed once; each attempt is
    /// itself bounded by the server's `startup_timeout_secs`, counted from its turn to
    /// start (see [`concurrent_starts`]), so the wait allows for the turns.
    pub async fn wait_started(&self) {
        let servers = &self.shared.servers;
        let longest = servers
            .iter()
            .map(|s| s.spec.config.startup_timeout_secs)
            .max()
            .unwrap_or(0);
        let rounds = u64::try_from(servers.len().div_ceil(concurrent_starts())).unwrap_or(1);
        // The attempts time themselves out; the extra second only guards a stuck task.
        let deadline = tokio::time::Instant::now()
            + Duration::from_secs(longest.saturating_mul(rounds.max(1)) + 1);
        for server in servers {
            let mut settled = server.settled();
            let _ = tokio::time::timeout_at(deadline, settled.wait_for(|done| *done)).await;
        }
    }

    /// The servers that failed to start (their last attempt) and are not ready now,
    /// each with why: what a run without their tools should say.
    pub fn start_failures(&self) -> Vec<(String, String)> {
        self.shared
            .servers
            .iter()
            .filter_map(|s| Some((s.spec.name.clone(), s.failure()?)))
            .collect()
    }

    /// Every enabled server that is not ready, each with why (failed, not trusted, still
    /// starting): what `--require-mcp` refuses to run without.
    pub fn not_ready(&self) -> Vec<(String, String)> {
        self.shared
            .servers
            .iter()
            .filter_map(|server| {
                let info = server.info();
                let why = match &info.state {
                    McpServerState::Ready | McpServerState::Disabled => return None,
                    McpServerState::Untrusted => {
                        "it is not trusted (from .mcp.json; --trust-project-mcp starts it)"
                            .to_owned()
                    }
                    state => server.failure().unwrap_or_else(|| match state {
                        McpServerState::Starting => "it is still starting".to_owned(),
                        _ => info.status_line(),
                    }),
                };
                Some((info.name, why))
            })
            .collect()
    }

    /// Stops every server (closing connections, ending stdio processes) and waits.
    pub async fn shutdown(&self) {
        self.shared.stop.cancel();
        let tasks: Vec<JoinHandle<()>> = lock(&self.shared.tasks).drain(..).collect();
        for task in tasks {
            let _ = task.await;
        }
        for server in &self.shared.servers {
            if !matches!(
                server.info().state,
                McpServerState::Disabled | McpServerState::Untrusted
            ) {
                server.set_state(&self.shared, McpServerState::Stopped);
            }
        }
    }
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self
            .shared
            .servers
            .iter()
            .map(|s| s.spec.name.as_str())
            .collect();
        f.debug_struct("McpManager")
            .field("servers", &names)
            .finish_non_exhaustive()
    }
}

/// What the UI shows about the server's offered tools (`(registry name, tool)` pairs),
/// with the size of each definition as the providers send it.
fn tool_infos(tools: &[(String, &super::client::RemoteTool)]) -> Vec<McpToolInfo> {
    tools
        .iter()
        .map(|(name, tool)| {
            let definition = serde_json::json!({
                "name": name,
                "description": tool.description,
                "parameters": tool.input_schema,
            });
            McpToolInfo {
                name: name.clone(),
                remote_name: tool.name.clone(),
                description: tool.description.clone(),
                definition_tokens: crate::runtime::mcp_state::estimate_tokens(
                    definition.to_string().len(),
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::config::{ServerConfig, Transport};
    use crate::tools::ToolRegistry;
    use crate::tools::exec::{Approver, EnvPolicy};
    use crate::tools::policy::{AgentRole, PolicyConfig};
    use crate::trust::Trust;

    fn spec(name: &str, origin: Origin) -> ServerSpec {
        ServerSpec {
            name: name.into(),
            config: ServerConfig::new(Transport::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: BTreeMap::new(),
                bearer_token_env: None,
            }),
            origin,
            entry: None,
        }
    }

    fn tool(name: &str) -> RemoteTool {
        RemoteTool {
            name: name.into(),
            description: format!("{name} of its server"),
            input_schema: serde_json::json!({"type": "object"}),
            read_only: false,
        }
    }

    /// The server whose tool the registry name `name` calls.
    fn owner(manager: &McpManager, name: &str) -> Option<String> {
        manager
            .servers()
            .into_iter()
            .find(|s| s.tools.iter().any(|t| t.name == name))
            .map(|s| s.name)
    }

    #[test]
    fn a_user_servers_tool_takes_its_name_back_from_a_project_server() {
        let dir = tempfile::tempdir().unwrap();
        let policy = ToolPolicy::new(
            ToolRegistry::new(),
            PolicyConfig::default(),
            Approver::Nobody,
        );
        // `mcp__files__read__all` is the user's `files` tool `read__all`, and also the
        // project's `files__read` tool `all`.
        let manager = McpManager::new(
            vec![
                spec("files", Origin::User),
                spec("files__read", Origin::Project),
            ],
            vec![],
            policy.clone(),
            RuntimeEventSender::discard(),
            ServerAccess::new(
                dir.path().to_path_buf(),
                &EnvPolicy::lenient(&[], &[]),
                Trust::in_memory(dir.path()),
            ),
        );
        let shared = &manager.shared;
        let (user, project) = (&shared.servers[0], &shared.servers[1]);
        let plain = "mcp__files__read__all";
        // The project server lists first and takes the name...
        shared.install_tools(project, &[tool("all")]);
        assert_eq!(owner(&manager, plain).as_deref(), Some("files__read"));
        // ...until the user's server lists its tool: the name is the user's again, and
        // the project's tool goes on under another name.
        shared.install_tools(user, &[tool("read__all")]);
        assert_eq!(owner(&manager, plain).as_deref(), Some("files"));
        let names = policy.names_for_role(&AgentRole::Main);
        assert_eq!(names.len(), 2, "{names:?}");
        let renamed = names.iter().find(|n| *n != plain).unwrap();
        assert_eq!(owner(&manager, renamed).as_deref(), Some("files__read"));
        let offered = policy.tools_for(&AgentRole::Main).get(plain).unwrap();
        assert_eq!(offered.description(), "read__all of its server");
        // The project server listing again does not take it.
        shared.install_tools(project, &[tool("all")]);
        assert_eq!(owner(&manager, plain).as_deref(), Some("files"));
        assert_eq!(policy.names_for_role(&AgentRole::Main).len(), 2);
    }
}
