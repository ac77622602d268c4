//! The MCP client: the user's MCP servers (config.toml `[mcp.servers.NAME]` and the
//! workspace's `.mcp.json`) connected over stdio or streamable HTTP, their tools offered
//! to the agents through the same [`crate::tools::policy::ToolPolicy`] as the built-ins.
//!
//! - [`config`]: the settings and the project file; [`trust`]: what trusting a server
//!   covers (its whole entry and the files it runs).
//! - [`client`]: the only file that uses `rmcp` (with its stdio transport), behind the
//!   [`connection::McpConnection`] trait; `lines`: a stdio server's output as bounded
//!   lines, and the request a line that cannot be read answers; `progress`: each call's
//!   progress route.
//! - [`manager`] and `server`: start in the background, restart with backoff, follow
//!   `list_changed`; [`state`]: what the UI shows.
//! - [`process_group`]: a stdio server's processes, stopped together.
//! - [`call_result`]: a call's result as the server sent it, typed (its content parts an
//!   enum of the spec's kinds, with one for what this client cannot use); [`names`]:
//!   `mcp__SERVER__TOOL`, reduced to what providers accept; [`content`]: results as the
//!   model reads them.

mod access;
pub mod call_result;
pub mod client;
pub mod config;
pub mod connection;
pub mod content;
pub mod launch;
mod lines;
pub mod manager;
pub mod names;
pub mod process_group;
mod progress;
mod schema;
mod server;
mod tool;
pub mod trust;

pub use crate::runtime::mcp_state::{McpServerInfo, McpServerState, McpToolInfo};
pub use config::{McpSection, Origin, ServerConfig, ServerSpec, Transport};
pub use manager::{McpManager, ServerAccess};
pub use tool::McpTool;
