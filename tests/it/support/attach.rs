//! A session served with `claw-tui serve` (the real binary, on the demo model) and
//! clients on its socket: each client's lines are read on a thread as JSON values.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::DEADLINE;
use super::bin::Sandbox;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};

/// A `claw-tui serve` process.
pub struct Served {
    child: Child,
    stderr: Arc<Mutex<String>>,
    pub socket: PathBuf,
    pub id: String,
    pub sandbox: Arc<Sandbox>,
}

impl Served {
    /// Serves a new session in `sandbox` on the demo model at `pace_ms`, with `args`
    /// before `serve`.
    pub fn start(sandbox: impl Into<Arc<Sandbox>>, pace_ms: u64, args: &[&str]) -> Self {
        Self::start_with(sandbox, pace_ms, args, &[])
    }

    /// Like [`Self::start`], with `serve_args` after `serve`.
    pub fn start_with(
        sandbox: impl Into<Arc<Sandbox>>,
        pace_ms: u64,
        args: &[&str],
        serve_args: &[&str],
    ) -> Self {
        let sandbox = sandbox.into();
        let mut cmd = sandbox.command();
        cmd.args(args)
            .arg("serve")
            .args(serve_args)
            .env("CLAW_TUI_DEMO_PACE_MS", pace_ms.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let collected = stderr.clone();
        // Each chunk is also sent here, so the start waits on what arrives, not a clock.
        let (chunks, arrived) = channel::<()>();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    return;
                }
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                collected.lock().unwrap().push_str(&text);
                let _ = chunks.send(());
            }
        });
        let socket = loop {
            let text = stderr.lock().unwrap().clone();
            if let Some(rest) = text.split(" on ").nth(1)
                && let Some(path) = rest.lines().next()
                && text.contains("serving session")
            {
                break PathBuf::from(path);
            }
            assert!(
                arrived.recv_timeout(DEADLINE).is_ok(),
                "serve did not say where it listens: {text}"
            );
        };
        let id = socket.file_stem().unwrap().to_string_lossy().into_owned();
        Self {
            child,
            stderr,
            socket,
            id,
            sandbox,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// A connection that has read `hello` and attached.
    pub fn attach(&self, name: &str) -> Client {
        let client = Client::connect(&self.socket);
        client.send(&format!(r#"{{"type":"attach","name":"{name}"}}"#));
        client.until(|l| l["type"] == "snapshot");
        client
    }

    /// Sends SIGTERM and waits for the exit code.
    pub fn stop(mut self) -> i32 {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        self.child.wait().unwrap().code().unwrap_or(-1)
    }

    /// Waits for the process to end by itself.
    pub fn wait(mut self) -> i32 {
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One connection to a served session.
pub struct Client {
    stream: UnixStream,
    lines: Receiver<Value>,
    /// The first line the server sent.
    pub hello: Value,
}

impl Client {
    /// Connects and reads `hello` (not attached yet).
    pub fn connect(socket: &Path) -> Self {
        let stream = UnixStream::connect(socket).unwrap();
        let reader = stream.try_clone().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { return };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("a line is not JSON ({e}): {line}"));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let hello = lines.recv_timeout(DEADLINE).expect("no hello");
        assert_eq!(hello["type"], "hello", "{hello}");
        Self {
            stream,
            lines,
            hello,
        }
    }

    pub fn send(&self, line: &str) {
        let mut stream = &self.stream;
        writeln!(stream, "{line}").unwrap();
    }

    pub fn send_bytes(&self, bytes: &[u8]) {
        let mut stream = &self.stream;
        stream.write_all(bytes).unwrap();
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

    /// The response to `command`.
    pub fn response(&self, command: &str) -> Value {
        self.until(|l| l["type"] == "response" && l["command"] == command)
            .pop()
            .unwrap()
    }

    /// Hangs up.
    pub fn close(self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// The text an `agent_end`-terminated stretch of lines streamed for its last answer.
pub fn streamed_text(lines: &[Value]) -> String {
    lines
        .iter()
        .filter(|l| l["type"] == "message_update" && l["delta"]["kind"] == "text")
        .filter_map(|l| l["delta"]["text"].as_str())
        .collect()
}
