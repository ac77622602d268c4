//! Private files, seen as another user of the machine would: everything claw-tui leaves
//! under its data and state dirs (sessions and their side files — inboxes, the cut-off
//! `.damaged` lines, the `.streaming` answer a crash leaves —, the composer history, cron
//! jobs and their locks, the log, and the `claw-tui/` dirs themselves) is a 0600 file in
//! a 0700 directory, whether it was just created, created under a permissive umask, or
//! left looser by an older version.

use crate::support::DEADLINE;
use crate::support::bin::Sandbox;
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text_reply, tool, usage};
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::pty::{Tui, status_line};
use claw_tui::runtime::InboundMessage;
use claw_tui::session::{
    SessionWriter, damaged_path, inbox_path, record_undelivered, streaming_path,
};
use serde_json::json;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// `path` and everything under it: (path, is a directory, permission bits).
fn tree(path: &Path) -> Vec<(PathBuf, bool, u32)> {
    let meta = std::fs::symlink_metadata(path).unwrap();
    let mut out = vec![(
        path.to_path_buf(),
        meta.is_dir(),
        meta.permissions().mode() & 0o7777,
    )];
    if meta.is_dir() {
        let mut children: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        children.sort();
        for child in children {
            out.extend(tree(&child));
        }
    }
    out
}

/// Every directory under `root` (itself included) is 0700 and every file 0600.
fn assert_private(root: &Path) {
    for (path, is_dir, mode) in tree(root) {
        let want = if is_dir { 0o700 } else { 0o600 };
        assert_eq!(mode, want, "{} is {mode:o}", path.display());
    }
}

/// Gives everything under `root` the modes an older version left: 0755 and 0644.
fn loosen(root: &Path) {
    for (path, is_dir, _) in tree(root) {
        let mode = if is_dir { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, PermissionsExt::from_mode(mode)).unwrap();
    }
}

/// The names of the files under `root`, relative, sorted.
fn files(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = tree(root)
        .into_iter()
        .filter(|(_, is_dir, _)| !is_dir)
        .map(|(p, _, _)| p.strip_prefix(root).unwrap().display().to_string())
        .collect();
    names.sort();
    names
}

/// The permission bits of `path`.
fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// `cmd` (the binary, as `Sandbox::command` builds it) started by `sh` under umask 000,
/// so that its files get exactly the modes claw-tui asks for.
fn under_open_umask(cmd: &Command) -> Command {
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg("umask 000 && exec \"$@\"")
        .arg("sh")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(Stdio::null());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => sh.env(key, value),
            None => sh.env_remove(key),
        };
    }
    sh
}

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

/// The client on the fake server, with `args` added: one prompt, its answer, quit.
fn one_prompt(sandbox: &Sandbox, server: &FakeLlm, args: &[&str], prompt: &str, answer: &str) {
    let mut tui = Tui::openai_at(sandbox.dir.path(), &server.url(), args);
    tui.wait_for("the idle state", idle);
    tui.send(&format!("{prompt}\r"));
    tui.wait_for("the answer", |s| s.contents().contains(answer) && idle(s));
    tui.send("\x03");
    tui.wait_text("again to quit");
    tui.send("\x03");
    let (code, _, _) = tui.wait_exit();
    assert_eq!(code, 0);
}

#[test]
fn the_client_leaves_only_private_files_and_tightens_loose_ones() {
    let sandbox = Sandbox::new();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let role = chunk(json!({"role": "assistant", "content": ""}), None);
    let add_job = json!({
        "action": "add", "name": "standup", "message": "standup now", "every_seconds": 3600
    });
    let schedule = Scripted::sse([
        role,
        tool(Some(0), Some("call_1"), Some("cron"), &add_job.to_string()),
        finish("tool_calls"),
        usage(100, 20, 0),
        done_marker(),
    ]);
    let server = runtime.block_on(FakeLlm::start(vec![
        schedule,
        Scripted::sse(text_reply(&["Scheduled the standup."])),
        Scripted::sse(text_reply(&["Welcome back."])),
    ]));
    let (data, state) = (
        sandbox.dir.path().join("data"),
        sandbox.dir.path().join("state"),
    );

    one_prompt(
        &sandbox,
        &server,
        &[],
        "remind me daily, token sk-not-for-others",
        "Scheduled the standup.",
    );
    let data_files = files(&data);
    assert!(
        data_files.contains(&"claw-tui/history.jsonl".to_owned()),
        "{data_files:?}"
    );
    let kinds = ["claw-tui/sessions/", "claw-tui/cron/"];
    for kind in kinds {
        assert!(
            data_files.iter().any(|f| f.starts_with(kind)),
            "{data_files:?}"
        );
    }
    assert!(
        data_files.iter().any(|f| f.ends_with("/jobs.json")),
        "{data_files:?}"
    );
    assert!(
        data_files.iter().any(|f| f.ends_with("/jobs.lock")),
        "{data_files:?}"
    );
    assert_eq!(files(&state), ["claw-tui/claw-tui.log"]);
    assert_private(&data);
    assert_private(&state);

    // As an older version left them: every file and directory open to others.
    loosen(&data);
    loosen(&state);
    one_prompt(&sandbox, &server, &["-c"], "hello again", "Welcome back.");
    assert_eq!(
        files(&data),
        data_files,
        "the same files, the session continued"
    );
    assert_private(&data.join("claw-tui"));
    assert_private(&state.join("claw-tui"));
    // The XDG base dirs are shared with other programs: created private when missing,
    // but otherwise not claw-tui's to change.
    for base in [&data, &state] {
        let mode = std::fs::metadata(base).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755, "{}", base.display());
    }
}

