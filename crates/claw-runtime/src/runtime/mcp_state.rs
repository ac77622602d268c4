//! What the UI, `get_state` and `claw-tui mcp list` see about each MCP server: plain
//! serialisable data, sent as [`crate::runtime::RuntimeEvent::McpServerUpdate`] on every
//! change. It lives beside the runtime's events; the MCP client (`crate::mcp`) fills it.

use serde::{Deserialize, Serialize};

/// Where a server's settings come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The user's config.toml.
    User,
    /// The workspace's `.mcp.json`.
    Project,
}

/// Where a server is in its life.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum McpServerState {
    /// `enabled = false`: never started.
    Disabled,
    /// A `.mcp.json` server the user has not trusted: not started.
    Untrusted,
    /// Connecting and listing its tools.
    Starting,
    /// Connected; its tools are offered.
    Ready,
    /// It could not be started; another try follows after `retry_in_secs`.
    Failed {
        /// Why.
        reason: String,
        /// Seconds until the next try.
        retry_in_secs: Option<u64>,
    },
    /// It stopped after being ready and is restarted after `retry_in_secs`.
    Restarting {
        /// Why it stopped.
        reason: String,
        /// Seconds until the restart.
        retry_in_secs: u64,
    },
    /// claw-tui is shutting down.
    Stopped,
}

/// One tool of a server as offered to the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpToolInfo {
    /// The registry name (`mcp__server__tool`).
    pub name: String,
    /// The server's own name for it.
    pub remote_name: String,
    /// Its description.
    pub description: String,
    /// About how many tokens its definition costs in every request (4 bytes a token).
    pub definition_tokens: u64,
}

/// Everything shown about one server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerInfo {
    /// Its configured name.
    pub name: String,
    /// config.toml or `.mcp.json`.
    pub origin: Origin,
    /// `stdio` or `http`.
    pub transport: String,
    /// Its state.
    pub state: McpServerState,
    /// `name version` as the server introduced itself, once connected.
    pub server_info: Option<String>,
    /// Its tools as offered (empty until ready); kept while it restarts.
    pub tools: Vec<McpToolInfo>,
}

impl McpServerInfo {
    /// The state in a few words: `starting`, `ready · 12 tools`, `failed: <reason>`,
    /// `restarting in 8 s: <reason>` (why it stopped stays in the listing).
    pub fn status_line(&self) -> String {
        match &self.state {
            McpServerState::Disabled => "disabled".to_owned(),
            McpServerState::Untrusted => "not trusted (from .mcp.json)".to_owned(),
            McpServerState::Starting => "starting".to_owned(),
            McpServerState::Ready => {
                let n = self.tools.len();
                format!("ready · {n} tool{}", if n == 1 { "" } else { "s" })
            }
            McpServerState::Failed {
                reason,
                retry_in_secs,
            } => match retry_in_secs {
                Some(secs) => format!("failed: {reason} (retry in {secs} s)"),
                None => format!("failed: {reason}"),
            },
            McpServerState::Restarting {
                reason,
                retry_in_secs,
            } => format!("restarting in {retry_in_secs} s: {reason}"),
            McpServerState::Stopped => "stopped".to_owned(),
        }
    }

    /// Tokens all its tool definitions cost per request.
    pub fn definition_tokens(&self) -> u64 {
        self.tools.iter().map(|t| t.definition_tokens).sum()
    }
}

/// About how many tokens `bytes` of JSON cost (providers' tokenisers average about four
/// bytes a token on schemas and English).
pub fn estimate_tokens(bytes: usize) -> u64 {
    u64::try_from(bytes.div_ceil(4)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(state: McpServerState, tools: usize) -> McpServerInfo {
        McpServerInfo {
            name: "s".into(),
            origin: Origin::User,
            transport: "stdio".into(),
            state,
            server_info: None,
            tools: (0..tools)
                .map(|i| McpToolInfo {
                    name: format!("mcp__s__t{i}"),
                    remote_name: format!("t{i}"),
                    description: String::new(),
                    definition_tokens: 10,
                })
                .collect(),
        }
    }

    #[test]
    fn status_lines() {
        assert_eq!(info(McpServerState::Starting, 0).status_line(), "starting");
        assert_eq!(
            info(McpServerState::Ready, 12).status_line(),
            "ready · 12 tools"
        );
        assert_eq!(
            info(McpServerState::Ready, 1).status_line(),
            "ready · 1 tool"
        );
        let failed = McpServerState::Failed {
            reason: "boom".into(),
            retry_in_secs: None,
        };
        assert_eq!(info(failed, 0).status_line(), "failed: boom");
        let restarting = McpServerState::Restarting {
            reason: "exit".into(),
            retry_in_secs: 8,
        };
        assert_eq!(info(restarting, 3).status_line(), "restarting in 8 s: exit");
        assert_eq!(info(McpServerState::Ready, 3).definition_tokens(), 30);
    }
}
