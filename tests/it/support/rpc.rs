//! Driving `claw-tui --mode rpc` (the real binary): lines (or raw bytes) written to its
//! stdin, its stdout read as JSON lines on a thread, its stderr collected as it comes.
//! The sandbox is shared (`Arc`), so several processes can run on one data dir and
//! workspace and the test can read its files after the exit.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::DEADLINE;
use super::bin::Sandbox;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A running RPC process.
pub struct Rpc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<JoinHandle<()>>,
    pub sandbox: Arc<Sandbox>,
}

impl Rpc {
    /// A fresh sandbox whose workspace holds `notes.txt`, on the demo model at `pace_ms`.
    pub fn start(pace_ms: u64) -> Self {
        Self::start_with(pace_ms, "")
    }

    /// Like [`Self::start`], with `config` as the config file.
    pub fn start_with(pace_ms: u64, config: &str) -> Self {
        let sandbox = Sandbox::new();
        sandbox.write_config(config);
        std::fs::write(sandbox.workspace().join("notes.txt"), "alpha\nbeta\n").unwrap();
        Self::start_in(sandbox, pace_ms, &[])
    }

    /// RPC mode in `sandbox` (one the test may share with other processes), the demo
    /// model at `pace_ms`, with `args` added.
    pub fn start_in(sandbox: impl Into<Arc<Sandbox>>, pace_ms: u64, args: &[&str]) -> Self {
        let sandbox = sandbox.into();
        let mut cmd = sandbox.command();
        cmd.args(["--mode", "rpc"])
            .args(args)
            .env("CLAW_TUI_DEMO_PACE_MS", pace_ms.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let line = line.unwrap();
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let collected = stderr.clone();
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    return;
                }
                collected
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            stderr,
            stderr_reader: Some(stderr_reader),
            sandbox,
        }
    }

    /// Writes one command line.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes raw bytes (no newline added).
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn pid(&self) -> nix::unistd::Pid {
        nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap())
    }

    /// Sends `signal` to the process.
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(self.pid(), signal).unwrap();
    }

    /// Lines up to and including the first that matches, waiting at most `deadline`
    /// for each.
    pub fn until_within(&self, deadline: Duration, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self.lines.recv_timeout(deadline).unwrap_or_else(|_| {
                panic!("no matching line; saw {seen:#?}\nstderr: {}", self.stderr())
            });
            let hit = pred(&line);
            seen.push(line);
            if hit {
                return seen;
            }
        }
    }

    /// Lines up to and including the first that matches.
    pub fn until(&self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        self.until_within(DEADLINE, pred)
    }

    /// Lines until each predicate has matched at least one line (in any order).
    pub fn until_all(&self, preds: &[&dyn Fn(&Value) -> bool]) -> Vec<Value> {
        let mut seen: Vec<Value> = Vec::new();
        while !preds.iter().all(|p| seen.iter().any(p)) {
            let line = self.lines.recv_timeout(DEADLINE).unwrap_or_else(|_| {
                panic!("no matching line; saw {seen:#?}\nstderr: {}", self.stderr())
            });
            seen.push(line);
        }
        seen
    }

    /// The response to `command`.
    pub fn response(&self, command: &str) -> Value {
        self.until(|l| l["type"] == "response" && l["command"] == command)
            .pop()
            .unwrap()
    }

    /// What the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits for the process to exit (stdin left open).
    pub fn wait(mut self) -> Exited {
        let status = self.child.wait().unwrap();
        drop(self.stdin.take());
        let rest: Vec<Value> = self.lines.iter().collect();
        if let Some(reader) = self.stderr_reader.take() {
            reader.join().unwrap();
        }
        Exited {
            code: status.code().unwrap_or(-1),
            rest,
            stderr: self.stderr(),
            sandbox: self.sandbox.clone(),
        }
    }

    /// Closes stdin and waits for the exit: (code, the lines not read yet).
    pub fn close_and_wait(self) -> (i32, Vec<Value>) {
        let exited = self.close_and_wait_all();
        (exited.code, exited.rest)
    }

    /// Closes stdin and waits for the exit.
    pub fn close_and_wait_all(mut self) -> Exited {
        drop(self.stdin.take());
        self.wait()
    }
}

impl Drop for Rpc {
    /// A test that fails midway leaves no process behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How the process ended.
pub struct Exited {
    pub code: i32,
    /// Stdout lines not read before the exit.
    pub rest: Vec<Value>,
    pub stderr: String,
    /// Still there, for reading its files.
    pub sandbox: Arc<Sandbox>,
}

/// Whether `line` is an event of type `t`.
pub fn is_type(line: &Value, t: &str) -> bool {
    line["type"] == t
}

/// Whether `line` is a `message_end` of a notification containing `text`.
pub fn is_notification(line: &Value, text: &str) -> bool {
    line["type"] == "message_end"
        && line["message"]["role"] == "notification"
        && line["message"]["content"]
            .as_str()
            .is_some_and(|c| c.contains(text))
}
