//! The MCP servers the user configured: `[mcp.servers.NAME]` in config.toml and the
//! project's `.mcp.json`, checked when read so a typo is reported with its line.

use crate::tools::exec::ApprovalMode;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

mod project;

pub use project::{ProjectServers, merge, read_project_file};

/// Seconds a server may take to start when the config gives none.
pub const DEFAULT_STARTUP_TIMEOUT_SECS: u64 = 30;
/// Seconds one tool call may take when the config gives none.
pub const DEFAULT_TOOL_TIMEOUT_SECS: u64 = 60;
/// The project file read at the workspace root.
pub const PROJECT_FILE: &str = ".mcp.json";

/// The `[mcp]` section of config.toml.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpSection {
    /// `[mcp.servers.NAME]` entries, by name.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerConfig>,
    /// The variables of claw-tui's environment a project's `.mcp.json` may use as
    /// `${VAR}` (a provider's API key never); any other is left empty there.
    #[serde(default)]
    pub project_env: Vec<String>,
}

/// How claw-tui reaches a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A program started by claw-tui, speaking over its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment (`${VAR}` is replaced by our `VAR`).
        env: BTreeMap<String, String>,
        /// Its working directory (default: the workspace).
        cwd: Option<PathBuf>,
    },
    /// A server reached over streamable HTTP.
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Headers sent with every request (`${VAR}` is replaced by our `VAR`).
        headers: BTreeMap<String, String>,
        /// The variable holding a bearer token for the `Authorization` header.
        bearer_token_env: Option<String>,
    },
}

impl Transport {
    /// `stdio` or `http`, for listings.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// One server's settings.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawServer")]
pub struct ServerConfig {
    /// How to reach it.
    pub transport: Transport,
    /// Whether it is started at all.
    pub enabled: bool,
    /// Seconds it may take to connect and list its tools.
    pub startup_timeout_secs: u64,
    /// Seconds one call may take.
    pub tool_timeout_secs: u64,
    /// Only these tools are offered (by the server's names), when given.
    pub tools: Option<Vec<String>>,
    /// These tools are never offered.
    pub disabled_tools: Vec<String>,
    /// Whether each call needs the user's approval.
    pub approval: ApprovalMode,
    /// Whether subagents are offered its tools.
    pub subagents: bool,
}

impl ServerConfig {
    /// A server reached by `transport` with every other setting at its default.
    pub fn new(transport: Transport) -> Self {
        Self {
            transport,
            enabled: true,
            startup_timeout_secs: DEFAULT_STARTUP_TIMEOUT_SECS,
            tool_timeout_secs: DEFAULT_TOOL_TIMEOUT_SECS,
            tools: None,
            disabled_tools: Vec::new(),
            approval: ApprovalMode::Never,
            subagents: true,
        }
    }

    /// Whether the server's tool `name` is offered at all.
    pub fn allows_tool(&self, name: &str) -> bool {
        let listed = self
            .tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|t| t == name));
        listed && !self.disabled_tools.iter().any(|t| t == name)
    }
}

/// A `[mcp.servers.NAME]` table as written, before its transport is decided.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    bearer_token_env: Option<String>,
    enabled: Option<bool>,
    startup_timeout_secs: Option<u64>,
    tool_timeout_secs: Option<u64>,
    tools: Option<Vec<String>>,
    #[serde(default)]
    disabled_tools: Vec<String>,
    approval: Option<ApprovalMode>,
    subagents: Option<bool>,
}

/// Why a server's settings or name cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ServerConfigError {
    /// Both `command` and `url` are given.
    #[error("give either `command` (a stdio server) or `url` (an HTTP server), not both")]
    BothTransports,
    /// Neither `command` nor `url` is given.
    #[error("a server needs `command` (a stdio server) or `url` (an HTTP server)")]
    NoTransport,
    /// A key of HTTP servers on a stdio server.
    #[error("`{key}` is for HTTP servers (`url`); this one has `command`")]
    HttpKeyOnStdio {
        /// The key.
        key: &'static str,
    },
    /// A key of stdio servers on an HTTP server.
    #[error("`{key}` is for stdio servers (`command`); this one has `url`")]
    StdioKeyOnHttp {
        /// The key.
        key: &'static str,
    },
    /// `command = ""`.
    #[error("`command` is empty")]
    EmptyCommand,
    /// A time limit of zero seconds.
    #[error("`{key}` must be at least 1 second")]
    ZeroTimeout {
        /// The key.
        key: &'static str,
    },
    /// A URL that is not http(s).
    #[error("`url` must start with http:// or https:// (got \"{url}\")")]
    UrlScheme {
        /// The URL as given.
        url: String,
    },
    /// A name providers would not accept inside a tool name.
    #[error("MCP server name \"{name}\" may only use letters, digits, `_` and `-`")]
    BadName {
        /// The name as given.
        name: String,
    },
    /// A `.mcp.json` entry of `"type": "sse"`.
    #[error("the legacy SSE transport is not supported; use \"type\": \"http\" (streamable HTTP)")]
    LegacySse,
    /// A `.mcp.json` entry of another `"type"`.
    #[error("unknown \"type\": \"{kind}\" (use stdio or http)")]
    UnknownType {
        /// The type as given.
        kind: String,
    },
    /// A `.mcp.json` entry whose keys have the wrong types.
    #[error("{reason}")]
    EntryShape {
        /// What serde says is wrong.
        reason: String,
    },
    /// A `.mcp.json` entry with neither `command` nor `url`.
    #[error("an entry needs either \"command\" or \"url\"")]
    EntryNoTransport,
}

