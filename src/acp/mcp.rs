//! The MCP servers a client passes with a session, added to the user's own: they are
//! the client's responsibility, so they start like the servers of config.toml (no trust
//! question), under the same names rules and the same policy (their tools go through
//! the same pipeline, plan mode included). The workspace's `.mcp.json` still needs the
//! user's trust, as in every other mode.

use crate::config::Settings;
use crate::mcp::config::{ServerConfig, Transport, check_server_name};
use agent_client_protocol::v1::schema::McpServer;
use std::collections::BTreeMap;

/// Adds `servers` to `settings`' servers; returns a warning for each one not added (a
/// name providers would not accept in a tool name, one the user's config already
/// uses, a transport claw-tui does not speak).
pub fn add_client_servers(settings: &mut Settings, servers: Vec<McpServer>) -> Vec<String> {
    let mut warnings = Vec::new();
    for server in servers {
        let (name, transport) = match server {
            McpServer::Stdio(stdio) => (
                stdio.name,
                Transport::Stdio {
                    command: stdio.command.display().to_string(),
                    args: stdio.args,
                    env: stdio
                        .env
                        .into_iter()
                        .map(|v| (v.name, v.value))
                        .collect::<BTreeMap<_, _>>(),
                    cwd: None,
                },
            ),
            McpServer::Http(http) => {
                if !(http.url.starts_with("http://") || http.url.starts_with("https://")) {
                    warnings.push(format!(
                        "the client's MCP server \"{}\" was not started: its url must start \
                         with http:// or https:// (got \"{}\")",
                        http.name, http.url
                    ));
                    continue;
                }
                (
                    http.name,
                    Transport::Http {
                        url: http.url,
                        headers: http
                            .headers
                            .into_iter()
                            .map(|h| (h.name, h.value))
                            .collect(),
                        bearer_token_env: None,
                    },
                )
            }
            McpServer::Sse(sse) => {
                warnings.push(format!(
                    "the client's MCP server \"{}\" was not started: the legacy SSE transport \
                     is not supported (claw-tui speaks stdio and streamable HTTP)",
                    sse.name
                ));
                continue;
            }
            _ => {
                warnings.push(
                    "a client's MCP server of a transport claw-tui does not know was not started"
                        .to_owned(),
                );
                continue;
            }
        };
        if let Err(e) = check_server_name(&name) {
            warnings.push(format!("the client's MCP server was not started: {e}"));
            continue;
        }
        if settings.file.mcp.servers.contains_key(&name) {
            warnings.push(format!(
                "the client's MCP server \"{name}\" has the name of a server in {}; that one \
                 is used",
                settings.config_path.display()
            ));
            continue;
        }
        settings
            .file
            .mcp
            .servers
            .insert(name, ServerConfig::new(transport));
    }
    warnings
}
