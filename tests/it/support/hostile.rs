//! A hostile model through the whole program: the real binary (`-p --yes`) against the
//! fake OpenAI-compatible server, whose scripted turns call tools. The tests then look
//! at the file system and the processes, not at what the model was told.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::bin::{Sandbox, run};
use super::fake_llm::openai::{chunk, done_marker, finish, text_reply, tool, usage};
use super::fake_llm::{FakeLlm, Recorded, Scripted, Step};
use serde_json::{Value, json};

/// One turn of the model: tool calls (name, arguments), all in one answer.
pub fn calls(calls: &[(&str, Value)]) -> Scripted {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": null}), None)];
    for (i, (name, args)) in calls.iter().enumerate() {
        let id = format!("call_{}_{i}", fastrand::u32(..));
        chunks.push(tool(Some(i), Some(&id), Some(name), &args.to_string()));
    }
    chunks.extend([finish("tool_calls"), usage(100, 20, 0), done_marker()]);
    Scripted::sse(chunks)
}

/// A turn calling `exec` once with `command` (and a time limit in seconds).
pub fn exec(command: &str, timeout: Option<u64>) -> Scripted {
    let args = match timeout {
        Some(t) => json!({ "command": command, "timeout": t }),
        None => json!({ "command": command }),
    };
    calls(&[("exec", args)])
}

/// `turn`, answered only `secs` seconds from now: the model taking its time while
/// claw-tui waits, with no command of its own running.
pub fn after(secs: u64, turn: Scripted) -> Scripted {
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let open = gate.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
        open.notify_one();
    });
    let mut steps = vec![Step::Wait(gate)];
    steps.extend(turn.steps);
    Scripted { steps, ..turn }
}

/// A turn that only answers `text`, ending the run.
pub fn say(text: &str) -> Scripted {
    Scripted::sse(text_reply(&[text]))
}

/// What one run of the binary did.
pub struct HostileRun {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub requests: Vec<Recorded>,
}

impl HostileRun {
    /// The content of every tool result the model was sent, in order.
    pub fn results(&self) -> Vec<String> {
        let Some(last) = self.requests.last() else {
            return Vec::new();
        };
        last.body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

/// Runs the binary in `sandbox` (`-p --yes`, no session) against a model playing
/// `turns` and then saying it is done; `config` is added to the config file.
pub async fn run_hostile(sandbox: &Sandbox, turns: Vec<Scripted>, config: &str) -> HostileRun {
    let mut script = turns;
    script.push(Scripted::sse(text_reply(&["All done."])));
    let server = FakeLlm::start(script).await;
    sandbox.write_config(&format!(
        "provider = \"local\"\n{config}\n\n[providers.local]\napi = \"openai\"\n\
         base_url = \"{}/v1\"\nmodel = \"hostile\"\n",
        server.url()
    ));
    let mut cmd = sandbox.command();
    cmd.args(["--no-session", "-p", "--yes", "go"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    HostileRun {
        code,
        stdout,
        stderr,
        requests: server.requests(),
    }
}

/// The mode bits of `path` (not following a symlink).
pub fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The entries of `dir` whose names start with `NAME.quarantined-`.
pub fn quarantined(dir: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
    let prefix = format!("{name}.quarantined-");
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}
