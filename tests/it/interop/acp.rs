//! `claw-tui acp` driven by acpx (pinned in tests/interop-node), a headless ACP client
//! nobody on this project wrote, against the fake model server and the offline demo
//! model: a prompt with streaming text, a tool call with its updates and its diff, a
//! permission request answered both ways, a cancel mid-tool, a session loaded in a new
//! agent process, and plan mode. acpx's `--format json` prints the protocol's messages,
//! which the tests read; the rest is checked on the file system and the fake server.

use super::acpx;
use crate::support::DEADLINE;
use crate::support::bin::Sandbox;
use crate::support::fake_llm::anthropic::{reply, text_block, text_reply, tool_block};
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::poll::until;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// acpx with `claw-tui acp` of `sandbox` as its agent, its own home (acpx keeps its
/// sessions there) and the sandbox's directories.
struct Acpx<'a> {
    sandbox: &'a Sandbox,
}

impl Acpx<'_> {
    fn command(&self, args: &[&str]) -> Command {
        let (node, script) = acpx();
        let agent = format!(
            "{} --config {} --workspace {} acp",
            env!("CARGO_BIN_EXE_claw-tui"),
            self.sandbox.config_path().display(),
            self.sandbox.workspace().display()
        );
        let mut cmd = Command::new(node);
        cmd.arg(script)
            .arg("--agent")
            .arg(agent)
            // The agent acpx keeps for a session stops a second after its last prompt.
            .args(["--ttl", "1"])
            .args(args)
            .current_dir(self.sandbox.workspace())
            .env("HOME", self.sandbox.dir.path().join("home"))
            .stdin(Stdio::null());
        self.sandbox.isolate(&mut cmd);
        cmd
    }

    /// Runs acpx to its end: exit code, the protocol messages it printed, its stderr.
    fn json(&self, args: &[&str]) -> (i32, Vec<Value>, String) {
        let mut all = vec!["--format", "json"];
        all.extend_from_slice(args);
        let out = self.command(&all).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let messages = parse(&String::from_utf8_lossy(&out.stdout), &stderr);
        (out.status.code().unwrap_or(-1), messages, stderr)
    }

    /// Runs acpx in text mode: exit code, stdout, stderr.
    fn text(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.command(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Waits until no agent of this sandbox runs any more (acpx stops it after its
    /// ttl): the next prompt starts a new one, which loads the session.
    fn until_agents_gone(&self) {
        let config = self.sandbox.config_path().display().to_string();
        until("the agents acpx started exited", DEADLINE, || {
            let running = std::fs::read_dir("/proc").unwrap().flatten().any(|p| {
                std::fs::read(p.path().join("cmdline")).is_ok_and(|c| {
                    let c = String::from_utf8_lossy(&c);
                    c.contains(&config) && c.contains("acp")
                })
            });
            (!running).then_some(())
        });
    }
}

impl Drop for Acpx<'_> {
    /// acpx keeps its session owners' sockets in `/tmp/acpx-HASH` (HASH: the first 10
    /// hex digits of the SHA-256 of its home), whatever `$TMPDIR` says, and leaves the
    /// directory behind: it goes with the test, once the owners (which stop a second
    /// after their last prompt) have removed their sockets.
    fn drop(&mut self) {
        use sha2::Digest;
        let home = self.sandbox.dir.path().join("home");
        let hash = sha2::Sha256::digest(home.to_string_lossy().as_bytes());
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        let dir = std::path::PathBuf::from(format!("/tmp/acpx-{}", &hex[..10]));
        let give_up = Instant::now() + DEADLINE;
        while dir.exists() && std::fs::remove_dir(&dir).is_err() && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The JSON lines of acpx's stdout.
fn parse(stdout: &str, stderr: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("not JSON ({e}): {l}\nstderr: {stderr}"))
        })
        .collect()
}

/// The `session/update`s among `messages`.
fn updates(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| &m["params"]["update"])
        .collect()
}

