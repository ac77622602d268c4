//! `claw-tui acp` (the real binary) driven by the ACP SDK's own client role, against
//! the fake model server and the offline demo model: the answers, tool calls, diffs,
//! permissions, cancels, loads, modes and errors an editor sees. The same checks with
//! a client nobody here wrote (acpx) are in the interop suite.

mod editor;
mod errors;
mod load;
mod mcp;
mod modes;
mod permission;
mod prompt;
mod terminal;

use crate::support::bin::Sandbox;
use crate::support::fake_llm::FakeLlm;

/// A sandbox whose provider is the fake server speaking the Anthropic API, with
/// `extra` added to the config; its workspace holds `notes.txt`.
fn sandbox_for(server: &FakeLlm, extra: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "provider = \"claude\"\n{extra}\n[providers.claude]\napi = \"anthropic\"\n\
         base_url = \"{}\"\nmodel = \"claude-sonnet-4-5\"\n",
        server.url()
    ));
    std::fs::write(sandbox.workspace().join("notes.txt"), "alpha\nbeta\n").unwrap();
    sandbox
}

/// A sandbox on the offline demo model with `config`; its workspace holds `notes.txt`.
fn demo_sandbox(config: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(config);
    std::fs::write(sandbox.workspace().join("notes.txt"), "alpha\nbeta\n").unwrap();
    sandbox
}

/// The workspace as the agent names it (its real path).
fn real(path: &std::path::Path) -> std::path::PathBuf {
    std::fs::canonicalize(path).unwrap()
}
