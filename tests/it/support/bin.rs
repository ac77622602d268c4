//! Running the real `claw-tui` binary in isolation: its own config, data and workspace.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use tempfile::TempDir;

/// A sandboxed home for one run of the binary.
pub struct Sandbox {
    pub dir: TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
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
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("CLAW_TUI_DEMO_PACE_MS", "0")
            .stdin(Stdio::null());
        for var in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "CLAW_TUI_PROVIDER",
            "CLAW_TUI_MODEL",
        ] {
            cmd.env_remove(var);
        }
        cmd
    }
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
