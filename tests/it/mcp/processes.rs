//! A stdio server's processes end with it: one that never finishes the handshake is
//! stopped with everything it started when its start-up time runs out, and at shutdown.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::exec::{exits, process_alive};
use crate::support::mcp::{MCP_DEADLINE, wait_for_server};
use crate::support::runtime::settings;
use crate::support::{Reply, ScriptedProvider};
use claw_tui::mcp::McpServerState;
use claw_tui::setup::start_runtime_with;
use claw_tui::tools::exec::Approver;
use claw_tui::tools::message::MessageSender;
use std::path::Path;
use std::sync::Arc;

/// A server that starts a child of its own (as `npx` starts `node`), writes the child's
/// pid to `pid_file` and never answers the handshake.
pub fn hung_table(name: &str, pid_file: &Path, extra: &str) -> String {
    let script = format!("sleep 600 & echo $! > '{}'; wait", pid_file.display());
    format!("[mcp.servers.{name}]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\n{extra}\n")
}

/// Waits (bounded) until the hung server wrote its child's pid.
pub async fn child_pid(pid_file: &Path) -> u32 {
    crate::support::poll::until_async("the server never started its child", MCP_DEADLINE, || {
        std::fs::read_to_string(pid_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_answers_is_stopped_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let timed_out = dir.path().join("timed-out.pid");
    let at_shutdown = dir.path().join("at-shutdown.pid");
    let tables = format!(
        "{}{}",
        hung_table("hung", &timed_out, "startup_timeout_secs = 1"),
        hung_table("stuck", &at_shutdown, "startup_timeout_secs = 600"),
    );
    let (_home, settings) = settings(&tables);
    let outbound: MessageSender = Arc::new(|_| {});
    let provider = ScriptedProvider::new(vec![Reply::text(&["unused"])]);
    let mut main = start_runtime_with(&settings, provider, outbound, Approver::Nobody).unwrap();

    let child = child_pid(&timed_out).await;
    let failed = wait_for_server(&mut main.events, "hung", |s| {
        matches!(s.state, McpServerState::Failed { .. })
    })
    .await;
    let McpServerState::Failed { reason, .. } = &failed.state else {
        unreachable!()
    };
    assert!(reason.contains("not ready within 1 s"), "{reason}");
    assert!(
        exits(child).await,
        "the child of the timed-out server {child} still runs"
    );

    let stuck_child = child_pid(&at_shutdown).await;
    assert!(process_alive(stuck_child), "still starting: its child runs");
    main.supervisor.stop().await;
    main.mcp.shutdown().await;
    assert!(
        exits(stuck_child).await,
        "the child of the server still starting at shutdown {stuck_child} still runs"
    );
}
