#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The `exec` tool with real processes in temp workspaces: output, exit codes,
//! confinement, timeouts, output limits, truncation, deny rules and cancellation.
//! Processes are found by their exact arguments in /proc (`sleep MARKER`), since a
//! command's own pids (`$!`) belong to its pid namespace.

use crate::support::exec::*;
use claw_tui::agent::Tool;
use claw_tui::tools::exec::{ExecConfig, ExecTool, SandboxMode, truncate_middle};
use serde_json::json;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn reports_output_and_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path());

    let ok = call(&tool, json!({"command": "echo hello"})).await;
    assert_eq!(ok.content, "hello\n[exit code: 0]");
    assert!(!ok.is_error);
    assert_eq!(ok.details["exit_code"], 0);
    assert_eq!(ok.details["timed_out"], false);
    assert_eq!(ok.details["bytes_dropped"], 0);
    assert_eq!(ok.details["sandboxed"], kernel_has_landlock());

    let failed = call(&tool, json!({"command": "echo partial; exit 3"})).await;
    assert!(failed.is_error, "a non-zero exit is an error");
    assert_eq!(failed.content, "partial\n[exit code: 3]");
    assert_eq!(failed.details["exit_code"], 3);

    let silent = call(&tool, json!({"command": "true"})).await;
    assert_eq!(silent.content, "(no output)\n[exit code: 0]");

    let killed = call(&tool, json!({"command": "kill -9 $$"})).await;
    assert!(killed.is_error);
    assert_eq!(killed.details["signal"], 9);
    assert!(
        killed.content.contains("[terminated by signal 9]"),
        "{}",
        killed.content
    );
}

#[tokio::test]
async fn stderr_is_marked_after_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let result = call(
        &tool(dir.path()),
        json!({"command": "echo out; echo err >&2; printf 'no newline'"}),
    )
    .await;
    assert_eq!(
        result.content,
        "out\nno newline\n[stderr]\nerr\n[exit code: 0]"
    );
}

#[tokio::test]
async fn runs_in_the_workspace_and_confines_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("escape")).unwrap();
    let tool = tool(dir.path());

    let here = call(&tool, json!({"command": "pwd"})).await;
    assert_eq!(here.content, format!("{}\n[exit code: 0]", root.display()));
    let sub = call(&tool, json!({"command": "pwd", "cwd": "sub"})).await;
    assert_eq!(
        sub.content,
        format!("{}\n[exit code: 0]", root.join("sub").display())
    );
    let absolute = call(&tool, json!({"command": "pwd", "cwd": root.join("sub")})).await;
    assert!(!absolute.is_error, "{}", absolute.content);

    for cwd in [
        "..".to_owned(),
        "escape".to_owned(),
        "sub/../..".to_owned(),
        outside.path().display().to_string(),
    ] {
        let result = call(&tool, json!({"command": "touch marker", "cwd": cwd})).await;
        assert!(result.is_error, "cwd {cwd} must be refused");
        assert!(
            result.content.contains("outside the workspace"),
            "{}",
            result.content
        );
        assert_eq!(result.details["refused"], "cwd");
    }
    assert!(!outside.path().join("marker").exists());
    assert!(!root.parent().unwrap().join("marker").exists());

    let missing = call(&tool, json!({"command": "pwd", "cwd": "nope"})).await;
    assert!(missing.is_error);
    assert!(missing.content.contains("cwd \"nope\" cannot be used"));
}

#[tokio::test]
async fn timeout_kills_every_process_the_command_started() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path());
    let (escape, markers) = escapers();
    let child = marker();
    let command = format!("echo before; {escape} sleep {child} & wait");
    let all: Vec<String> = markers.iter().chain([&child]).cloned().collect();
    let (result, pids) = tokio::join!(
        call(&tool, json!({"command": command, "timeout": 2})),
        wait_for_sleepers(&all)
    );
    assert!(result.is_error);
    assert_eq!(result.details["timed_out"], true);
    assert_eq!(result.details["timeout_secs"], 2);
    assert!(result.content.starts_with("before\n"), "{}", result.content);
    assert!(
        result.content.contains("[Timed out after 2 s"),
        "{}",
        result.content
    );
    assert_all_exit(&pids, "after the timeout").await;
}

#[tokio::test]
async fn timeout_is_capped_at_the_configured_maximum() {
    let dir = tempfile::tempdir().unwrap();
    let tool = ExecTool::new(
        dir.path(),
        ExecConfig {
            max_timeout_secs: 1,
            ..config()
        },
    );
    let result = call(&tool, json!({"command": "sleep 100", "timeout": 500})).await;
    assert_eq!(result.details["timed_out"], true);
    assert_eq!(result.details["timeout_secs"], 1);
    assert!(
        result.content.contains("capped at 1 s"),
        "{}",
        result.content
    );

    let float = call(&tool, json!({"command": "echo ok", "timeout": 1.0})).await;
    assert_eq!(float.details["timeout_secs"], 1);
    assert!(!float.is_error, "{}", float.content);

    let zero = call(&tool, json!({"command": "true", "timeout": 0})).await;
    assert!(zero.is_error);
    assert!(
        zero.content
            .contains("/timeout: Argument \"timeout\" must be at least 1, got 0."),
        "{}",
        zero.content
    );
}

