//! `${VAR}` and `${VAR:-default}` in a server's command, arguments, env, URL and
//! headers, as Claude Code fills them: `CLAUDE_PROJECT_DIR` is the workspace for every
//! file; a project's `.mcp.json` gets only the variables `[mcp] project_env` allows (a
//! default stands in for the others), through the real binary and the fixture server's
//! own log (where it was told to write is what it was given).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::binary::config;
use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::text_reply;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::mcp::{fixture_bin, log_lines};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_project_server_gets_the_workspace_and_defaults_never_a_variable_not_allowed() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["Hi."]))]).await;
    let sb = Sandbox::new();
    sb.write_config(&config(&server, "[mcp]\nproject_env = [\"LOG_STEM\"]\n"));
    let project = json!({"mcpServers": {"proj": {
        "command": fixture_bin(),
        "args": ["--log", "${CLAUDE_PROJECT_DIR:-.}/${SECRET_STEM:-fallback}-${LOG_STEM}.log"],
    }}});
    std::fs::write(sb.workspace().join(".mcp.json"), project.to_string()).unwrap();
    let mut cmd = sb.command();
    cmd.args(["--trust-project-mcp", "-p", "hello"])
        .env("SECRET_STEM", "leaked")
        .env("LOG_STEM", "allowed");
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    let ws = sb.workspace().canonicalize().unwrap();
    let log = ws.join("fallback-allowed.log");
    assert!(
        log_lines(&log).iter().any(|l| l.starts_with("start")),
        "no log at {}; the workspace holds {:?}; stderr: {stderr}",
        log.display(),
        std::fs::read_dir(&ws)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect::<Vec<_>>()
    );
    assert!(!ws.join("leaked-allowed.log").exists());
    assert!(
        server.requests()[0]
            .tools_offered()
            .contains(&"mcp__proj__pid".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_users_server_gets_its_environment_and_the_workspace() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["Hi."]))]).await;
    let sb = Sandbox::new();
    let table = format!(
        "[mcp.servers.mine]\ncommand = \"${{FIXTURE_DIR}}/{}\"\nargs = [\"--log\", \"${{CLAUDE_PROJECT_DIR}}/${{STEM:-mine}}.log\"]\n",
        fixture_bin().file_name().unwrap().to_string_lossy()
    );
    sb.write_config(&config(&server, &table));
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]).env(
        "FIXTURE_DIR",
        fixture_bin().parent().unwrap().display().to_string(),
    );
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    let log = sb.workspace().canonicalize().unwrap().join("mine.log");
    assert!(
        log_lines(&log).iter().any(|l| l.starts_with("start")),
        "{stderr}"
    );
}
