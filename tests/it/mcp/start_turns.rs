//! Many servers started together take turns (one per core, two at least), and each
//! one's `startup_timeout_secs` counts from its turn: servers that each need most of
//! their timeout all come up, and never more of them start at once than the turns
//! allow (the fixtures' shared log: `start PID` when spawned, `up PID` when ready to
//! answer).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::binary::config;
use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::text_reply;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::mcp::{fixture_bin, log_lines};

#[tokio::test(flavor = "multi_thread")]
async fn servers_started_together_take_turns_and_all_come_up() {
    let turns = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let count = turns * 2 + 1;
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["Hi."]))]).await;
    let sb = Sandbox::new();
    let log = sb.dir.path().join("servers.log");
    let tables: String = (0..count)
        .map(|i| {
            format!(
                "[mcp.servers.s{i}]\ncommand = {:?}\nargs = [\"--log\", {:?}, \"--start-delay-ms\", \"1200\"]\n\
                 startup_timeout_secs = 2\n",
                fixture_bin().display().to_string(),
                log.display().to_string()
            )
        })
        .collect();
    sb.write_config(&config(&server, &tables));
    let mut cmd = sb.command();
    cmd.args(["--require-mcp", "-p", "hello"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "every server came up: {stderr}");
    let offered = server.requests()[0].tools_offered();
    for i in 0..count {
        assert!(
            offered.contains(&format!("mcp__s{i}__echo")),
            "s{i} missing: {offered:?}"
        );
    }
    let mut starting = 0usize;
    let mut most = 0usize;
    for line in log_lines(&log) {
        if line.starts_with("start ") {
            starting += 1;
        } else if line.starts_with("up ") {
            starting = starting.saturating_sub(1);
        }
        most = most.max(starting);
    }
    assert!(
        most <= turns,
        "{most} servers were starting at once (turns: {turns})"
    );
}
