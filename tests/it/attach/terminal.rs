//! The full-screen client attached to a served session, two at once, in real
//! pseudo-terminals: prompts from both, an approval put to both and answered from the
//! second, a steer while a tool runs, one detaching and attaching again mid-stream while
//! the other stays.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::attach::Served;
use crate::support::bin::Sandbox;
use crate::support::pty::Tui;
use std::sync::Arc;

/// `claw-tui attach PREFIX` in a 110×36 terminal of the sandbox.
fn attach(sandbox: &Sandbox, prefix: &str) -> Tui {
    let root = sandbox.dir.path();
    let config = sandbox.config_path();
    let workspace = sandbox.workspace();
    let dir = |name: &str| root.join(name).display().to_string();
    let (data, state, xdg_config) = (dir("data"), dir("state"), dir("config"));
    Tui::spawn(
        &[
            "--config",
            config.to_str().unwrap(),
            "--workspace",
            workspace.to_str().unwrap(),
            "attach",
            prefix,
        ],
        &[
            ("XDG_DATA_HOME", data.as_str()),
            ("XDG_STATE_HOME", state.as_str()),
            ("XDG_CONFIG_HOME", xdg_config.as_str()),
            ("XDG_RUNTIME_DIR", ""),
        ],
        &workspace,
        110,
        36,
    )
}

#[test]
fn two_terminals_drive_one_served_session() {
    let sandbox = Arc::new(Sandbox::new());
    sandbox.write_config("[exec]\napproval = \"ask\"\n");
    std::fs::write(sandbox.workspace().join("notes.txt"), "alpha-note\n").unwrap();
    let served = Served::start(sandbox.clone(), 5, &["--provider", "demo"]);
    let prefix = &served.id[..8];
    let mut one = attach(&sandbox, prefix);
    one.wait_text("Attached to session");
    let two = attach(&sandbox, prefix);
    two.wait_text("Attached to session");
    one.wait_text("attached to this session");

    // A prompt from the first shows in both.
    one.send("hello from one\r");
    two.wait_text("hello from one");
    two.wait_text("offline demo model");

    // The second asks for a command: the approval is put to both, answered by the
    // second, and the first is told who answered.
    let mut two = two;
    two.send("run sleep 2\r");
    one.wait_text("Approve exec?");
    two.wait_text("Approve exec?");
    two.send("y");
    one.wait_text("allowed the exec call");
    // While the command runs, the second steers the run.
    two.wait_text("exec sleep 2");
    two.send("read notes.txt");
    two.send("\x1b");
    one.wait_text("alpha-note");

    // The first detaches (Ctrl+D quits the client); the session and the second go on.
    one.quit();
    two.wait_text("detached");
    two.send("run echo second-still-here\r");
    two.wait_text("Approve exec?");
    two.send("y");
    // The first comes back while the answer streams, and sees it through to the end.
    let one = attach(&sandbox, prefix);
    one.wait_text("Attached to session");
    one.wait_text("second-still-here");
    two.quit();
    one.quit();
    // Both detached; the session still serves.
    assert!(served.socket.exists());
    assert_eq!(served.stop(), 143);
}

#[test]
fn a_session_started_in_a_terminal_is_attached_from_another_and_kept_for_it_on_quit() {
    let sandbox = Arc::new(Sandbox::new());
    sandbox.write_config("[exec]\napproval = \"ask\"\n");
    let root = sandbox.dir.path();
    let mut host = Tui::in_sandbox(
        root,
        &["--provider", "demo"],
        &[("CLAW_TUI_DEMO_PACE_MS", "5"), ("XDG_RUNTIME_DIR", "")],
        (110, 36),
    );
    host.wait_text("Ask anything");
    // The session's socket, found the way `claw-tui attach` finds it.
    let sockets = root.join("state/claw-tui/sockets");
    let id = crate::support::poll::until("the session's socket", crate::support::DEADLINE, || {
        std::fs::read_dir(&sockets).ok()?.flatten().find_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".sock")
                .map(str::to_owned)
        })
    });
    let mut guest = attach(&sandbox, &id[..8]);
    guest.wait_text("Attached to session");
    host.wait_text("claw-tui attach attached");
    // The guest's command waits for approval in both; the host answers it.
    guest.send("run touch from-guest\r");
    host.wait_text("Approve exec?");
    guest.wait_text("Approve exec?");
    host.send("y");
    guest.wait_text("The session's own terminal allowed");
    crate::support::poll::until(
        "the approved command's file",
        crate::support::DEADLINE,
        || {
            sandbox
                .workspace()
                .join("from-guest")
                .exists()
                .then_some(())
        },
    );
    // Quitting the host while the guest is attached asks; Enter keeps it for the guest.
    host.send("\x04");
    host.wait_text("still attached");
    host.send("\r");
    host.wait_text("until the others detach");
    guest.wait_text("own terminal detached");
    guest.send("hello after the host\r");
    guest.wait_text("hello after the host");
    guest.wait_text("offline demo model");
    // The guest leaves: the host process ends by itself, the terminal given back.
    guest.quit();
    let (code, alternate, _) = host.wait_exit();
    assert_eq!((code, alternate), (0, false));
}

#[test]
fn a_client_that_switches_sessions_takes_its_attached_clients_along() {
    let sandbox = Arc::new(Sandbox::new());
    let root = sandbox.dir.path();
    let mut host = Tui::in_sandbox(
        root,
        &["--provider", "demo"],
        &[("CLAW_TUI_DEMO_PACE_MS", "0"), ("XDG_RUNTIME_DIR", "")],
        (110, 36),
    );
    host.wait_text("Ask anything");
    host.send("hello before the switch\r");
    host.wait_text("offline demo model");
    let sockets = root.join("state/claw-tui/sockets");
    let socket =
        crate::support::poll::until("the session's socket", crate::support::DEADLINE, || {
            std::fs::read_dir(&sockets)
                .ok()?
                .flatten()
                .map(|e| e.path())
                .next()
        });
    let guest = crate::support::attach::Client::connect(&socket);
    guest.send(r#"{"type":"attach","name":"guest"}"#);
    let first = guest.until(|l| l["type"] == "snapshot").pop().unwrap();
    assert!(
        first["state"]["message_count"].as_u64().unwrap() >= 2,
        "{first}"
    );
    host.send("/new\r");
    let switched = guest
        .until(|l| l["type"] == "session_switched")
        .pop()
        .unwrap();
    assert_ne!(switched["session"]["id"], first["session"]["id"]);
    let second = guest.until(|l| l["type"] == "snapshot").pop().unwrap();
    assert_eq!(second["session"]["id"], switched["session"]["id"]);
    assert_eq!(second["state"]["message_count"], 0, "{second}");
    // Gone before the host quits (else the host would ask whether to keep it).
    guest.close();
    host.wait_text("guest detached");
    host.quit();
}
