//! The colours the client draws with, as the terminal says it shows them (`COLORTERM`,
//! `TERM`, `[ui] colors`), read from the screen of the real binary in a pseudo-terminal;
//! and `TERM=dumb` refused with the way out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::Sandbox;
use crate::support::pty::{Tui, run_raw, status_line};

/// The background of the status bar's first cell once the client is idle.
fn status_background(root: &std::path::Path, env: &[(&str, &str)]) -> vt100::Color {
    let tui = Tui::in_sandbox(root, &["--provider", "demo"], env, (100, 30));
    tui.wait_for("the status bar", |s| status_line(s).contains("idle"));
    let color = tui.with_screen(|screen| {
        let last = screen.size().0.get() - 1;
        screen.cell(last, 1).unwrap().bgcolor()
    });
    tui.quit();
    color
}

#[test]
fn truecolor_only_when_the_terminal_says_so_else_256_or_16() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let dark = [("COLORFGBG", "15;0")];
    let with = |extra: &[(&str, &str)]| {
        let env: Vec<(&str, &str)> = dark.iter().chain(extra).copied().collect();
        status_background(root, &env)
    };
    // The dark theme's status bar is #2b303b.
    assert_eq!(
        with(&[("COLORTERM", "truecolor")]),
        vt100::Color::Rgb(0x2b, 0x30, 0x3b)
    );
    // 256 colours: the nearest of the grey ramp (#303030).
    assert_eq!(
        with(&[("COLORTERM", ""), ("TERM", "xterm-256color")]),
        vt100::Color::Idx(236)
    );
    // The Linux console: one of the 16 ANSI colours.
    let console = with(&[("COLORTERM", ""), ("TERM", "linux")]);
    assert!(
        matches!(console, vt100::Color::Idx(i) if i < 16),
        "{console:?}"
    );
    // The setting wins over what the terminal says.
    sandbox.write_config("[ui]\ncolors = \"16\"\n");
    let forced = with(&[("COLORTERM", "truecolor")]);
    assert!(
        matches!(forced, vt100::Color::Idx(i) if i < 16),
        "{forced:?}"
    );
}

#[test]
fn a_dumb_terminal_is_refused_with_the_way_out() {
    let sandbox = Sandbox::new();
    let root = sandbox.dir.path();
    let (config, workspace) = (sandbox.config_path(), sandbox.workspace());
    let dir = |name: &str| root.join(name).display().to_string();
    let (data, state, xdg_config) = (dir("data"), dir("state"), dir("config"));
    let args = [
        "--provider",
        "demo",
        "--config",
        config.to_str().unwrap(),
        "--workspace",
        workspace.to_str().unwrap(),
    ];
    let env = [
        ("TERM", "dumb"),
        ("XDG_DATA_HOME", data.as_str()),
        ("XDG_STATE_HOME", state.as_str()),
        ("XDG_CONFIG_HOME", xdg_config.as_str()),
    ];
    let (code, bytes) = run_raw(&args, &env, root);
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("TERM=dumb"), "{text}");
    assert!(text.contains("claw-tui -p"), "{text}");
    // Nothing asked of the terminal, nothing switched.
    assert!(
        !text.contains("\x1b[?1049h"),
        "the alternate screen was entered: {text:?}"
    );
    assert!(
        !text.contains("\x1b]11;?"),
        "the background was asked: {text:?}"
    );
}