#[tokio::test]
async fn background_processes_run_until_the_time_limit_and_not_longer() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path());
    let held = marker();
    let quiet = marker();
    let command = format!("sleep {held} & setsid sleep {quiet} > /dev/null 2>&1 & echo started");
    let result = call(&tool, json!({"command": command, "timeout": 8})).await;
    // The command exited on its own: the call returns while its background processes run.
    let pids = wait_for_sleepers(&[held, quiet]).await;
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(result.details["background_left"], true);
    assert_eq!(result.details["timed_out"], false);
    assert!(
        result.content.contains(
            "started\n[exit code: 0]\n[The command exited; the processes it left in the \
             background keep running until its time limit (8 s) passes, then they are killed. \
             They still hold its output pipes"
        ),
        "{}",
        result.content
    );
    assert_all_exit(&pids, "after the time limit").await;
}

#[tokio::test]
async fn output_over_the_cap_is_drained_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let result = call(
        &tool(dir.path()),
        json!({"command": "head -c 5000000 /dev/zero | tr '\\0' a; echo done >&2"}),
    )
    .await;
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(result.details["exit_code"], 0);
    let kept = 2 * 1024 * 1024 / 2;
    assert_eq!(result.details["bytes_dropped"], 5_000_000 - kept);
    assert!(
        result.content.contains(&format!(
            "[{} bytes of output were dropped",
            5_000_000 - kept
        )),
        "{}",
        &result.content[result.content.len() - 400..]
    );
    assert!(result.content.contains("\n--- truncated ("));
    // The end of the output survives both the capture limit and the truncation.
    assert!(
        result
            .content
            .contains("aaaa\n[stderr]\ndone\n[exit code: 0]")
    );
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_without_splitting_characters() {
    let dir = tempfile::tempdir().unwrap();
    let result = call(
        &tool(dir.path()),
        json!({"command": "printf 'H'; yes é | head -n 12000 | tr -d '\\n'; printf 'T'"}),
    )
    .await;
    let expected_head = format!("H{}", "é".repeat(4999));
    let expected_tail = format!("{}T", "é".repeat(4999));
    assert_eq!(
        result.content,
        format!(
            "{expected_head}\n--- truncated (12002 chars total) ---\n{expected_tail}\n[exit code: 0]"
        )
    );
}

#[test]
fn truncate_middle_counts_characters() {
    let text = format!("{}{}", "ab".repeat(10), "日本".repeat(10));
    assert_eq!(truncate_middle(&text, 40, 3, 3), text);
    assert_eq!(
        truncate_middle(&text, 39, 3, 3),
        "aba\n--- truncated (40 chars total) ---\n本日本"
    );
    assert_eq!(
        truncate_middle("🦀🦀🦀", 2, 1, 0),
        "🦀\n--- truncated (3 chars total) ---\n"
    );
}

#[tokio::test]
async fn deny_rules_refuse_through_wrappers_and_chains() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path());
    // `exit 0` stops the shell before the dangerous part, should a rule ever fail to match.
    let cases = [
        ("rm -rf /", "rm-root"),
        ("true && sudo rm -rf ~", "rm-root"),
        ("false || env FOO=1 rm -fr $HOME", "rm-root"),
        ("echo | bash -c 'ls; rm -rf /*'", "rm-root"),
        ("sh -c \"bash -c 'mkfs.ext4 /dev/sdb1'\"", "mkfs"),
        ("sudo -u root dd if=/dev/zero of=disk.img", "dd"),
        (":(){ :|:& };:", "fork-bomb"),
        ("cat x > /dev/sda", "raw-disk-write"),
        ("chmod -R 777 /", "chmod-root"),
        ("sudo shutdown -h now", "shutdown"),
        ("env reboot", "shutdown"),
        ("echo $(reboot)", "shutdown"),
    ];
    for (dangerous, rule) in cases {
        let command = format!("touch marker; exit 0; {dangerous}");
        let result = call(&tool, json!({"command": command})).await;
        assert!(result.is_error, "{command}");
        assert!(
            result
                .content
                .starts_with(&format!("Refused by the exec deny rule `{rule}`")),
            "{command}: {}",
            result.content
        );
        assert_eq!(result.details["refused"], rule, "{command}");
        assert!(
            !dir.path().join("marker").exists(),
            "{command}: nothing may run"
        );
    }

    let harmless = call(
        &tool,
        json!({"command": "mkdir -p build/x && rm -rf ./build && test ! -e build && echo clean"}),
    )
    .await;
    assert_eq!(harmless.content, "clean\n[exit code: 0]");
}

