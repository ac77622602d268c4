//! Building the MCP fixture server (examples/mcp_fixture/main.rs) with the cargo and profile
//! that built the running test or bench: shared by the integration tests and
//! `benches/mcp.rs` (which includes this file by path), so std only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The fixture server binary, built (or brought up to date) once per process by
/// the same cargo and profile that built the running test or bench.
pub fn fixture_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        // <target>/<profile dir>/deps/<test or bench>-HASH
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
        let target_dir = profile_dir.parent().unwrap().to_path_buf();
        let bin = profile_dir.join("examples/mcp_fixture");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => "dev".to_owned(),
            Some(other) => other.to_owned(),
            None => "dev".to_owned(),
        };
        let mut cargo = Command::new(env!("CARGO"));
        // What cargo set for this test process (package variables, library paths) would
        // change build scripts' fingerprints and rebuild half the tree next time.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy().into_owned();
            if (name.starts_with("CARGO_") && name != "CARGO_HOME") || name == "LD_LIBRARY_PATH" {
                cargo.env_remove(&name);
            }
        }
        let status = cargo
            .args(["build", "--quiet", "--example", "mcp_fixture", "--profile"])
            .arg(&profile)
            .arg("--manifest-path")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .env("CARGO_TARGET_DIR", &target_dir)
            .status()
            .expect("cannot run cargo to build the MCP fixture server");
        assert!(
            status.success(),
            "building examples/mcp_fixture/main.rs failed"
        );
        assert!(bin.exists(), "{} is missing after the build", bin.display());
        bin
    })
    .clone()
}
