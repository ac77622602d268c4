//! One MCP server tool as an ordinary [`Tool`]: the policy wraps it like any built-in,
//! and each call goes to the server's current connection.

use super::client::{CallError, Progress, ProgressFn};
use super::content::to_tool_result;
use super::server::Server;
use crate::agent::{CheckedArgs, Tool, ToolResult, ToolSpec, ToolUpdates};
use crate::tools::large_results::{LargeResults, cap_result};
use async_trait::async_trait;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A server's tool under its registry name.
pub struct McpTool {
    pub(super) server: Arc<Server>,
    /// Its registry name, label (the server's name for it), description, the server's
    /// schema (lenient: the server checks what our validator cannot compile) and
    /// whether the server marks it read-only.
    pub(super) spec: ToolSpec,
    pub(super) remote_name: String,
    /// Where the whole text of a result too large for the model is kept.
    pub(super) large_results: Option<Arc<LargeResults>>,
}

impl McpTool {
    fn timeout(&self) -> Duration {
        Duration::from_secs(self.server.spec.config.tool_timeout_secs)
    }
}

/// Progress notifications as `tool_execution_update` partials.
fn progress_updates(updates: ToolUpdates) -> ProgressFn {
    Arc::new(move |p: Progress| {
        let mut partial = json!({"progress": p.progress});
        if let Some(total) = p.total {
            partial["total"] = json!(total);
        }
        if let Some(message) = p.message {
            partial["message"] = json!(message);
        }
        updates.send(partial);
    })
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        _call_id: &str,
        args: CheckedArgs,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> ToolResult {
        let server = &self.server.spec.name;
        let connection = match self.server.connection() {
            Ok(connection) => connection,
            Err(not_connected) => {
                let state = not_connected.to_string();
                return ToolResult::error(format!(
                    "MCP server \"{server}\" is not connected ({state}); the tool \
                     {} cannot run now. Try again later or do without it.",
                    self.remote_name
                ));
            }
        };
        let outcome = connection
            .call_tool(
                &self.remote_name,
                args.into_value(),
                Some(progress_updates(updates)),
                &cancel,
                self.timeout(),
            )
            .await;
        match outcome {
            Ok(result) => {
                // Decoding images and keeping a large result touch the disk and the CPU.
                let (server, tool) = (server.clone(), self.remote_name.clone());
                let store = self.large_results.clone();
                tokio::task::spawn_blocking(move || {
                    let converted = to_tool_result(&result, &server, &tool);
                    drop(result);
                    cap_result(converted, store.as_deref(), &format!("{server}-{tool}"))
                })
                .await
                .unwrap_or_else(|e| {
                    ToolResult::error(format!(
                        "MCP server \"{}\": its result could not be read ({e}).",
                        self.server.spec.name
                    ))
                })
            }
            Err(CallError::Cancelled) => ToolResult::error(format!(
                "Aborted: the call to {} was cancelled and MCP server \"{server}\" was told \
                 to stop it.",
                self.remote_name
            )),
            Err(CallError::TimedOut(limit)) => ToolResult::error(format!(
                "MCP server \"{server}\" did not answer the call to {} within {} s \
                 (tool_timeout_secs); the call was cancelled.",
                self.remote_name,
                limit.as_secs()
            )),
            Err(CallError::Closed(reason)) => {
                // The watcher restarts it; this call is lost and its effect unknown.
                self.server.connection_lost(&connection);
                ToolResult::error(format!(
                    "MCP server \"{server}\" stopped during the call to {} ({reason}). \
                     Whether the call had an effect is unknown; claw-tui restarts the \
                     server.",
                    self.remote_name
                ))
            }
            Err(CallError::Unreadable(reason)) => ToolResult::error(format!(
                "MCP server \"{server}\" answered the call to {}, but its reply could not be \
                 read: {reason}. The call may have had its effect; its result is lost.",
                self.remote_name
            )),
            Err(CallError::Server(message)) => ToolResult::error(format!(
                "MCP server \"{server}\" refused the call to {}: {message}",
                self.remote_name
            )),
        }
    }
}