#[tokio::test]
async fn cancellation_kills_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path());
    let (updates, mut rx) = updates();
    let cancel = CancellationToken::new();
    let (escape, markers) = escapers();
    let call = tool.execute(
        "call",
        crate::support::checked(
            &tool,
            json!({"command": format!("{escape} echo started; wait; sleep 600"), "timeout": 600}),
        ),
        cancel.clone(),
        updates,
    );
    let canceller = async {
        let first = tokio::time::timeout(DEADLINE, rx.recv())
            .await
            .expect("no update arrived")
            .unwrap();
        assert_eq!(first["stdout"], "started\n");
        let pids = wait_for_sleepers(&markers).await;
        cancel.cancel();
        (pids, Instant::now())
    };
    let (result, (pids, cancelled_at)) =
        tokio::time::timeout(DEADLINE, async { tokio::join!(call, canceller) })
            .await
            .expect("exec did not stop after cancellation");
    assert!(
        cancelled_at.elapsed().as_secs() < 3,
        "took {:?}",
        cancelled_at.elapsed()
    );
    assert!(result.is_error);
    assert_eq!(result.details["cancelled"], true);
    assert!(result.content.contains("[Cancelled by the user"));
    assert_all_exit(&pids, "after cancellation").await;
}

#[tokio::test]
async fn an_abandoned_call_leaves_nothing_running() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path());
    let (escape, markers) = escapers();
    let command = format!("{escape} sleep 600");
    let pids = {
        let call = tool.execute(
            "call",
            crate::support::checked(&tool, json!({"command": command, "timeout": 600})),
            CancellationToken::new(),
            claw_tui::agent::ToolUpdates::discard(),
        );
        tokio::select! {
            _ = call => panic!("the call ended on its own"),
            pids = wait_for_sleepers(&markers) => pids,
        }
        // The call's future is dropped here, as when a run is torn down.
    };
    assert_all_exit(&pids, "after the call was dropped").await;
}

#[tokio::test]
async fn updates_stream_batched_lines() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path());
    let (updates, mut rx) = updates();
    let script = "i=0; while [ $i -lt 60 ]; do echo line $i; i=$((i+1)); sleep 0.01; done; \
                  echo warn >&2";
    let result = tool
        .execute(
            "call",
            crate::support::checked(&tool, json!({"command": script})),
            CancellationToken::new(),
            updates,
        )
        .await;
    drop(tool);
    let mut partials = Vec::new();
    while let Ok(partial) = rx.try_recv() {
        partials.push(partial);
    }
    assert!(
        partials.len() >= 2,
        "expected several updates: {partials:?}"
    );
    let duration_ms = result.details["duration_ms"].as_u64().unwrap();
    assert!(
        partials.len() as u64 <= duration_ms / 50 + 1,
        "{} updates in {duration_ms} ms: more than 20 per second",
        partials.len()
    );
    let streamed: String = partials
        .iter()
        .filter_map(|p| p["stdout"].as_str())
        .collect();
    assert!(streamed.ends_with('\n'), "only whole lines are streamed");
    let full: String = (0..60).map(|i| format!("line {i}\n")).collect();
    assert!(full.starts_with(&streamed), "{streamed}");
    assert!(partials.iter().all(|p| {
        p.as_object()
            .unwrap()
            .keys()
            .all(|k| k == "stdout" || k == "stderr")
    }));
}

#[tokio::test]
async fn sandbox_off_still_contains_the_processes() {
    let dir = tempfile::tempdir().unwrap();
    let tool = ExecTool::new(
        dir.path(),
        ExecConfig {
            sandbox: SandboxMode::Off,
            ..config()
        },
    );
    let plain = call(&tool, json!({"command": "echo direct"})).await;
    assert_eq!(plain.content, "direct\n[exit code: 0]");
    assert_eq!(plain.details["sandboxed"], false);
    assert_eq!(plain.details["containment"], "subreaper");

    let (escape, markers) = escapers();
    let (result, pids) = tokio::join!(
        call(
            &tool,
            json!({"command": format!("{escape} wait"), "timeout": 2})
        ),
        wait_for_sleepers(&markers)
    );
    assert_eq!(result.details["timed_out"], true);
    assert_all_exit(&pids, "sandbox off, after the timeout").await;

    // The launcher is needed even without a sandbox: it is what contains the processes.
    let missing = ExecTool::new(
        dir.path(),
        ExecConfig {
            sandbox: SandboxMode::Off,
            launcher: Some("/nonexistent/launcher".into()),
            ..ExecConfig::default()
        },
    );
    let result = call(&missing, json!({"command": "echo direct"})).await;
    assert!(result.is_error);
    assert!(
        result
            .content
            .contains("starting /nonexistent/launcher failed"),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn bad_arguments_are_errors_the_model_can_fix() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path());
    let missing = call(&tool, json!({})).await;
    assert!(missing.is_error);
    assert!(
        missing
            .content
            .contains("Missing required argument \"command\"")
    );
    let blank = call(&tool, json!({"command": "  "})).await;
    assert!(blank.is_error);
    let gone = ExecTool::new(dir.path().join("missing"), config());
    let result = call(&gone, json!({"command": "true"})).await;
    assert!(result.is_error);
    assert!(
        result.content.contains("cannot be opened"),
        "{}",
        result.content
    );
}
