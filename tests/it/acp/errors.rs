//! The protocol's edges, on the raw wire: bad JSON, unknown methods and wrong params get
//! JSON-RPC errors and the process goes on; a provider without its key is an
//! authentication method that names the variable; the end of stdin, even mid-turn,
//! ends the process cleanly with the session saved.

use super::demo_sandbox;
use crate::support::DEADLINE;
use crate::support::bin::{Sandbox, session_messages};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};

/// `claw-tui acp` on raw pipes: lines in, JSON lines out.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Raw {
    fn start(sandbox: &Sandbox, env: &[(&str, &str)]) -> Self {
        let mut cmd = sandbox.command();
        cmd.arg("acp")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if tx.send(line.unwrap()).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line with this id (every line read must be JSON-RPC 2.0).
    fn answer(&self, id: u64) -> Value {
        loop {
            let line = self.lines.recv_timeout(DEADLINE).expect("no answer");
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            assert_eq!(value["jsonrpc"], "2.0", "{line}");
            if value["id"] == id {
                return value;
            }
        }
    }

    /// The next line that matches.
    fn until(&self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = self.lines.recv_timeout(DEADLINE).expect("no such line");
            let value: Value = serde_json::from_str(&line).unwrap();
            if pred(&value) {
                return value;
            }
        }
    }

    /// Closes stdin; the exit code and stderr.
    fn close(mut self) -> (i32, String) {
        drop(self.stdin.take());
        let child = &mut self.child;
        let status =
            crate::support::poll::until("no exit after the end of stdin", DEADLINE, || {
                child.try_wait().unwrap()
            });
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        (status.code().unwrap_or(-1), stderr)
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn initialize(raw: &mut Raw) -> Value {
    raw.send(&request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    ));
    raw.answer(1)
}

#[test]
fn bad_input_gets_json_rpc_errors_and_the_agent_goes_on() {
    let sandbox = demo_sandbox("");
    let mut raw = Raw::start(&sandbox, &[]);
    raw.send("this is not json");
    let parse = raw.until(|v| v.get("error").is_some());
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    let init = initialize(&mut raw);
    assert_eq!(init["result"]["protocolVersion"], 1);
    assert_eq!(init["result"]["agentInfo"]["name"], "claw-tui");
    let caps = &init["result"]["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(caps["mcpCapabilities"]["http"], true);
    // The offline demo needs no key.
    assert_eq!(init["result"]["authMethods"], json!([]));
    raw.send(&request(2, "session/frobnicate", json!({})));
    assert_eq!(raw.answer(2)["error"]["code"], -32601);
    raw.send(&request(3, "session/new", json!({"cwd": 5})));
    assert_eq!(raw.answer(3)["error"]["code"], -32602);
    raw.send(&request(
        4,
        "session/prompt",
        json!({"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}),
    ));
    let unknown = raw.answer(4);
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    raw.send(&request(
        5,
        "session/new",
        json!({"cwd": "/definitely/not/here", "mcpServers": []}),
    ));
    let missing = raw.answer(5);
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/definitely/not/here"),
        "{missing}"
    );
    // Still serving.
    let ws = sandbox.workspace();
    raw.send(&request(
        6,
        "session/new",
        json!({"cwd": ws, "mcpServers": []}),
    ));
    assert!(raw.answer(6)["result"]["sessionId"].is_string());
    let (code, stderr) = raw.close();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn the_end_of_stdin_mid_turn_stops_the_run_and_saves_the_session() {
    let sandbox = demo_sandbox("");
    let mut raw = Raw::start(&sandbox, &[("CLAW_TUI_DEMO_PACE_MS", "0")]);
    initialize(&mut raw);
    let ws = sandbox.workspace();
    raw.send(&request(
        2,
        "session/new",
        json!({"cwd": ws, "mcpServers": []}),
    ));
    let id = raw.answer(2)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    raw.send(&request(
        3,
        "session/prompt",
        json!({"sessionId": id, "prompt": [{"type": "text", "text": "run sleep 30"}]}),
    ));
    raw.until(|v| v["params"]["update"]["status"] == "in_progress");
    let started = std::time::Instant::now();
    let (code, stderr) = raw.close();
    assert_eq!(code, 0, "{stderr}");
    assert!(started.elapsed() < DEADLINE);
    let roles: Vec<String> = session_messages(&sandbox.only_session())
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        roles[..3],
        ["user", "assistant", "tool_result"],
        "{roles:?}"
    );
}

#[test]
fn a_provider_without_its_key_asks_for_it_by_name() {
    let sandbox = Sandbox::new();
    sandbox.write_config("provider = \"anthropic\"\n");
    let mut raw = Raw::start(&sandbox, &[]);
    let init = initialize(&mut raw);
    let methods = init["result"]["authMethods"].as_array().unwrap().clone();
    assert_eq!(methods.len(), 1, "{init}");
    assert_eq!(methods[0]["id"], "api-key");
    let description = methods[0]["description"].as_str().unwrap();
    assert!(description.contains("ANTHROPIC_API_KEY"), "{description}");
    let ws = sandbox.workspace();
    raw.send(&request(
        2,
        "session/new",
        json!({"cwd": ws, "mcpServers": []}),
    ));
    let refused = raw.answer(2);
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("set ANTHROPIC_API_KEY"),
        "{refused}"
    );
    raw.send(&request(3, "authenticate", json!({"methodId": "api-key"})));
    assert_eq!(raw.answer(3)["error"]["code"], -32000);
    let (code, stderr) = raw.close();
    assert_eq!(code, 0, "{stderr}");
}