/// The stop reason the prompt was answered with.
fn stop_reason(messages: &[Value]) -> Option<String> {
    messages
        .iter()
        .find_map(|m| m["result"]["stopReason"].as_str().map(str::to_owned))
}

/// The text of the agent's message chunks.
fn agent_text(messages: &[Value]) -> String {
    updates(messages)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

fn sandbox_for(server: &FakeLlm, extra: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "provider = \"claude\"\n{extra}\n[providers.claude]\napi = \"anthropic\"\n\
         base_url = \"{}\"\nmodel = \"claude-sonnet-4-5\"\n",
        server.url()
    ));
    std::fs::write(sandbox.workspace().join("notes.txt"), "alpha\nbeta\n").unwrap();
    sandbox
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "interop: needs node and acpx (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
async fn acpx_streams_a_prompt_and_shows_a_tool_call_with_its_diff() {
    let server = FakeLlm::start(vec![
        Scripted::sse(reply(
            vec![
                text_block(0, &["Editing ", "now."]),
                tool_block(
                    1,
                    "toolu_1",
                    "edit_file",
                    &[r#"{"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}"#],
                ),
            ],
            "tool_use",
        )),
        Scripted::sse(text_reply(&[" Done", "."])),
    ])
    .await;
    let sandbox = sandbox_for(&server, "");
    let acpx = Acpx { sandbox: &sandbox };
    // acpx runs to its end on this thread; the fake server answers on the others.
    let (code, messages, stderr) = tokio::task::block_in_place(|| {
        acpx.json(&["--approve-all", "exec", "change beta to gamma"])
    });
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stop_reason(&messages).as_deref(), Some("end_turn"));
    let chunks = updates(&messages)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .count();
    assert!(chunks >= 4, "streamed in parts: {messages:#?}");
    assert_eq!(agent_text(&messages), "Editing now. Done.");
    let all = updates(&messages);
    let call = all
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "toolu_1")
        .expect("a tool_call");
    assert_eq!(call["kind"], "edit");
    let done = all
        .iter()
        .find(|u| u["toolCallId"] == "toolu_1" && u["status"] == "completed")
        .expect("the call completed");
    let diff = &done["content"][0];
    assert_eq!(diff["type"], "diff", "{done:#}");
    assert_eq!(diff["oldText"], "alpha\nbeta\n");
    assert_eq!(diff["newText"], "alpha\ngamma\n");
}

