//! Driving `claw-tui --mode rpc` (the real binary): lines written to its stdin, its
//! stdout read as JSON lines on a thread.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::DEADLINE;
use super::bin::Sandbox;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};

pub struct Rpc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    stderr: Option<std::thread::JoinHandle<String>>,
    pub sandbox: Sandbox,
}

impl Rpc {
    /// A fresh sandbox whose workspace holds `notes.txt`, on the demo model at `pace_ms`.
    pub fn start(pace_ms: u64) -> Self {
        let sandbox = Sandbox::new();
        std::fs::write(sandbox.workspace().join("notes.txt"), "alpha\nbeta\n").unwrap();
        Self::start_in(sandbox, pace_ms, &[])
    }

    /// RPC mode in `sandbox`, with `args` added.
    pub fn start_in(sandbox: Sandbox, pace_ms: u64, args: &[&str]) -> Self {
        let mut cmd = sandbox.command();
        cmd.args(["--mode", "rpc"])
            .args(args)
            .env("CLAW_TUI_DEMO_PACE_MS", pace_ms.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            text
        });
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
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            stderr: Some(stderr),
            sandbox,
        }
    }

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

    /// Waits for the process to exit (stdin left open).
    pub fn wait(mut self) -> Exited {
        let status = self.child.wait().unwrap();
        drop(self.stdin.take());
        let rest: Vec<Value> = self.lines.iter().collect();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        Exited {
            code: status.code().unwrap_or(-1),
            rest,
            stderr,
            sandbox: self.sandbox,
        }
    }

    /// Lines up to and including the first that matches.
    pub fn until(&self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(DEADLINE)
                .unwrap_or_else(|_| panic!("no matching line; saw {seen:#?}"));
            let hit = pred(&line);
            seen.push(line);
            if hit {
                return seen;
            }
        }
    }

    /// Lines until each predicate has matched at least one line (in any order).
    pub fn until_all(&self, preds: &[&dyn Fn(&Value) -> bool]) -> Vec<Value> {
        let mut seen: Vec<Value> = Vec::new();
        while !preds.iter().all(|p| seen.iter().any(p)) {
            let line = self
                .lines
                .recv_timeout(DEADLINE)
                .unwrap_or_else(|_| panic!("no matching line; saw {seen:#?}"));
            seen.push(line);
        }
        seen
    }

    pub fn response(&self, command: &str) -> Value {
        self.until(|l| l["type"] == "response" && l["command"] == command)
            .pop()
            .unwrap()
    }

    /// Closes stdin and waits for the exit: exit code and the lines not read yet.
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

/// How the process ended.
pub struct Exited {
    pub code: i32,
    /// Stdout lines not read before the exit.
    pub rest: Vec<Value>,
    pub stderr: String,
    /// Still there, for reading its files.
    pub sandbox: Sandbox,
}