impl TryFrom<RawServer> for ServerConfig {
    type Error = ServerConfigError;

    fn try_from(raw: RawServer) -> Result<Self, ServerConfigError> {
        let transport = match (raw.command, raw.url) {
            (Some(_), Some(_)) => return Err(ServerConfigError::BothTransports),
            (None, None) => return Err(ServerConfigError::NoTransport),
            (Some(command), None) => {
                let http_keys = [
                    ("headers", !raw.headers.is_empty()),
                    ("bearer_token_env", raw.bearer_token_env.is_some()),
                ];
                if let Some(&(key, _)) = http_keys.iter().find(|(_, set)| *set) {
                    return Err(ServerConfigError::HttpKeyOnStdio { key });
                }
                if command.trim().is_empty() {
                    return Err(ServerConfigError::EmptyCommand);
                }
                Transport::Stdio {
                    command,
                    args: raw.args,
                    env: raw.env,
                    cwd: raw.cwd,
                }
            }
            (None, Some(url)) => {
                let stdio_keys = [
                    ("args", !raw.args.is_empty()),
                    ("env", !raw.env.is_empty()),
                    ("cwd", raw.cwd.is_some()),
                ];
                if let Some(&(key, _)) = stdio_keys.iter().find(|(_, set)| *set) {
                    return Err(ServerConfigError::StdioKeyOnHttp { key });
                }
                check_url(&url)?;
                Transport::Http {
                    url,
                    headers: raw.headers,
                    bearer_token_env: raw.bearer_token_env,
                }
            }
        };
        let positive = |key: &'static str, value: Option<u64>, default: u64| match value {
            Some(0) => Err(ServerConfigError::ZeroTimeout { key }),
            Some(v) => Ok(v),
            None => Ok(default),
        };
        Ok(Self {
            transport,
            enabled: raw.enabled.unwrap_or(true),
            startup_timeout_secs: positive(
                "startup_timeout_secs",
                raw.startup_timeout_secs,
                DEFAULT_STARTUP_TIMEOUT_SECS,
            )?,
            tool_timeout_secs: positive(
                "tool_timeout_secs",
                raw.tool_timeout_secs,
                DEFAULT_TOOL_TIMEOUT_SECS,
            )?,
            tools: raw.tools,
            disabled_tools: raw.disabled_tools,
            approval: raw.approval.unwrap_or_default(),
            subagents: raw.subagents.unwrap_or(true),
        })
    }
}

/// Only http(s) URLs are reached.
fn check_url(url: &str) -> Result<(), ServerConfigError> {
    // `${BASE_URL}/mcp` is known only when the server starts.
    if url.starts_with("http://") || url.starts_with("https://") || url.starts_with("${") {
        Ok(())
    } else {
        Err(ServerConfigError::UrlScheme { url: url.into() })
    }
}

/// Server names become part of tool names; keep them to what every provider accepts.
pub fn check_server_name(name: &str) -> Result<(), ServerConfigError> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(ServerConfigError::BadName { name: name.into() })
    }
}

pub use crate::runtime::mcp_state::Origin;

/// A server to run: its name, settings and where they came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    /// Its name (`[mcp.servers.NAME]` or the `.mcp.json` key).
    pub name: String,
    /// Its settings.
    pub config: ServerConfig,
    /// The file it was declared in.
    pub origin: Origin,
    /// The `.mcp.json` entry as written (a project server): what the user is shown and
    /// trusts, whole.
    pub entry: Option<serde_json::Value>,
}

/// The variable a server's entry may use for the workspace, as Claude Code names it
/// (`${CLAUDE_PROJECT_DIR:-.}/server.js`); given to project files too.
pub const PROJECT_DIR_VAR: &str = "CLAUDE_PROJECT_DIR";

/// Each `${VAR}` and `${VAR:-default}` in `text`: the name and the default, in order.
/// Only the braced forms, as Claude Code reads `.mcp.json`: a bare `$` stays as written.
pub fn var_refs(text: &str) -> Vec<(&str, Option<&str>)> {
    let mut refs = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        let inside = &rest[start + 2..start + 2 + len];
        refs.push(match inside.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inside, None),
        });
        rest = &rest[start + 3 + len..];
    }
    refs
}

