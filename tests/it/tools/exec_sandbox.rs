#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The Landlock sandbox of `exec`, through the real launcher binary.
//!
//! Which branch is asserted depends on the kernel, detected independently of the tool
//! with the raw Landlock syscall: with Landlock, writes outside the workspace and the
//! temp dir fail; without it, the command runs and the first result says so once.

use crate::support::exec::*;
use claw_tui::tools::exec::{ExecConfig, ExecTool, SANDBOX_SUBCOMMAND, SandboxMode};
use serde_json::json;
use std::path::PathBuf;

/// A directory outside both the temp dir and the workspace: under the target dir, or
/// (when the checkout itself lives in the temp dir) under /var/tmp or the home directory.
fn outside_dir() -> tempfile::TempDir {
    let temp = std::env::temp_dir().canonicalize().unwrap();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let candidates = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        Some(PathBuf::from("/var/tmp")),
        home,
    ];
    for base in candidates.into_iter().flatten() {
        let Ok(canonical) = base.canonicalize() else {
            continue;
        };
        if canonical.starts_with(&temp) {
            continue;
        }
        if let Ok(dir) = tempfile::tempdir_in(&base) {
            return dir;
        }
    }
    panic!("no writable directory outside the temp dir for this test");
}

#[tokio::test]
async fn writes_outside_the_workspace_are_blocked_when_landlock_exists() {
    let workspace = tempfile::tempdir().unwrap();
    let outside = outside_dir();
    let target = outside.path().join("escaped.txt");
    let tool = tool(workspace.path());
    let command = format!(
        "echo inside > inside.txt; echo temp > \"$(mktemp)\" && echo temp-ok; \
         echo quiet > /dev/null; echo loud > /dev/stderr; echo out > '{}'",
        target.display()
    );
    let first = call(&tool, json!({"command": command})).await;
    let second = call(&tool, json!({"command": "echo again"})).await;
    assert!(workspace.path().join("inside.txt").exists());
    assert!(first.content.starts_with("temp-ok\n"), "{}", first.content);
    assert!(
        first.content.contains("[stderr]\nloud\n"),
        "{}",
        first.content
    );
    if kernel_has_landlock() {
        eprintln!("this kernel supports Landlock: asserting that the write is blocked");
        assert!(!target.exists(), "the sandbox let a write escape");
        assert!(first.is_error);
        assert!(
            first.content.contains("Permission denied"),
            "{}",
            first.content
        );
        assert_eq!(first.details["sandboxed"], true);
        assert!(!first.content.contains("does not support Landlock"));
    } else {
        eprintln!("this kernel lacks Landlock: asserting the unsandboxed note");
        assert!(target.exists());
        assert!(!first.is_error, "{}", first.content);
        assert_eq!(first.details["sandboxed"], false);
        assert!(first.content.contains("does not support Landlock"));
        assert!(
            !second.content.contains("does not support Landlock"),
            "noted once"
        );
    }
    assert_eq!(second.content, "again\n[exit code: 0]");
}

#[tokio::test]
async fn sandbox_off_allows_writes_anywhere() {
    let workspace = tempfile::tempdir().unwrap();
    let outside = outside_dir();
    let target = outside.path().join("free.txt");
    let tool = ExecTool::new(
        workspace.path(),
        ExecConfig {
            sandbox: SandboxMode::Off,
            ..config()
        },
    );
    let result = call(
        &tool,
        json!({"command": format!("echo x > '{}'", target.display())}),
    )
    .await;
    assert!(!result.is_error, "{}", result.content);
    assert!(target.exists());
    assert_eq!(result.details["sandboxed"], false);
    assert!(!result.content.contains("Landlock"));
}

#[tokio::test]
async fn a_launcher_that_is_not_claw_tui_is_reported() {
    let workspace = tempfile::tempdir().unwrap();
    let echo = ExecTool::new(
        workspace.path(),
        ExecConfig {
            launcher: Some(PathBuf::from("/bin/echo")),
            ..ExecConfig::default()
        },
    );
    let result = call(&echo, json!({"command": "true"})).await;
    assert!(result.is_error);
    assert!(
        result.content.contains("did not report its status"),
        "{}",
        result.content
    );

    let missing = ExecTool::new(
        workspace.path(),
        ExecConfig {
            launcher: Some(PathBuf::from("/nonexistent/claw-tui")),
            ..ExecConfig::default()
        },
    );
    let result = call(&missing, json!({"command": "true"})).await;
    assert!(result.is_error);
    assert!(
        result
            .content
            .contains("starting /nonexistent/claw-tui failed"),
        "{}",
        result.content
    );
}

#[test]
fn the_launcher_rejects_bad_arguments_and_reports_exec_failures() {
    let launcher = env!("CARGO_BIN_EXE_claw-tui");
    let bad = std::process::Command::new(launcher)
        .args([SANDBOX_SUBCOMMAND, "--bogus"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(125));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("claw-sandbox:failed:unexpected launcher argument"),
        "{stderr}"
    );

    let dir = tempfile::tempdir().unwrap();
    let missing = std::process::Command::new(launcher)
        .args([SANDBOX_SUBCOMMAND, "--write"])
        .arg(dir.path())
        .args(["--", "/nonexistent/program"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(127));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("cannot run /nonexistent/program"),
        "{stderr}"
    );
}
