//! `claw-tui replay --mode json` prints the lines `--mode json` printed live, byte for
//! byte; the real binary on the demo model.

use crate::support::bin::{Sandbox, run};

fn id_of(session: &std::path::Path) -> String {
    let stem = session.file_stem().unwrap().to_string_lossy().into_owned();
    stem.rsplit('_').next().unwrap().to_owned()
}

/// The `type` of the event on a line of the event log.
fn event_type(line: &str) -> &str {
    let rest = line.split("\"type\":\"").nth(1).unwrap();
    rest.split('"').next().unwrap()
}

#[test]
fn a_json_replay_prints_the_live_json_lines() {
    let sb = Sandbox::new();
    std::fs::write(sb.workspace().join("hello.txt"), "hi from the file\n").unwrap();
    let mut cmd = sb.command();
    cmd.args(["--mode", "json", "-p", "read hello.txt"]);
    let (code, live, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(live.contains("\"tool_execution_end\""), "{live}");
    let session = sb.only_session();

    let mut cmd = sb.command();
    cmd.args(["replay", &id_of(&session), "--mode", "json"]);
    let (code, replayed, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(replayed, live);

    // The log holds each message once: a message's end like its start, the turn's and
    // the run's ends refer to the lines that hold their messages, and the replay above
    // put them back byte for byte.
    let log = std::fs::read_to_string(session.with_extension("events.jsonl")).unwrap();
    let refs: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(",\"agent_refs\":"))
        .collect();
    let kinds: Vec<&str> = refs.iter().map(|l| event_type(l)).collect();
    // The prompt's end, the tool result's, two turns and the run.
    assert_eq!(
        kinds,
        [
            "message_end",
            "message_end",
            "turn_end",
            "turn_end",
            "agent_end"
        ],
        "{log}"
    );
    assert!(refs.iter().all(|l| !l.contains("\"role\"")), "{refs:#?}");
    // The file's text: in the tool's end and its result's start, and quoted by the answer.
    let holding: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("hi from the file"))
        .map(event_type)
        .collect();
    assert_eq!(
        holding,
        ["tool_execution_end", "message_start", "message_end"],
        "{log}"
    );
    assert!(live.matches("hi from the file").count() >= 7, "{live}");

    // Without an id: the workspace's latest session, the same lines.
    let mut cmd = sb.command();
    cmd.args(["replay", "--mode", "json"]);
    let (code, latest, _) = run(cmd);
    assert_eq!((code, latest), (0, live));
    // Replaying wrote nothing: the session is as the run left it.
    assert_eq!(sb.session_files(), [session]);
}

#[test]
fn without_a_log_or_a_session_the_replay_says_why() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["replay"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains("nothing to replay"), "{stderr}");

    sb.write_config("[session]\nrecord_events = false\n");
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let session = sb.only_session();
    assert!(!claw_tui::session::events_path(&session).exists());
    let mut cmd = sb.command();
    cmd.args(["replay", "--mode", "json"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 1);
    assert!(stdout.is_empty());
    assert!(stderr.contains("has no event log"), "{stderr}");

    let mut cmd = sb.command();
    cmd.args(["replay", "--speed", "100"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--speed must be between 0.25 and 64"),
        "{stderr}"
    );
}

/// The runtime's event types (the rest are the main agent's).
const RUNTIME: [&str; 9] = [
    "subagent_event",
    "subagent_update",
    "mcp_server_update",
    "pending_notifications",
    "notification_parked",
    "notification_deferred",
    "cron_status",
    "hook_warning",
    "outbound_message",
];

fn split(lines: &str) -> (Vec<&str>, Vec<&str>) {
    lines.lines().partition(|line| {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        !RUNTIME.contains(&value["type"].as_str().unwrap())
    })
}

/// Runs `prompt` in `--mode json` in a new sandbox, then `replay --mode json`; asserts
/// that both succeed and that each channel (agent events, runtime events) replays the
/// lines it printed live, in order. Returns the replayed lines and the live stderr.
fn live_then_replayed(prompt: &str) -> (String, String) {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["--mode", "json", "-p", prompt]);
    let (code, live, live_stderr) = run(cmd);
    assert_eq!(code, 0, "{live_stderr}");
    let mut cmd = sb.command();
    cmd.args(["replay", "--mode", "json"]);
    let (code, replayed, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    // Agent and runtime events travel on two channels: each stream keeps its order.
    let (live_agent, live_runtime) = split(&live);
    let (agent, runtime) = split(&replayed);
    assert_eq!(agent, live_agent);
    assert_eq!(runtime, live_runtime);
    (replayed, live_stderr)
}

#[test]
fn a_subagents_events_are_recorded_and_replayed_too() {
    let (replayed, _) = live_then_replayed("spawn count the files");
    let (_, runtime) = split(&replayed);
    assert!(
        runtime.iter().any(|l| l.contains("\"subagent_event\"")),
        "{replayed}"
    );
    assert!(
        runtime.iter().any(|l| l.contains("\"subagent_update\"")),
        "{replayed}"
    );
}

#[test]
fn the_message_tools_messages_are_recorded_and_replayed() {
    let (replayed, live_stderr) = live_then_replayed("message the build is green");
    assert!(
        live_stderr.contains("[message to cli:direct] the build is green"),
        "{live_stderr}"
    );
    let (_, runtime) = split(&replayed);
    let outbound: Vec<serde_json::Value> = runtime
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["type"] == "outbound_message")
        .collect();
    assert_eq!(
        outbound,
        [serde_json::json!({"type": "outbound_message", "message":
            {"channel": "cli", "chat_id": "direct", "content": "the build is green"}})],
        "{replayed}"
    );
}
