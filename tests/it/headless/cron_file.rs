//! A corrupt `jobs.json` through the real binary: `-p` says so on stderr and the model's
//! `cron` call gets the reason (not `Tool "cron" not found`); `--mode rpc` prints a
//! `cron_status` event, and another when the file is fixed, after which jobs fire again.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run};
use crate::support::rpc::{Rpc, is_notification};
use std::path::PathBuf;
use std::sync::Arc;

fn jobs_path(sandbox: &Sandbox) -> PathBuf {
    sandbox.cron_dir().join("jobs.json")
}

fn corrupt(sandbox: &Sandbox) -> PathBuf {
    let path = jobs_path(sandbox);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{\"version\": 1, \"jobs\": [{\"id\": ").unwrap();
    path
}

#[test]
fn print_mode_reports_a_corrupt_jobs_file_and_the_tool_says_why() {
    let sandbox = Sandbox::new();
    let path = corrupt(&sandbox);
    let mut cmd = sandbox.command();
    cmd.args([
        "--provider",
        "demo",
        "-p",
        "every 5 seconds check the build",
    ]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let warning = stderr
        .lines()
        .find(|l| l.starts_with("claw-tui: warning: Cron jobs are stopped:"))
        .unwrap_or_else(|| panic!("no warning on stderr: {stderr}"));
    assert!(
        warning.contains(path.to_str().unwrap()) && warning.contains("not a valid cron jobs file"),
        "{warning}"
    );
    // The tool ran and failed with the reason; the model quoted it.
    assert!(stderr.contains("✗ cron"), "{stderr}");
    assert!(!stdout.contains("not found"), "{stdout}");
    assert!(stdout.contains("not a valid cron jobs file"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"version\": 1, \"jobs\": [{\"id\": "
    );
}

#[test]
fn rpc_reports_a_corrupt_jobs_file_and_its_repair() {
    let sandbox = Arc::new(Sandbox::new());
    let path = corrupt(&sandbox);
    let mut rpc = Rpc::start_in(sandbox.clone(), 0, &["--provider", "demo"]);
    let lines = rpc.until(|l| l["type"] == "cron_status");
    let status = lines.last().unwrap();
    assert_eq!(status["ok"], false, "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains(path.to_str().unwrap()),
        "{status}"
    );

    rpc.send(r#"{"type":"prompt","content":"every 1 seconds check the build"}"#);
    let lines = rpc.until(|l| l["type"] == "tool_execution_end");
    let end = lines.last().unwrap();
    assert_eq!(
        (end["tool_name"].as_str(), end["is_error"].as_bool()),
        (Some("cron"), Some(true))
    );
    assert!(
        end["result"]["content"]
            .as_str()
            .unwrap()
            .contains("not a valid cron jobs file"),
        "{end}"
    );
    rpc.until(|l| l["type"] == "agent_end");

    // The user moves the broken file away: the running scheduler notices.
    std::fs::rename(&path, path.with_extension("json.broken")).unwrap();
    let lines = rpc.until(|l| l["type"] == "cron_status");
    assert_eq!(lines.last().unwrap()["ok"], true, "{lines:#?}");
    rpc.send(r#"{"type":"prompt","content":"every 1 seconds check the build"}"#);
    rpc.until(|l| is_notification(l, "check the build"));
    assert!(
        rpc.stderr()
            .contains("claw-tui: warning: Cron jobs are stopped:"),
        "{}",
        rpc.stderr()
    );
    assert_eq!(
        std::fs::read_to_string(path.with_extension("json.broken")).unwrap(),
        "{\"version\": 1, \"jobs\": [{\"id\": "
    );
    rpc.close_and_wait();
}
