//! The user's own files in the real client (pty, demo model): a custom command from
//! each location with its arguments, a built-in winning over a command file, `/skills`,
//! a `$name` mention attaching the skill, and `/export` writing the HTML file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::Sandbox;
use crate::support::pty::{Tui, status_line};
use crate::support::write_creating_dirs;
use std::fs;

fn idle(screen: &vt100::Screen) -> bool {
    status_line(screen).contains("idle")
}

fn start(sandbox: &Sandbox) -> Tui {
    let home = sandbox.dir.path().join("home");
    fs::create_dir_all(&home).unwrap();
    Tui::in_sandbox(
        sandbox.dir.path(),
        &["--provider", "demo"],
        &[
            ("CLAW_TUI_DEMO_PACE_MS", "0"),
            ("HOME", home.to_str().unwrap()),
        ],
        (120, 40),
    )
}

#[test]
fn custom_commands_skills_mentions_and_export_in_the_real_client() {
    let sb = Sandbox::new();
    let root = sb.dir.path();
    write_creating_dirs(
        &sb.workspace().join(".claude/commands/review.md"),
        "---\ndescription: Review a file\nargument-hint: FILE FOCUS\n---\n\
         Review $1 with focus on $2.\n",
    );
    write_creating_dirs(
        &sb.workspace().join(".claw-tui/commands/shout.md"),
        "Say $ARGUMENTS loudly.\n",
    );
    write_creating_dirs(
        &root.join("config/commands/cfg.md"),
        "Config says $1 and $3.\n",
    );
    write_creating_dirs(
        &root.join("home/.claude/commands/greet.md"),
        "Greet $ARGUMENTS warmly.\n",
    );
    // A file named like a built-in: /help stays the built-in.
    write_creating_dirs(&root.join("config/commands/help.md"), "HIJACKED HELP\n");
    write_creating_dirs(
        &root.join("home/.claude/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Ship the build\n---\nRun make ship.\n",
    );

    let mut tui = start(&sb);
    tui.wait_for("the idle state", idle);

    // The popup offers it with its hint, description and source.
    tui.send("/revi");
    tui.wait_text("FILE FOCUS · Review a file (.claude/commands)");
    tui.send("\t");
    tui.wait_for("the completed name, the popup closed", |s| {
        s.contents().contains("/review ") && !s.contents().contains("FILE FOCUS ·")
    });
    tui.send("a.rs \"error paths\"\r");
    tui.wait_text("› Review a.rs with focus on error paths.");
    tui.wait_for("the answer", idle);
    tui.send("/shout hi there\r");
    tui.wait_text("› Say hi there loudly.");
    tui.wait_for("the answer", idle);
    tui.send("/cfg one two three\r");
    tui.wait_text("› Config says one and three.");
    tui.wait_for("the answer", idle);
    tui.send("/greet Ada\r");
    tui.wait_text("› Greet Ada warmly.");
    tui.wait_for("the answer", idle);

    tui.send("/skills\r");
    let screen = tui.wait_text("$deploy");
    assert!(screen.contains("Ship the build"), "{screen}");
    assert!(screen.contains("~/.claude/skills"), "{screen}");

    // The skill's file goes with the message: the chat shows it after the text.
    tui.send("use $deploy now\r");
    tui.wait_text("Run make ship.");
    tui.wait_for("the answer", idle);

    tui.send("/help\r");
    let screen = tui.wait_for("the help overlay", |s| {
        s.contents().contains("Help · Esc closes")
    });
    assert!(!screen.contains("HIJACKED"), "{screen}");
    tui.send("\x1b");
    tui.wait_for("the overlay to close", |s| {
        !s.contents().contains("Help · Esc closes")
    });

    tui.send("/export\r");
    let screen = tui.wait_text("Exported the session to");
    let file = fs::read_dir(sb.workspace())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "html"))
        .unwrap_or_else(|| panic!("no HTML file in the workspace:\n{screen}"));
    let html = fs::read_to_string(&file).unwrap();
    assert!(html.contains("Review a.rs with focus on error paths."));
    assert!(html.contains("Greet Ada warmly."));
    assert!(html.contains("&lt;skill name="), "the tag is shown as text");
    assert!(!html.contains("<skill"));
    tui.send("/quit\r");
}