#[test]
#[ignore = "interop: needs node and acpx (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
fn acpx_answers_a_permission_request_both_ways() {
    let sandbox = Sandbox::new();
    sandbox.write_config("[exec]\napproval = \"ask\"\n");
    let acpx = Acpx { sandbox: &sandbox };
    let ws = sandbox.workspace();
    // acpx exits 5 when it denied a permission (its PERMISSION_DENIED).
    for (policy, marker, allowed, exit) in [
        ("--approve-all", "allowed", true, 0),
        ("--deny-all", "denied", false, 5),
    ] {
        let (code, messages, stderr) = acpx.json(&[policy, "exec", &format!("run touch {marker}")]);
        assert_eq!(code, exit, "{policy}: {stderr}");
        let asked = messages
            .iter()
            .find(|m| m["method"] == "session/request_permission")
            .unwrap_or_else(|| panic!("no permission request: {messages:#?}"));
        assert_eq!(
            asked["params"]["toolCall"]["title"],
            format!("Run: touch {marker}")
        );
        let kinds: Vec<&str> = asked["params"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"]);
        assert_eq!(ws.join(marker).exists(), allowed, "{policy}");
        let call = &asked["params"]["toolCall"]["toolCallId"];
        let status = updates(&messages)
            .iter()
            .rev()
            .find(|u| &u["toolCallId"] == call && u["status"].is_string())
            .map(|u| u["status"].clone());
        let expected = if allowed { "completed" } else { "failed" };
        assert_eq!(status.unwrap(), expected, "{policy}");
        assert_eq!(stop_reason(&messages).as_deref(), Some("end_turn"));
    }
}

#[test]
#[ignore = "interop: needs node and acpx (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
fn acpx_cancels_a_running_command() {
    let sandbox = Sandbox::new();
    sandbox.write_config("");
    let acpx = Acpx { sandbox: &sandbox };
    let (code, _, stderr) = acpx.text(&["sessions", "new"]);
    assert_eq!(code, 0, "{stderr}");
    let mut running = acpx
        .command(&[
            "--format",
            "json",
            "--approve-all",
            "prompt",
            "run sleep 30",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let (tx, lines) = std::sync::mpsc::channel();
    let stdout = running.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let _ = tx.send(line);
        }
    });
    // Once the command runs, acpx's cancel stops it.
    let mut seen = Vec::new();
    loop {
        let line = lines
            .recv_timeout(DEADLINE)
            .unwrap_or_else(|_| panic!("the command never ran: {seen:#?}"));
        let value: Value = serde_json::from_str(&line).unwrap();
        let runs = value["params"]["update"]["status"] == "in_progress";
        seen.push(value);
        if runs {
            break;
        }
    }
    let (code, _, stderr) = acpx.text(&["cancel"]);
    assert_eq!(code, 0, "{stderr}");
    let status = running.wait().unwrap();
    reader.join().unwrap();
    seen.extend(lines.try_iter().map(|l| serde_json::from_str(&l).unwrap()));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "not stopped: {:?}",
        started.elapsed()
    );
    assert_eq!(
        stop_reason(&seen).as_deref(),
        Some("cancelled"),
        "{seen:#?}"
    );
    assert!(status.success(), "{status:?}");
    acpx.until_agents_gone();
    // The session file keeps the stopped call with its result.
    let messages = crate::support::bin::session_messages(&sandbox.only_session());
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool_result")
        .expect("the stopped call's result");
    assert_eq!(result["details"]["cancelled"], true, "{messages:#?}");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "interop: needs node and acpx (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
async fn acpx_loads_an_earlier_session_in_a_new_agent() {
    let server = FakeLlm::start(vec![
        Scripted::sse(text_reply(&["Noted: 42."])),
        Scripted::sse(text_reply(&["It was 42."])),
    ])
    .await;
    let sandbox = sandbox_for(&server, "");
    let acpx = Acpx { sandbox: &sandbox };
    let (first, second) = tokio::task::block_in_place(|| {
        let (code, _, stderr) = acpx.text(&["sessions", "new"]);
        assert_eq!(code, 0, "{stderr}");
        let first = acpx.json(&["prompt", "remember 42"]);
        acpx.until_agents_gone();
        let second = acpx.json(&["prompt", "what was it?"]);
        acpx.until_agents_gone();
        (first, second)
    });
    let (code, first, stderr) = first;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(agent_text(&first), "Noted: 42.");
    let (code, second, stderr) = second;
    assert_eq!(code, 0, "{stderr}");
    // The new agent was asked to load the session, and did.
    let load = second
        .iter()
        .find(|m| m["method"] == "session/load")
        .unwrap_or_else(|| panic!("no session/load: {second:#?}"));
    let answer = second
        .iter()
        .find(|m| m["id"] == load["id"] && m.get("method").is_none())
        .unwrap();
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(stop_reason(&second).as_deref(), Some("end_turn"));
    assert_eq!(agent_text(&second), "It was 42.");
    // It went on from the earlier conversation, in the same session file.
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(
        sent.contains("remember 42") && sent.contains("Noted: 42."),
        "{sent}"
    );
    let file = sandbox.only_session();
    assert!(
        file.to_string_lossy()
            .contains(load["params"]["sessionId"].as_str().unwrap())
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "interop: needs node and acpx (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
async fn acpx_switches_to_plan_mode() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["1. read the code"]))]).await;
    let sandbox = sandbox_for(&server, "");
    let acpx = Acpx { sandbox: &sandbox };
    let (set, planned) = tokio::task::block_in_place(|| {
        let (code, _, stderr) = acpx.text(&["sessions", "new"]);
        assert_eq!(code, 0, "{stderr}");
        let set = acpx.text(&["set-mode", "plan"]);
        let planned = acpx.json(&["prompt", "how would you do it?"]);
        acpx.until_agents_gone();
        (set, planned)
    });
    let (code, stdout, stderr) = set;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("plan"), "{stdout}");
    let (code, messages, stderr) = planned;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stop_reason(&messages).as_deref(), Some("end_turn"));
    let tools: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(tools.contains(&"read_file".to_owned()), "{tools:?}");
    for changing in ["write_file", "edit_file", "exec"] {
        assert!(
            !tools.contains(&changing.to_owned()),
            "{changing}: {tools:?}"
        );
    }
    // The plan-mode answer's steps reached acpx as a plan.
    let plan = updates(&messages)
        .into_iter()
        .find(|u| u["sessionUpdate"] == "plan")
        .expect("a plan update");
    assert_eq!(plan["entries"][0]["content"], "read the code", "{plan:#}");
    assert_eq!(plan["entries"][0]["status"], "pending");
}

