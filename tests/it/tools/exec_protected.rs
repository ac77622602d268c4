#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The protected paths are read-only to `exec`, from the attacker's side: a command
//! tries to plant `core.fsmonitor`, a hook, an `.mcp.json`, to swap `.git` for one of
//! its own, to create `.claw-tui/`, directly or from a background process; the test
//! then reads the file system. `git init` must still give a usable repository. Without
//! namespaces, what a command changed is put back after it.

use crate::support::exec::*;
use claw_tui::tools::exec::{ExecConfig, ExecTool};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";
const MCP: &str = "{\"mcpServers\": {}}\n";

/// A workspace with a repository (config and hooks), `.mcp.json` and `.claw-tui/`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(ws.join(".git/objects")).unwrap();
    std::fs::create_dir_all(ws.join(".git/refs/heads")).unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join(".git/config"), CONFIG).unwrap();
    std::fs::write(ws.join(".mcp.json"), MCP).unwrap();
    std::fs::create_dir(ws.join(".claw-tui")).unwrap();
    std::fs::write(ws.join(".claw-tui/MEMORY.md"), "memory\n").unwrap();
    dir
}

/// What a hostile command does to a repository's configuration.
const PLANT: &str = "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config\n\
     printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit\n\
     echo '{\"mcpServers\": {\"x\": {\"command\": \"sh\"}}}' > .mcp.json\n\
     echo noted >> .claw-tui/MEMORY.md\n";

/// ... and to the git directory itself.
const SWAP: &str =
    "mv .git stolen && mkdir -p .git/hooks && echo '[core] fsmonitor = evil' > .git/config\n";

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| format!("({}: {e})", path.display()))
}

/// The quarantined copies of `name` in `dir`.
fn quarantined(dir: &Path, name: &str) -> Vec<PathBuf> {
    let prefix = format!("{name}.quarantined-");
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

fn assert_untouched(ws: &Path) {
    assert_eq!(read(ws.join(".git/config")), CONFIG);
    assert!(
        !ws.join(".git/hooks/pre-commit").exists(),
        "a hook was planted"
    );
    assert_eq!(read(ws.join(".mcp.json")), MCP);
    assert!(!ws.join("stolen").exists(), ".git was renamed away");
    assert_eq!(read(ws.join(".git/HEAD")), "ref: refs/heads/main\n");
}

#[tokio::test]
async fn protected_paths_are_read_only_to_commands() {
    let dir = project();
    let ws = dir.path();
    let attack = format!("{PLANT}{SWAP}echo done");
    let result = call(&tool(ws), json!({ "command": attack })).await;
    let content = &result.content;
    eprintln!("{content}");
    assert_untouched(ws);
    if had_mounts(&result) {
        eprintln!("mount namespace: the writes fail in the command");
        assert!(content.contains("Read-only file system"), "{content}");
        assert!(
            content.contains("Device or resource busy"),
            "mv .git: {content}"
        );
        assert_eq!(read(ws.join(".claw-tui/MEMORY.md")), "memory\nnoted\n");
    } else {
        eprintln!("no mount namespace here: the changes were put back after the command");
        assert!(content.contains("put back"), "{content}");
    }
}

#[tokio::test]
async fn without_namespaces_what_a_command_changed_is_put_back() {
    let dir = project();
    let ws = dir.path();
    let tool = ExecTool::new(
        ws,
        ExecConfig {
            pid_namespace: false,
            ..config()
        },
    );
    let result = call(&tool, json!({ "command": PLANT })).await;
    let content = &result.content;
    assert_untouched(ws);
    assert_eq!(
        read(ws.join(".claw-tui/MEMORY.md")),
        "memory\nnoted\n",
        "MEMORY.md is the model's"
    );
    assert!(content.contains("put back as it was"), "{content}");
    assert!(content.contains(".git/config"), "{content}");
    assert!(
        !quarantined(&ws.join(".git"), "hooks").is_empty(),
        "what it left is kept aside"
    );
    let again = call(&tool, json!({"command": "true"})).await;
    assert!(
        !again.content.contains("put back"),
        "settled once: {}",
        again.content
    );

    // The git directory cannot be pinned without a mount namespace: a swapped one is
    // moved aside, and the result says the repository is gone from its place.
    let result = call(&tool, json!({ "command": SWAP })).await;
    assert!(!ws.join(".git").exists(), "{}", result.content);
    assert_eq!(quarantined(ws, ".git").len(), 1);
    // Where it went, `stolen/` is a git directory by its shape, whose configuration the
    // command put there: moved aside too, kept whole.
    assert!(!ws.join("stolen/config").exists(), "{}", result.content);
    let kept = quarantined(&ws.join("stolen"), "config");
    assert!(
        kept.iter().any(|k| read(k.clone()) == CONFIG),
        "{}",
        result.content
    );
    assert!(
        result.content.contains("was replaced"),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn configuration_a_command_creates_is_moved_aside() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let command = "mkdir -p .claw-tui/commands && echo 'run evil' > .claw-tui/commands/x.md\n\
                   echo '{}' > .mcp.json\nmkdir .claude";
    let result = call(&tool(ws), json!({ "command": command })).await;
    let content = &result.content;
    for name in [".claw-tui", ".mcp.json", ".claude"] {
        assert!(!ws.join(name).exists(), "{name} stayed: {content}");
        let aside = quarantined(ws, name);
        assert_eq!(aside.len(), 1, "{name}: {content}");
        assert!(
            content.contains(&aside[0].display().to_string()),
            "{content}"
        );
    }
    let aside = quarantined(ws, ".claw-tui").remove(0);
    assert_eq!(read(aside.join("commands/x.md")), "run evil\n");
    assert_eq!(
        result.details["protected"].as_array().map(Vec::len),
        Some(3)
    );
}

#[tokio::test]
async fn git_init_gives_a_usable_repository_whose_configuration_is_then_protected() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let tool = tool(ws);
    let init = "git init -q && git config user.name Agent && git config user.email a@e \
                && git remote add origin https://example.com/x.git \
                && echo a > a && git add a && git commit -qm first && echo committed";
    let result = call(&tool, json!({ "command": init })).await;
    assert!(
        result.content.starts_with("committed"),
        "{}",
        result.content
    );
    assert!(
        result.content.contains("new git repository"),
        "{}",
        result.content
    );
    assert!(ws.join(".git/config").is_file());
    let log = Command::new("git")
        .args(["-C", &ws.display().to_string(), "log", "--format=%s"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout), "first\n");

    let second = "echo b > b && git add b && git commit -qm second && echo committed\n\
                  git config core.fsmonitor 'touch /tmp/pwned' || echo refused";
    let result = call(&tool, json!({ "command": second })).await;
    let content = &result.content;
    assert!(content.starts_with("committed"), "{content}");
    assert!(
        !read(ws.join(".git/config")).contains("fsmonitor"),
        "{content}"
    );
    if had_mounts(&result) {
        assert!(content.contains("refused"), "{content}");
    }
}

#[tokio::test]
async fn a_new_repository_with_a_hook_or_fsmonitor_is_moved_aside() {
    for plant in [
        "printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        "git config core.fsmonitor 'touch /tmp/pwned'",
        "printf '[include]\\n\\tpath = ../x\\n' >> .git/config",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let command = format!("git init -q && {plant} && echo planted");
        let result = call(&tool(ws), json!({ "command": command })).await;
        assert!(result.content.starts_with("planted"), "{}", result.content);
        assert!(!ws.join(".git").exists(), "{plant}: {}", result.content);
        assert_eq!(quarantined(ws, ".git").len(), 1, "{plant}");
        assert!(result.content.contains("moved aside"), "{}", result.content);
    }
}

#[tokio::test]
async fn a_background_process_cannot_plant_configuration_after_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().to_path_buf();
    let tool = tool(&ws);
    // It creates `.claw-tui` well after the call returned, well before its time limit.
    let command = "(sleep 0.5; mkdir .claw-tui; echo late > .claw-tui/late) > /dev/null 2>&1 &";
    let result = call(&tool, json!({ "command": command, "timeout": 4 })).await;
    assert_eq!(
        result.details["background_left"], true,
        "{}",
        result.content
    );
    assert!(
        !ws.join(".claw-tui").exists(),
        "created before the call returned"
    );
    let what = "the background process's .claw-tui was moved aside";
    crate::support::poll::until_async(what, DEADLINE, || {
        let aside = quarantined(&ws, ".claw-tui");
        (!ws.join(".claw-tui").exists() && aside.len() == 1).then_some(())
    })
    .await;
    if result.content.contains("moved aside") {
        eprintln!("this machine was slow enough for the call to see it: told at once");
        return;
    }
    // The next result tells the model (the note is filed just after the move).
    let started = std::time::Instant::now();
    loop {
        let next = call(&tool, json!({"command": "true"})).await;
        if next.content.contains("After the background processes") {
            break;
        }
        assert!(started.elapsed() < DEADLINE, "never told: {}", next.content);
    }
}

