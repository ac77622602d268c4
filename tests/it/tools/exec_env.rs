#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Secrets in claw-tui's environment do not reach commands.
//!
//! This binary holds a single test because it changes the process environment, which is
//! only sound while no other thread reads it.

use crate::support::exec::*;
use claw_tui::tools::exec::{ExecConfig, ExecTool, SandboxMode, is_secret_env_name};
use serde_json::json;

const SECRETS: [&str; 6] = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "BRAVE_API_KEY",
    "FOO_API_KEY",
    "GITHUB_TOKEN",
    "my_service_token",
];

#[test]
fn secrets_are_removed_from_the_command_environment() {
    for name in SECRETS {
        assert!(is_secret_env_name(name), "{name}");
        // SAFETY: this binary's only test; no other thread touches the environment yet.
        unsafe { std::env::set_var(name, "secret-value") };
    }
    // SAFETY: as above.
    unsafe { std::env::set_var("CLAW_EXEC_KEEP", "kept-value") };
    assert!(!is_secret_env_name("CLAW_EXEC_KEEP"));
    assert!(!is_secret_env_name("TOKENIZERS_PARALLELISM"));

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let workspace = tempfile::tempdir().unwrap();
    for sandbox in [SandboxMode::WorkspaceWrite, SandboxMode::Off] {
        let tool = ExecTool::new(
            workspace.path(),
            ExecConfig {
                sandbox,
                ..config()
            },
        );
        let result = runtime.block_on(call(&tool, json!({"command": "env"})));
        assert!(!result.is_error, "{}", result.content);
        assert!(result.content.contains("CLAW_EXEC_KEEP=kept-value"));
        assert!(
            !result.content.contains("secret-value"),
            "{sandbox:?}: {}",
            result.content
        );
    }
}
