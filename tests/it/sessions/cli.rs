//! Sessions through the real binary: written by default, `-c`, `sessions`, `export`,
//! `--no-session`, and a SIGKILL mid-stream.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::DEADLINE;
use crate::support::bin::{Sandbox, run, session_lines, session_messages, session_roles};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

fn session_files(sb: &Sandbox) -> Vec<PathBuf> {
    sb.session_files()
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    session_lines(path)
}

fn roles(path: &Path) -> Vec<String> {
    session_roles(path)
}

#[test]
fn print_mode_writes_a_session_and_continue_resumes_it() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    assert_eq!(run(cmd).0, 0);
    let files = session_files(&sb);
    assert_eq!(files.len(), 1);
    assert_eq!(roles(&files[0]), ["user", "assistant"]);

    let mut cmd = sb.command();
    cmd.args(["-c", "-p", "list files"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let files = session_files(&sb);
    assert_eq!(files.len(), 1, "resuming appends to the same file");
    assert_eq!(
        roles(&files[0]),
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "tool_result",
            "assistant"
        ]
    );

    let mut cmd = sb.command();
    cmd.arg("sessions");
    let (code, stdout, _) = run(cmd);
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.contains("hello") && stdout.contains("6 messages"),
        "{stdout}"
    );

    let id: String = lines(&files[0])[0]["id"].as_str().unwrap().to_owned();
    let mut cmd = sb.command();
    cmd.args(["export", &id[..8], "--format", "markdown"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("## User\n\nhello"), "{stdout}");
    assert!(stdout.contains("**Tool result `list_dir`**"), "{stdout}");
    let mut cmd = sb.command();
    cmd.args(["export", &id, "--format", "json"]);
    let (_, stdout, _) = run(cmd);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["messages"].as_array().unwrap().len(), 6);

    // HTML: the conversation in order, the list_dir call as a card with its result.
    let mut cmd = sb.command();
    cmd.args(["export", &id[..8], "--format", "html"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let doc = scraper::Html::parse_document(&stdout);
    let pick = |css: &str| scraper::Selector::parse(css).unwrap();
    let roles: Vec<&str> = doc
        .select(&pick("main > section"))
        .map(|e| e.value().attr("data-role").unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user", "assistant", "assistant"]
    );
    let card: String = doc
        .select(&pick("details.tool"))
        .next()
        .unwrap()
        .text()
        .collect();
    assert!(card.starts_with("✓ list_dir . 0 entries"), "{card}");
}

#[test]
fn no_session_writes_nothing_and_unknown_session_is_an_error() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["--no-session", "-p", "hello"]);
    assert_eq!(run(cmd).0, 0);
    assert!(session_files(&sb).is_empty());
    let mut cmd = sb.command();
    cmd.args(["--session", "nope", "-p", "hello"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains("claw-tui sessions"), "{stderr}");
}

#[test]
fn sigkill_mid_stream_keeps_what_was_streamed_as_an_aborted_message() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    // A slow stream: the second answer takes seconds, so the kill lands inside it.
    cmd.args(["-p", "list files"])
        .env("CLAW_TUI_DEMO_PACE_MS", "20")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    // Until the streaming answer's first deltas are in its side file.
    let file = loop {
        assert!(
            started.elapsed() < DEADLINE,
            "the streamed answer never reached the side file"
        );
        if let Some(f) = session_files(&sb).into_iter().next()
            && roles(&f).contains(&"tool_result".to_owned())
            && std::fs::read_to_string(claw_tui::session::streaming_path(&f)).is_ok_and(|s| {
                // Deltas of the second answer: after the first one's end.
                s.rsplit_once("message_end")
                    .is_some_and(|(_, second)| second.contains("\"deltas\""))
            })
        {
            break f;
        }
        std::thread::yield_now();
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();
    assert_eq!(roles(&file), ["user", "assistant", "tool_result"]);

    let mut cmd = sb.command();
    cmd.args(["-c", "-p", "hello again"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("claw-tui stopped while an answer was streaming"),
        "the user is told: {stderr}"
    );
    assert_eq!(
        roles(&file),
        [
            "user",
            "assistant",
            "tool_result",
            "assistant",
            "user",
            "assistant"
        ],
        "the streamed part is kept, then the resumed session goes on"
    );
    let kept = &session_messages(&file)[3];
    assert_eq!(kept["stop_reason"], "aborted");
    assert_eq!(
        kept["error_message"],
        claw_tui::session::STOPPED_WHILE_STREAMING
    );
    let text = kept["content"][0]["text"].as_str().unwrap();
    // The same prompt run to the end elsewhere: the kept text is the start of its answer.
    let whole = Sandbox::new();
    let mut cmd = whole.command();
    cmd.args(["-p", "list files"]);
    assert_eq!(run(cmd).0, 0);
    let full = session_messages(&whole.only_session())[3]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        !text.is_empty() && text.len() < full.len() && full.starts_with(text),
        "kept {text:?} of {full:?}"
    );
    assert!(
        !claw_tui::session::streaming_path(&file).exists(),
        "the side file is gone once recovered"
    );
}
