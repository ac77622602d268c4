//! Running the real `claw-tui` binary in isolation: its own config, data and workspace.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use tempfile::TempDir;

/// A sandboxed home for one run of the binary.
pub struct Sandbox {
    pub dir: TempDir,
}

/// The environment that would pick a provider, a model or a key for the binary: cleared
/// for every run, so a developer's own settings never reach a test.
pub const PROVIDER_ENV: [&str; 6] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CLAW_TUI_PROVIDER",
    "CLAW_TUI_MODEL",
];

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        // The binary is given this file with --config, which must exist.
        std::fs::write(dir.path().join("config/config.toml"), "").unwrap();
        Self { dir }
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config/config.toml")
    }

    pub fn write_config(&self, text: &str) {
        std::fs::write(self.config_path(), text).unwrap();
    }

    /// The binary with flags pointing at this sandbox and no provider keys in its env.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_claw-tui"));
        cmd.arg("--config")
            .arg(self.config_path())
            .arg("--workspace")
            .arg(self.workspace())
            .stdin(Stdio::null());
        self.isolate(&mut cmd);
        cmd
    }

    /// Gives `cmd` (the binary, or a program that starts it) this sandbox's directories
    /// and no provider keys.
    pub fn isolate(&self, cmd: &mut Command) {
        cmd.env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("CLAW_TUI_DEMO_PACE_MS", "0")
            // Sockets of served sessions go to the sandbox, not the runtime dir of
            // whoever runs the tests.
            .env_remove("XDG_RUNTIME_DIR");
        for var in PROVIDER_ENV {
            cmd.env_remove(var);
        }
    }
}

impl Sandbox {
    /// The workspace's cron directory (`jobs.json`, the scheduler lock, inboxes).
    pub fn cron_dir(&self) -> PathBuf {
        let workspace = std::fs::canonicalize(self.workspace()).unwrap();
        self.dir
            .path()
            .join("data/claw-tui/cron")
            .join(claw_tui::runtime::cron::workspace_slug(&workspace))
    }

    /// The session files (not their side files) of every workspace, oldest name first.
    pub fn session_files(&self) -> Vec<PathBuf> {
        let root = self.dir.path().join("data/claw-tui/sessions");
        let mut out = Vec::new();
        for dir in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let name = f.file_name().to_string_lossy().into_owned();
                // The logs beside a session are not sessions.
                if name.ends_with(".jsonl")
                    && !name.ends_with(".events.jsonl")
                    && !name.ends_with(".requests.jsonl")
                {
                    out.push(f.path());
                }
            }
        }
        out.sort();
        out
    }

    /// The images stored beside the session files of every workspace (in their
    /// `images/` directories), sorted.
    pub fn stored_images(&self) -> Vec<PathBuf> {
        let root = self.dir.path().join("data/claw-tui/sessions");
        let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|dir| {
                std::fs::read_dir(dir.path().join("images"))
                    .into_iter()
                    .flatten()
            })
            .flatten()
            .map(|f| f.path())
            .collect();
        out.sort();
        out
    }

    /// The one session file; panics unless there is exactly one.
    pub fn only_session(&self) -> PathBuf {
        let files = self.session_files();
        assert_eq!(files.len(), 1, "{files:?}");
        files[0].clone()
    }
}

/// The readable lines of a session file, as JSON.
pub fn session_lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The recorded messages of a session file, as JSON.
pub fn session_messages(path: &std::path::Path) -> Vec<serde_json::Value> {
    session_lines(path)
        .into_iter()
        .filter(|l| l["type"] == "message")
        .map(|l| l["message"].clone())
        .collect()
}

/// The roles of the recorded messages of a session file.
pub fn session_roles(path: &std::path::Path) -> Vec<String> {
    session_messages(path)
        .iter()
        .map(|m| m["role"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// Runs a command to completion: (exit code, stdout, stderr).
pub fn run(mut cmd: Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs a command to completion like [`run`], and measures its peak resident memory:
/// (exit code, stdout, stderr, peak RSS in KiB). The peak is the process's own `VmHWM`
/// (a high-water mark, so reading it late misses nothing but the last moments), read
/// every 5 ms while it runs. Not `wait4`'s `ru_maxrss`: that counts the test process's
/// own peak too, whose memory the child shared until it exec'd.
pub fn run_measured(mut cmd: Command) -> (i32, String, String, u64) {
    use std::io::Read;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let (done, peak) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let poller = {
        let (done, peak) = (done.clone(), peak.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                let hwm = std::fs::read_to_string(&status_file).ok().and_then(|text| {
                    text.lines()
                        .find_map(|l| l.strip_prefix("VmHWM:"))
                        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                });
                if let Some(hwm) = hwm {
                    peak.fetch_max(hwm, Ordering::SeqCst);
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        })
    };
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        out.read_to_end(&mut text).unwrap();
        text
    });
    let mut stderr = Vec::new();
    err.read_to_end(&mut stderr).unwrap();
    let stdout = reader.join().unwrap();
    let status = child.wait().unwrap();
    done.store(true, Ordering::SeqCst);
    poller.join().unwrap();
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
        peak.load(Ordering::SeqCst),
    )
}
