//! A `claw-tui --mode rpc` process on a [`Sandbox`] the test keeps (so that several
//! processes can share one data dir and workspace): JSON lines in, events out, stderr
//! collected.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::DEADLINE;
use super::bin::Sandbox;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running RPC process.
pub struct RpcProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    stderr: Arc<Mutex<String>>,
}

impl RpcProcess {
    /// Starts `claw-tui --mode rpc` in `sandbox` with `args` added (e.g. the provider).
    pub fn start(sandbox: &Sandbox, args: &[&str]) -> Self {
        let mut cmd = sandbox.command();
        cmd.args(["--mode", "rpc"])
            .args(args)
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
        std::thread::spawn(move || {
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
        }
    }

    /// Writes one command line.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Lines up to and including the first that matches, waiting at most `deadline`.
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

    /// What the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Closes stdin and waits for the exit: (code, the lines not read yet).
    pub fn close_and_wait(mut self) -> (i32, Vec<Value>) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        let rest: Vec<Value> = self.lines.iter().collect();
        (status.code().unwrap_or(-1), rest)
    }
}

impl Drop for RpcProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `line` is a `message_end` of a notification containing `text`.
pub fn is_notification(line: &Value, text: &str) -> bool {
    line["type"] == "message_end"
        && line["message"]["role"] == "notification"
        && line["message"]["content"]
            .as_str()
            .is_some_and(|c| c.contains(text))
}
