//! MCP test helpers: the fixture server (examples/mcp_fixture/main.rs) over stdio and HTTP,
//! the official reference servers installed by `.ci/run`, and waiting for a server's
//! state through the runtime's events.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::mcp::{McpServerInfo, McpServerState};
use claw_tui::runtime::RuntimeEvent;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub use super::mcp_fixture::fixture_bin;
use tokio::sync::mpsc::UnboundedReceiver;

/// Generous bound for MCP servers to start (node servers, restarts with backoff).
pub const MCP_DEADLINE: Duration = Duration::from_secs(60);

/// A `[mcp.servers.NAME]` table for the fixture over stdio, logging to `log`.
pub fn stdio_table(name: &str, log: &Path, extra: &str) -> String {
    format!(
        "[mcp.servers.{name}]\ncommand = {:?}\nargs = [\"--log\", {:?}]\n{extra}\n",
        fixture_bin().display().to_string(),
        log.display().to_string()
    )
}

/// A `[mcp.servers.NAME]` table for the fixture's raw `mode` (examples/mcp_fixture/raw.rs).
pub fn raw_table(name: &str, mode: &str, extra: &str) -> String {
    format!(
        "[mcp.servers.{name}]\ncommand = {:?}\nargs = [\"--raw\", {mode:?}]\n{extra}\n",
        fixture_bin().display().to_string()
    )
}

/// A `[mcp.servers.NAME]` table for an HTTP server at `url`.
pub fn http_table(name: &str, url: &str, extra: &str) -> String {
    format!("[mcp.servers.{name}]\nurl = {url:?}\n{extra}\n")
}

/// The fixture serving streamable HTTP on 127.0.0.1; killed when dropped.
pub struct HttpFixture {
    child: Child,
    pub url: String,
    pub addr: String,
}

impl HttpFixture {
    /// Starts it on a free port.
    pub fn start(log: &Path) -> Self {
        Self::start_at("127.0.0.1:0", log)
    }

    /// Starts it on `addr` (again, after a crash) and waits until it listens.
    pub fn start_at(addr: &str, log: &Path) -> Self {
        let mut child = Command::new(fixture_bin())
            .args(["--http", addr, "--log"])
            .arg(log)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("the fixture did not start: {line:?}"))
            .to_owned();
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        Self { child, url, addr }
    }

    /// Waits for the process to exit (after the `crash` tool).
    pub fn wait_exit(&mut self) {
        self.child.wait().unwrap();
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Lines the fixture logged so far.
pub fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Waits (polling the file, bounded by the deadline) until the fixture logged a line
/// containing `needle`.
pub async fn wait_for_log(log: &Path, needle: &str) -> Vec<String> {
    let what = format!("the fixture never logged {needle:?}");
    crate::support::poll::until_async(&what, MCP_DEADLINE, || {
        let lines = log_lines(log);
        lines.iter().any(|l| l.contains(needle)).then_some(lines)
    })
    .await
}

/// Waits until runtime events report server `name` in a state `pred` accepts.
pub async fn wait_for_server(
    events: &mut UnboundedReceiver<RuntimeEvent>,
    name: &str,
    pred: impl Fn(&McpServerInfo) -> bool,
) -> McpServerInfo {
    loop {
        let event = tokio::time::timeout(MCP_DEADLINE, events.recv())
            .await
            .unwrap_or_else(|_| panic!("MCP server {name} never reached the expected state"))
            .expect("runtime event channel closed");
        if let RuntimeEvent::McpServerUpdate { server } = event
            && server.name == name
        {
            if let McpServerState::Failed { reason, .. } = &server.state {
                eprintln!("server {name} failed once: {reason}");
            }
            if pred(&server) {
                return server;
            }
        }
    }
}

/// Whether the server is ready.
pub fn is_ready(server: &McpServerInfo) -> bool {
    server.state == McpServerState::Ready
}

/// The line of `claw-tui mcp list` output (`stdout`) about server `name`.
pub fn server_line(stdout: &str, name: &str) -> String {
    stdout
        .lines()
        .find(|l| l.starts_with(&format!("{name}  ")))
        .unwrap_or_else(|| panic!("no line for {name}: {stdout}"))
        .to_owned()
}