/// Replaces each `${VAR}` in `value` with `env(VAR)` (empty when unset), and each
/// `${VAR:-default}` with `env(VAR)`, or `default` when that is unset or empty.
pub fn expand_vars(value: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let inside = &rest[start + 2..start + 2 + len];
        let value = match inside.split_once(":-") {
            Some((name, default)) => env(name)
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| default.to_owned()),
            None => env(inside).unwrap_or_default(),
        };
        out.push_str(&value);
        rest = &rest[start + 3 + len..];
    }
    out.push_str(rest);
    out
}

/// `spec` with the variables of its command, arguments and URL filled by `env` (its
/// `env` and `headers` are filled when it starts). What runs, and so what the trust
/// checks, is the expanded command; the entry as written is what the user is shown.
pub fn expand_launch(mut spec: ServerSpec, env: &dyn Fn(&str) -> Option<String>) -> ServerSpec {
    match &mut spec.config.transport {
        Transport::Stdio { command, args, .. } => {
            *command = expand_vars(command, env);
            for arg in args.iter_mut() {
                *arg = expand_vars(arg, env);
            }
        }
        Transport::Http { url, .. } => *url = expand_vars(url, env),
    }
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<McpSection, toml::de::Error> {
        toml::from_str(text)
    }

    /// The message of the error `text` is refused with.
    fn refusal(text: &str) -> String {
        parse(text).map_or_else(|e| e.message().to_owned(), |s| panic!("accepted: {s:?}"))
    }

    #[test]
    fn stdio_and_http_servers_with_defaults() {
        let section = parse(
            r#"
            [servers.files]
            command = "npx"
            args = ["-y", "server"]
            env = { ROOT = "/tmp" }
            [servers.remote]
            url = "http://127.0.0.1:9/mcp"
            headers = { "X-Team" = "a" }
            bearer_token_env = "REMOTE_TOKEN"
            approval = "ask"
            subagents = false
            tool_timeout_secs = 5
            "#,
        )
        .expect("valid");
        let files = &section.servers["files"];
        assert_eq!(files.transport.kind(), "stdio");
        assert!(files.enabled && files.subagents);
        assert_eq!(files.startup_timeout_secs, 30);
        assert_eq!(files.tool_timeout_secs, 60);
        let remote = &section.servers["remote"];
        assert_eq!(remote.approval, ApprovalMode::Ask);
        assert!(!remote.subagents);
        assert_eq!(remote.tool_timeout_secs, 5);
    }

    #[test]
    fn contradictions_and_typos_are_refused() {
        let both = refusal("[servers.a]\ncommand = \"x\"\nurl = \"http://h\"\n");
        assert!(both.contains("not both"), "{both}");
        let none = refusal("[servers.a]\nenabled = true\n");
        assert!(none.contains("needs `command`"), "{none}");
        let typo = refusal("[servers.a]\ncommand = \"x\"\ncomand = \"y\"\n");
        assert!(typo.contains("comand"), "{typo}");
        let wrong = refusal("[servers.a]\ncommand = \"x\"\nheaders = { A = \"b\" }\n");
        assert!(wrong.contains("`headers` is for HTTP"), "{wrong}");
        let zero = refusal("[servers.a]\nurl = \"http://h\"\ntool_timeout_secs = 0\n");
        assert!(zero.contains("at least 1"), "{zero}");
        let scheme = refusal("[servers.a]\nurl = \"ftp://h\"\n");
        assert!(scheme.contains("http://"), "{scheme}");
    }

    #[test]
    fn tool_filters() {
        let mut config = ServerConfig::new(Transport::Http {
            url: "http://h".into(),
            headers: BTreeMap::new(),
            bearer_token_env: None,
        });
        assert!(config.allows_tool("a"));
        config.tools = Some(vec!["a".into(), "b".into()]);
        config.disabled_tools = vec!["b".into()];
        assert!(config.allows_tool("a"));
        assert!(!config.allows_tool("b"));
        assert!(!config.allows_tool("c"));
    }

    #[test]
    fn variables_expand() {
        let env = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        assert_eq!(expand_vars("Bearer ${TOKEN}", &env), "Bearer s3cret");
        assert_eq!(expand_vars("${MISSING}x", &env), "x");
        assert_eq!(expand_vars("plain ${open", &env), "plain ${open");
        assert_eq!(expand_vars("${TOKEN:-none}", &env), "s3cret");
        assert_eq!(expand_vars("${MISSING:-.}/server.js", &env), "./server.js");
        assert_eq!(expand_vars("$TOKEN ${}", &env), "$TOKEN ");
        assert_eq!(
            var_refs("${A} and ${B:-x:-y}"),
            [("A", None), ("B", Some("x:-y"))]
        );
    }
}
