#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The Landlock sandbox of `exec`, through the real launcher binary.
//!
//! Which branch is asserted depends on the kernel, detected independently of the tool
//! with the raw Landlock syscall: with Landlock, writes outside the workspace, the
//! private temp dir and `writable_paths` fail, signals stay inside (ABI 6) and TCP can
//! be refused (ABI 4); without a feature, the result says so.

use crate::support::exec::*;
use claw_tui::tools::exec::{ExecConfig, ExecTool, NetworkMode, SANDBOX_SUBCOMMAND, SandboxMode};
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
        stderr.contains(
            r#"[claw-sandbox] {"report":"failed","reason":"unexpected launcher argument"#
        ),
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

#[tokio::test]
async fn writes_stay_in_the_workspace_the_private_tmpdir_and_writable_paths() {
    let workspace = tempfile::tempdir().unwrap();
    let listed = outside_dir();
    let unlisted = outside_dir();
    let name = format!("claw-escape-{}", marker());
    let in_tmp = std::env::temp_dir().join(&name);
    let in_shm = std::path::Path::new("/dev/shm").join(&name);
    let tool = ExecTool::new(
        workspace.path(),
        ExecConfig {
            writable_paths: vec![listed.path().to_path_buf()],
            ..config()
        },
    );
    let command = format!(
        "echo t > \"$TMPDIR/t\" && echo tmpdir-ok; echo $TMPDIR; stat -c %a \"$TMPDIR\"; \
         echo n > /dev/null && echo null-ok; echo ws > ws.txt; \
         echo l > '{listed}/listed'; echo u > '{unlisted}/unlisted'; \
         echo x > '{tmp}'; echo x > '{shm}'; true",
        listed = listed.path().display(),
        unlisted = unlisted.path().display(),
        tmp = in_tmp.display(),
        shm = in_shm.display(),
    );
    let result = call(&tool, json!({ "command": command })).await;
    let lines: Vec<&str> = result.content.lines().collect();
    assert_eq!(lines[0], "tmpdir-ok", "{}", result.content);
    let tmpdir = std::path::PathBuf::from(lines[1]);
    let temp = std::env::temp_dir().canonicalize().unwrap();
    assert!(
        tmpdir.starts_with(&temp)
            && tmpdir
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("claw-tui-{}-", std::process::id())),
        "{}",
        tmpdir.display()
    );
    assert_eq!(lines[2], "700", "the private temp dir is 0700");
    if had_mounts(&result) {
        // A tmpfs of the command's own: nothing it leaves there outlives it.
        assert!(!tmpdir.join("t").exists());
    } else {
        assert!(tmpdir.join("t").exists());
    }
    assert_eq!(lines[3], "null-ok");
    assert!(workspace.path().join("ws.txt").exists());
    assert!(listed.path().join("listed").exists(), "{}", result.content);
    let escaped = [
        unlisted.path().join("unlisted"),
        in_tmp.clone(),
        in_shm.clone(),
    ];
    if kernel_has_landlock() {
        eprintln!("this kernel supports Landlock: asserting that only the allowed writes land");
        for path in &escaped {
            assert!(!path.exists(), "{} was written", path.display());
        }
        assert_eq!(
            result.content.matches("Permission denied").count(),
            3,
            "{}",
            result.content
        );
    } else {
        eprintln!("this kernel lacks Landlock: the writes land and the result says so");
        assert!(result.content.contains("does not support Landlock"));
        for path in &escaped {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[tokio::test]
async fn kill_minus_one_spares_everything_outside_the_command() {
    let workspace = tempfile::tempdir().unwrap();
    let abi = landlock_abi();
    for pid_namespace in [true, false] {
        let sibling_marker = marker();
        let mut sibling = std::process::Command::new("sleep")
            .arg(&sibling_marker)
            .spawn()
            .unwrap();
        let tool = ExecTool::new(
            workspace.path(),
            ExecConfig {
                pid_namespace,
                ..config()
            },
        );
        let probe = call(
            &tool,
            json!({"command": format!("kill -0 {} && echo SIGNALLED", sibling.id())}),
        )
        .await;
        let containment = probe.details["containment"].clone();
        let isolated = containment == "pid-namespace";
        if !isolated && abi < 6 {
            // As root, an unscoped `kill -9 -1` would kill every process on the machine.
            eprintln!(
                "pid_namespace = {pid_namespace}: no pid namespace and Landlock ABI {abi}                  (< 6) cannot scope signals, so `kill -9 -1` is not refused here; checking                  only that the result says so"
            );
            assert!(
                probe
                    .content
                    .contains("signals to processes outside the command are not")
            );
            sibling.kill().unwrap();
            let _ = sibling.wait();
            continue;
        }
        eprintln!("pid_namespace = {pid_namespace}: containment {containment}, Landlock ABI {abi}");
        assert!(!probe.content.contains("SIGNALLED"), "{}", probe.content);
        let result = call(
            &tool,
            json!({"command": "sleep 100 & kill -9 -1; echo after"}),
        )
        .await;
        assert!(result.content.starts_with("after\n"), "{}", result.content);
        assert!(
            process_alive(sibling.id()),
            "kill -9 -1 killed a process outside the command"
        );
        assert!(process_alive(std::process::id()));
        sibling.kill().unwrap();
        let _ = sibling.wait();
    }
}

#[tokio::test]
async fn network_deny_refuses_tcp_and_allow_permits_it() {
    // bash's /dev/tcp makes the connection; bash is one of the base tools the tests need.
    let workspace = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' && echo connected");
    for network in [NetworkMode::Deny, NetworkMode::Allow] {
        let tool = ExecTool::new(
            workspace.path(),
            ExecConfig {
                network,
                ..config()
            },
        );
        let result = call(&tool, json!({ "command": command })).await;
        let accepted = listener.accept().is_ok();
        let netns = result.details["containment_report"]["network_namespace"] == true;
        let enforced = network == NetworkMode::Deny && (netns || landlock_abi() >= 4);
        if enforced {
            eprintln!(
                "network = deny (network namespace {netns}, Landlock ABI {}): refused",
                landlock_abi()
            );
            assert!(!result.content.contains("connected"), "{}", result.content);
            // Refused by Landlock, or nobody listening on the command's own loopback.
            let refused = ["Permission denied", "Connection refused"]
                .iter()
                .any(|why| result.content.contains(why));
            assert!(refused, "{}", result.content);
            assert!(!accepted, "the listener got a connection");
        } else {
            if network == NetworkMode::Deny {
                eprintln!(
                    "network = deny, but Landlock ABI {} (< 4) cannot restrict TCP:                      checking that the result says so",
                    landlock_abi()
                );
                assert!(
                    result.content.contains("is not enforced"),
                    "{}",
                    result.content
                );
            }
            assert!(
                result.content.starts_with("connected"),
                "{}",
                result.content
            );
            assert!(accepted, "the listener got no connection");
        }
    }
}