#[test]
fn a_headless_run_under_a_permissive_umask_still_writes_private_files() {
    let sandbox = Sandbox::new();
    let (data, state) = (
        sandbox.dir.path().join("data"),
        sandbox.dir.path().join("state"),
    );
    let workspace = sandbox.workspace();
    // `sh` sets the umask and then becomes claw-tui.
    let out = Command::new("sh")
        .arg("-c")
        .arg("umask 000 && exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_claw-tui"))
        .arg("--config")
        .arg(sandbox.config_path())
        .arg("--workspace")
        .arg(&workspace)
        .args(["--provider", "demo", "-p", "hello"])
        .env("XDG_DATA_HOME", &data)
        .env("XDG_STATE_HOME", &state)
        .env("XDG_CONFIG_HOME", sandbox.dir.path().join("config"))
        .env("CLAW_TUI_DEMO_PACE_MS", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data_files = files(&data);
    assert!(
        data_files
            .iter()
            .any(|f| f.starts_with("claw-tui/sessions/") && f.ends_with(".jsonl")),
        "{data_files:?}"
    );
    assert!(
        tree(&data)
            .iter()
            .any(|(p, is_dir, _)| *is_dir && p.parent() == Some(&data.join("claw-tui/cron")))
    );
    assert_private(&data);
}

#[test]
fn inboxes_are_private_fresh_and_when_left_loose() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("xdg-data/claw-tui");
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    let writer = SessionWriter::create(&data, &workspace, "demo", "demo").unwrap();
    let session = writer.path().to_path_buf();
    let message = InboundMessage::new("system", "cron", "other", "for the other session");
    record_undelivered(&session, &message).unwrap();
    let inbox = inbox_path(&session);
    assert!(inbox.is_file());
    assert_private(&dir.path().join("xdg-data"));

    loosen(&dir.path().join("xdg-data"));
    record_undelivered(&session, &message).unwrap();
    let mode = std::fs::metadata(&inbox).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    drop(writer);
}

/// A torn line cut off into `.damaged` and the `.streaming` answer a killed process leaves
/// are private like the session file, under umask 000, and a loose `.damaged` file is
/// tightened when more is cut into it.
#[test]
fn damaged_and_streaming_side_files_are_private() {
    let sandbox = Sandbox::new();
    let sessions = sandbox.dir.path().join("data/claw-tui/sessions");
    let claw = |args: &[&str], pace: &str| {
        let mut cmd = sandbox.command();
        cmd.args(["--provider", "demo"])
            .args(args)
            .env("CLAW_TUI_DEMO_PACE_MS", pace);
        under_open_umask(&cmd)
    };
    let torn = |path: &Path| {
        let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        file.write_all(br#"{"type":"message","timestamp":3,"message":{"role":"us"#)
            .unwrap();
    };
    let out = claw(&["-p", "hello"], "0").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let session = sandbox.only_session();
    torn(&session);

    // Resumed (the torn line goes to .damaged) and killed while the answer streams.
    let mut child = claw(&["-c", "-p", "hello again"], "50")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let streaming = streaming_path(&session);
    let started = Instant::now();
    while !std::fs::read_to_string(&streaming).is_ok_and(|s| s.contains("deltas")) {
        assert!(started.elapsed() < DEADLINE, "the answer never streamed");
        std::thread::yield_now();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let damaged = damaged_path(&session);
    assert!(damaged.is_file() && streaming.is_file());
    assert_eq!((mode(&damaged), mode(&streaming)), (0o600, 0o600));
    assert_private(&sessions);

    // As an older version left them, and torn again: tightened as they are opened.
    loosen(&sessions);
    torn(&session);
    let out = claw(&["-c", "-p", "once more"], "0").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!streaming.exists(), "the crashed answer was recovered");
    assert!(
        std::fs::read_to_string(&damaged)
            .unwrap()
            .matches(r#""role":"us"#)
            .count()
            == 2,
        "both torn lines are kept"
    );
    assert_private(&sessions);
}
