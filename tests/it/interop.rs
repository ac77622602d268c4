//! The interop suite: tests that drive real programs nobody on this project wrote (the
//! official MCP reference servers, an ACP client, a browser). Each is `#[ignore]`d with the reason, so a
//! plain `cargo test` lists it as ignored and needs none of them; asked for with
//! `cargo test -- --ignored interop::` (after `scripts/install-interop.sh`, which `.ci/run`
//! runs too), a test whose program is missing fails and names what to install.

mod acp;
mod browser;
mod mcp;

use std::path::{Path, PathBuf};

/// How the interop programs are installed, for the failure messages.
const INSTALL: &str = "run scripts/install-interop.sh (it installs every program this suite needs)";

/// Fails the test: `what` is needed and missing.
fn missing(what: &str) -> ! {
    panic!("this interop test needs {what}, which is missing: {INSTALL}")
}

/// `program` on `PATH`, if it is there.
fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

/// Where `scripts/install-interop.sh` puts the MCP reference servers
/// (`CLAW_TUI_INTEROP_NODE_DIR`, else `~/.cache/claw-tui/interop-node`).
fn node_dir() -> PathBuf {
    match std::env::var_os("CLAW_TUI_INTEROP_NODE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/claw-tui/interop-node")
        }
    }
}

/// node and the entry script of the reference server `package`; fails the test when
/// either is missing.
fn reference_server(package: &str) -> (PathBuf, PathBuf) {
    let node =
        which("node").unwrap_or_else(|| missing("node (Debian: apt-get install nodejs npm)"));
    let script = node_dir()
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    if !Path::new(&script).exists() {
        missing(&format!(
            "the MCP reference server {package} at {}",
            script.display()
        ));
    }
    (node, script)
}

/// node and acpx's entry script (installed beside the reference servers); fails the
/// test when either is missing.
fn acpx() -> (PathBuf, PathBuf) {
    let node =
        which("node").unwrap_or_else(|| missing("node (Debian: apt-get install nodejs npm)"));
    let script = node_dir().join("node_modules/acpx/dist/cli.js");
    if !script.exists() {
        missing(&format!("acpx at {}", script.display()));
    }
    (node, script)
}
