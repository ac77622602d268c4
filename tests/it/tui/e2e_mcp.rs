//! End to end in a pseudo-terminal: the client asks once whether to start the servers
//! of the workspace's `.mcp.json` (showing each entry), starts them on "y" (the
//! dashboard shows them ready), remembers the answer for the next start, and asks again
//! when the entry changed. The first frame does not wait for any server, a server's stderr goes to the
//! log file and never to the screen, and quitting stops what a server still starting
//! has started.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp::processes::{child_pid, hung_table};
use crate::support::bin::Sandbox;
use crate::support::exec::exits;
use crate::support::mcp::{MCP_DEADLINE, fixture_bin, log_lines, stdio_table};
use crate::support::pty::Tui;
use serde_json::json;
use std::path::{Path, PathBuf};

fn write_project(sandbox: &Sandbox, log: &Path, extra_arg: Option<&str>) {
    let mut args = vec![json!("--log"), json!(log)];
    if let Some(arg) = extra_arg {
        args.push(json!(arg));
    }
    let project = json!({"mcpServers": {"proj": {"command": fixture_bin(), "args": args}}});
    std::fs::write(sandbox.workspace().join(".mcp.json"), project.to_string()).unwrap();
}

/// The key that shows the side panes (xterm's F4).
const F4: &str = "\x1bOS";

fn start(sandbox: &Sandbox) -> Tui {
    Tui::in_sandbox(
        sandbox.dir.path(),
        &["--provider", "demo"],
        &[("CLAW_TUI_DEMO_PACE_MS", "0")],
        (120, 40),
    )
}

#[test]
fn the_trust_question_is_asked_once_per_workspace_and_file() {
    let sandbox = Sandbox::new();
    let log = sandbox.dir.path().join("proj.log");
    write_project(&sandbox, &log, None);

    let mut tui = start(&sandbox);
    tui.wait_text("Trust what runs outside the sandbox?");
    // The question shows each server's entry (waited for: a frame can be read half
    // drawn).
    tui.wait_text("--log");
    assert!(
        log_lines(&log).is_empty(),
        "nothing started before the answer"
    );
    tui.send("y");
    // F4 shows the dashboard (MCP servers alone do not bring it up), where the server
    // shows up ready.
    tui.send(F4);
    tui.wait_text("proj  ready · 10 tools");
    assert!(log_lines(&log).iter().any(|l| l.starts_with("start ")));
    tui.send("\x04");
    tui.wait_exit();
    let data = sandbox.dir.path().join("data/claw-tui/trust.json");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&data).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // Remembered: no question, the server starts by itself.
    let mut tui = start(&sandbox);
    tui.wait_text("Welcome to claw-tui");
    tui.send(F4);
    tui.wait_text("proj  ready · 10 tools");
    assert!(!tui.text().contains("Trust what runs outside the sandbox?"));
    tui.send("\x04");
    tui.wait_exit();

    // The file now runs the program differently: asked again, and "n" keeps it stopped.
    write_project(&sandbox, &log, Some("--changed"));
    let starts = log_lines(&log).len();
    let mut tui = start(&sandbox);
    tui.wait_text("Trust what runs outside the sandbox?");
    tui.wait_text("--changed");
    tui.send("n");
    tui.send(F4);
    tui.wait_text("proj  not trusted");
    tui.send("\x04");
    tui.wait_exit();
    assert_eq!(
        log_lines(&log).len(),
        starts,
        "the changed file's program never ran"
    );
}

/// The log file under the sandbox's state dir.
fn log_file(root: &Path) -> PathBuf {
    let log = root.join("state/claw-tui/claw-tui.log");
    assert!(log.exists(), "no log at {}", log.display());
    log
}

#[test]
fn three_servers_neither_delay_the_first_frame_nor_write_on_the_screen() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let noisy = format!(
        "echo noisy-stderr-marker >&2; exec '{}' --log '{}'",
        fixture_bin().display(),
        root.join("noisy.log").display()
    );
    let pid_file = root.join("hung.pid");
    sandbox.write_config(&format!(
        "{}[mcp.servers.noisy]\ncommand = \"sh\"\nargs = [\"-c\", {noisy:?}]\n\n{}",
        stdio_table("quiet", &root.join("quiet.log"), ""),
        hung_table("hung", &pid_file, "startup_timeout_secs = 600"),
    ));
    let runtime = tokio::runtime::Runtime::new().unwrap();

    let mut tui = start(&sandbox);
    tui.wait_text("Welcome to claw-tui");
    tui.send(F4);
    tui.wait_text("quiet  ready · 10 tools");
    tui.wait_text("noisy  ready · 10 tools");
    // It never answers: every frame so far was drawn while it was starting.
    tui.wait_text("hung  starting");
    let hung_child = runtime.block_on(child_pid(&pid_file));

    let log = log_file(root);
    let what = format!("the server's stderr never reached {}", log.display());
    crate::support::poll::until(&what, MCP_DEADLINE, || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("noisy-stderr-marker")
            .then_some(())
    });
    assert!(
        !tui.text().contains("noisy-stderr-marker"),
        "{}",
        tui.text()
    );

    tui.send("\x04");
    tui.wait_exit();
    assert!(
        runtime.block_on(exits(hung_child)),
        "the child of the server still starting ({hung_child}) outlived the client"
    );
}

#[test]
fn a_hook_script_in_the_workspace_is_asked_about_at_start_and_again_when_it_changed() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    let log = sandbox.dir.path().join("guard.log");
    std::fs::create_dir_all(ws.join("scripts")).unwrap();
    let guard = ws.join("scripts/guard.sh");
    std::fs::write(&guard, format!("echo ran >> '{}'\n", log.display())).unwrap();
    sandbox.write_config(
        "provider = \"demo\"\n\n[[hooks.before_tool]]\nmatch = \"^exec$\"\ncommand = \"sh scripts/guard.sh\"\n",
    );

    // Asked at start, with the file, that it is new, and what runs it.
    let mut tui = start(&sandbox);
    tui.wait_text("Trust what runs outside the sandbox?");
    tui.wait_text("scripts/guard.sh · new");
    tui.wait_text("run by the hook `sh scripts/guard.sh`");
    tui.send("y");
    tui.send("run echo first\r");
    crate::support::poll::until("the trusted hook ran", MCP_DEADLINE, || {
        (!log_lines(&log).is_empty()).then_some(())
    });
    assert_eq!(log_lines(&log), ["ran"]);
    // The first command must have ended before the file changes: while a command runs,
    // a change to a protected file is the command's doing and is put back.
    tui.wait_text("exit 0 · 1 line");
    assert!(!tui.text().contains("put back"), "{}", tui.text());

    // Changed while the client runs: the next call asks again, and the hook does not
    // run meanwhile (the call it guards is blocked).
    std::fs::write(&guard, "touch pwned\n").unwrap();
    tui.send("run echo second\r");
    tui.wait_text("changed since you trusted it");
    tui.send("n");
    tui.wait_text("was not run");
    assert_eq!(log_lines(&log), ["ran"]);
    assert!(!ws.join("pwned").exists(), "the changed hook ran");
    tui.send("\x04");
    tui.wait_exit();

    let data = sandbox.dir.path().join("data/claw-tui/trust.json");
    let stored = std::fs::read_to_string(&data).unwrap();
    assert!(stored.contains("guard.sh"), "{stored}");
}
