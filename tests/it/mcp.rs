//! Tests of the MCP client: the fixture server (examples/mcp_fixture/main.rs) over stdio and
//! streamable HTTP through the real runtime, the policy on MCP tools, the binary's
//! trust flow and `mcp list` (the official reference servers: tests/it/interop).

mod binary;
mod content;
mod failures;
mod fixture;
mod http_headers;
mod images;
mod large_result;
mod next_turn;
mod policy;
pub mod processes;
mod schemas;
pub mod setup;
mod start_turns;
mod steering;
mod trust;
mod variables;
