//! End to end: a session recorded by the real client, replayed by the real binary in a
//! pseudo-terminal (demo model): the timeline bar, the keys, and nothing run again.

use crate::support::bin::Sandbox;
use crate::support::pty::{Tui, status_line};
use std::path::Path;

fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walk(dir) {
        out.push((entry.display().to_string(), std::fs::read(&entry).unwrap()));
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn replay(root: &Path, args: &[&str]) -> Tui {
    let config = root.join("config/config.toml");
    let workspace = root.join("ws");
    let dir = |name: &str| root.join(name).display().to_string();
    let (data, state, xdg) = (dir("data"), dir("state"), dir("config"));
    let mut all = vec![
        "--config",
        config.to_str().unwrap(),
        "--workspace",
        workspace.to_str().unwrap(),
        "replay",
    ];
    all.extend_from_slice(args);
    let env = [
        ("XDG_DATA_HOME", data.as_str()),
        ("XDG_STATE_HOME", state.as_str()),
        ("XDG_CONFIG_HOME", xdg.as_str()),
    ];
    Tui::spawn(&all, &env, &workspace, 120, 40)
}

#[test]
fn the_binary_replays_a_recorded_client_session() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    std::fs::write(sandbox.workspace().join("notes.txt"), "the original notes").unwrap();
    let mut live = Tui::demo(root, "0", &[]);
    live.wait_text("Welcome to claw-tui");
    live.send("read notes.txt\r");
    live.wait_for("the read_file answer", |s| {
        s.contents().contains("the original notes") && status_line(s).contains("idle")
    });
    live.send("\x04");
    assert_eq!(live.wait_exit().0, 0);
    let session = sandbox.only_session();
    assert!(claw_tui::session::events_path(&session).is_file());
    // A replay shows what was read then, not what the file holds now.
    std::fs::write(sandbox.workspace().join("notes.txt"), "changed since").unwrap();
    let sessions_dir = session.parent().unwrap().to_path_buf();
    let before = files_under(&sessions_dir);

    let mut tui = replay(root, &["--speed", "64"]);
    let screen = tui.wait_for("the end of the replay", |s| {
        s.contents().contains("REPLAY ×64 ■ turn 2/2")
            && s.contents().contains("the original notes")
    });
    assert!(screen.contains("✓ read_file"), "{screen}");
    assert!(!screen.contains("changed since"), "{screen}");
    assert!(screen.contains("Space pause"), "{screen}");
    // Paused, Home goes back to the start: nothing of the run on screen yet.
    tui.send(" ");
    tui.send("\x1b[H");
    tui.wait_for("the start", |s| {
        s.contents().contains("⏸ turn 0/2") && !s.contents().contains("the original notes")
    });
    // `]` goes to the first turn.
    tui.send("]");
    tui.wait_text("⏸ turn 1/2");
    tui.send("q");
    let (code, alternate, _) = tui.wait_exit();
    assert_eq!((code, alternate), (0, false));
    assert_eq!(
        files_under(&sessions_dir),
        before,
        "a replay writes nothing"
    );

    // --from starts at a turn.
    let mut tui = replay(root, &["--from", "2", "--speed", "0.25"]);
    tui.wait_text("turn 2/2");
    tui.send("q");
    assert_eq!(tui.wait_exit().0, 0);
}

#[test]
fn the_dashboard_replays_the_cron_jobs_a_session_made() {
    let sandbox = Sandbox::new();
    // The dashboard beside the chat (at 120 columns it would be a tab).
    sandbox.write_config("[ui]\npanes = \"show\"\n");
    let root = sandbox.dir.path();
    let mut live = Tui::demo(root, "0", &[]);
    live.wait_text("Welcome to claw-tui");
    live.send("every 3600 seconds stretch your legs\r");
    live.wait_for("the job in the dashboard", |s| {
        s.contents().contains("Cron (1)") && status_line(s).contains("idle")
    });
    live.send("\x04");
    assert_eq!(live.wait_exit().0, 0);

    let mut tui = replay(root, &["--speed", "64"]);
    let screen = tui.wait_for("the end of the replay", |s| s.contents().contains("■ turn"));
    assert!(screen.contains("Cron (1)"), "{screen}");
    // Paused first, then to the start: Home while playing would play on at ×64 before a
    // later pause arrived (a race this test lost once on a loaded machine).
    tui.send(" ");
    tui.send("\x1b[H");
    tui.wait_for("the start, before the job", |s| {
        s.contents().contains("⏸ turn 0/") && s.contents().contains("Cron (0)")
    });
    tui.send("q");
    assert_eq!(tui.wait_exit().0, 0);
}

/// A replay holds the terminal too: a signal from outside gives it back as it was, and
/// the exit code is 128 + the signal's number.
#[test]
fn a_signal_ends_a_replay_with_the_terminal_given_back() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let mut live = Tui::demo(root, "0", &[]);
    live.wait_text("Welcome to claw-tui");
    live.send("hello\r");
    live.wait_for("the answer", |s| status_line(s).contains("idle"));
    live.send("\x04");
    assert_eq!(live.wait_exit().0, 0);

    for signal in [
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGTERM,
    ] {
        let mut tui = replay(root, &["--speed", "0.25"]);
        tui.wait_text("REPLAY");
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(tui.pid()), signal).unwrap();
        let (code, alternate, cursor_hidden) = tui.wait_exit();
        assert_eq!(
            (code, alternate, cursor_hidden),
            (128 + signal as u32, false, false),
            "{signal}"
        );
        let left = tui.modes_left();
        assert!(!left.raw && !left.mouse, "{signal}: {left:?}");
    }
}