/// The agent's requests to acpx with `method`, in order.
fn requests<'a>(messages: &'a [Value], method: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|m| m["method"] == method && m.get("id").is_some())
        .map(|m| &m["params"])
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "interop: needs node and acpx (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
async fn acpx_runs_the_command_in_its_own_terminal_when_asked_to() {
    let sandbox = Sandbox::new();
    sandbox.write_config("[acp]\neditor_terminal = true\n");
    let acpx = Acpx { sandbox: &sandbox };
    let (code, messages, stderr) = tokio::task::block_in_place(|| {
        acpx.json(&[
            "--approve-all",
            "exec",
            "run echo hi-from-acpx && touch made",
        ])
    });
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stop_reason(&messages).as_deref(), Some("end_turn"));
    // Asked first (the setting makes every command the user's to allow), then run by
    // acpx as sh -c in the workspace, waited for, read and released.
    assert_eq!(requests(&messages, "session/request_permission").len(), 1);
    let created = requests(&messages, "terminal/create");
    assert_eq!(created.len(), 1, "{messages:#?}");
    assert_eq!(created[0]["command"], "sh");
    assert_eq!(created[0]["args"][1], "echo hi-from-acpx && touch made");
    for method in [
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ] {
        assert_eq!(requests(&messages, method).len(), 1, "{method}");
    }
    assert!(sandbox.workspace().join("made").exists());
    let all = updates(&messages);
    let done = all
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
        .expect("the call completed");
    assert_eq!(done["content"][0]["type"], "terminal", "{done:#}");
    assert!(agent_text(&messages).contains("hi-from-acpx"));
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "interop: needs node and acpx (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
async fn acpx_reads_and_writes_the_files_when_asked_to() {
    let server = FakeLlm::start(vec![
        Scripted::sse(reply(
            vec![tool_block(
                0,
                "toolu_e",
                "edit_file",
                &[r#"{"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}"#],
            )],
            "tool_use",
        )),
        Scripted::sse(text_reply(&["Done."])),
    ])
    .await;
    let sandbox = sandbox_for(&server, "[acp]\neditor_files = true\n");
    let acpx = Acpx { sandbox: &sandbox };
    let (code, messages, stderr) = tokio::task::block_in_place(|| {
        acpx.json(&["--approve-all", "exec", "change beta to gamma"])
    });
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stop_reason(&messages).as_deref(), Some("end_turn"));
    let notes = sandbox
        .workspace()
        .canonicalize()
        .unwrap()
        .join("notes.txt");
    let read = requests(&messages, "fs/read_text_file");
    let written = requests(&messages, "fs/write_text_file");
    assert_eq!(read.len(), 1, "{messages:#?}");
    assert_eq!(read[0]["path"], notes.to_str().unwrap());
    assert_eq!(written.len(), 1, "{messages:#?}");
    assert_eq!(written[0]["content"], "alpha\ngamma\n");
    // acpx has no buffers: it wrote the file.
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "alpha\ngamma\n");
}