#[tokio::test]
async fn configuration_a_command_plants_in_a_subdirectory_does_not_stay() {
    // The user's own git, run in `sub/` later, would obey a repository there.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let tool = tool(ws);
    let command = "mkdir -p sub plain kept other && \
         (cd sub && git init -q && git config core.fsmonitor 'touch /tmp/pwned') && \
         (cd plain && git init -q) && \
         mkdir other/.claw-tui && echo x > other/.claw-tui/hook.sh && \
         echo '{}' > other/.mcp.json && echo planted";
    let result = call(&tool, json!({ "command": command })).await;
    assert!(result.content.starts_with("planted"), "{}", result.content);
    assert!(!ws.join("sub/.git").exists(), "{}", result.content);
    assert_eq!(quarantined(&ws.join("sub"), ".git").len(), 1);
    assert!(
        ws.join("plain/.git/config").is_file(),
        "a plain git init was moved"
    );
    assert!(!ws.join("other/.claw-tui").exists());
    assert!(!ws.join("other/.mcp.json").exists());

    // A repository below the top that was there before: its configuration is put back.
    let before = read(ws.join("plain/.git/config"));
    let result = call(
        &tool,
        json!({ "command": "git -C plain config core.fsmonitor 'touch /tmp/pwned' && \
            printf '#!/bin/sh\\n' > plain/.git/hooks/post-checkout && echo planted" }),
    )
    .await;
    assert!(result.content.starts_with("planted"), "{}", result.content);
    assert_eq!(read(ws.join("plain/.git/config")), before);
    assert!(!ws.join("plain/.git/hooks/post-checkout").exists());
}

#[tokio::test]
async fn a_directory_a_command_shapes_like_a_git_directory_keeps_no_configuration() {
    // `src/` with HEAD, objects/, refs/ and a config is a repository to git's discovery.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir(ws.join("src")).unwrap();
    let command = "cd src && mkdir -p objects refs/heads hooks && \
         echo 'ref: refs/heads/main' > HEAD && \
         printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > config && \
         echo '#!/bin/sh' > hooks/post-checkout && echo planted";
    let result = call(&tool(ws), json!({ "command": command })).await;
    assert!(result.content.starts_with("planted"), "{}", result.content);
    assert!(!ws.join("src/config").exists(), "{}", result.content);
    assert!(!ws.join("src/hooks").exists(), "{}", result.content);
    assert!(result.content.contains("moved aside"), "{}", result.content);
}
