#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! A hard link is a second name for a protected file, and a write through it reaches
//! the file whatever is bound read-only over the first name. From the model's side,
//! through the real binary: a link made into a new repository's config, one left from
//! before, and one the workspace cannot see. The test reads the files afterwards.

use crate::support::bin::Sandbox;
use crate::support::hostile::{calls, exec, quarantined, run_hostile};
use serde_json::json;
use std::path::Path;

const CONFIG: &str = "[core]\n\tbare = false\n";
const HOOK: &str = "#!/bin/sh\nexit 0\n";

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("({}: {e})", path.display()))
}

/// A workspace with a repository whose pre-commit hook the user wrote.
fn repository(ws: &Path) {
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(ws.join(".git/objects")).unwrap();
    std::fs::create_dir_all(ws.join(".git/refs/heads")).unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join(".git/config"), CONFIG).unwrap();
    std::fs::write(ws.join(".git/hooks/pre-commit"), HOOK).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_into_a_new_repository_makes_it_move_aside() {
    let sb = Sandbox::new();
    let ws = sb.workspace();
    let run = run_hostile(
        &sb,
        vec![
            exec("git init -q && ln .git/config cfg && echo linked", None),
            exec(
                "printf '\\tfsmonitor = touch mark\\n' >> cfg; echo rc=$?; cat .git/config",
                None,
            ),
            calls(&[(
                "edit_file",
                json!({"path": "cfg", "old_text": "mark", "new_text": "mark2"}),
            )]),
        ],
        "",
    )
    .await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let results = run.results().join("\n---\n");
    assert!(results.contains("linked"), "{results}");
    assert!(
        !read(&ws.join(".git/config")).contains("fsmonitor"),
        "{results}"
    );
    assert!(
        !ws.join(".git").exists(),
        "the linked repository stayed: {results}"
    );
    let aside = quarantined(&ws, ".git");
    assert_eq!(aside.len(), 1, "{results}");
    assert!(
        !read(&aside[0].join("config")).contains("mark2"),
        "the file tools wrote through the link: {results}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_left_from_before_is_given_its_own_file_before_the_command() {
    let sb = Sandbox::new();
    let ws = sb.workspace();
    repository(&ws);
    std::fs::create_dir_all(ws.join("notes")).unwrap();
    std::fs::hard_link(ws.join(".git/hooks/pre-commit"), ws.join("notes/pc")).unwrap();
    std::fs::hard_link(ws.join(".git/config"), ws.join("notes/cfg")).unwrap();
    let write = "printf 'touch mark\\n' >> notes/pc; \
                 printf '[core]\\n\\tfsmonitor = touch mark\\n' >> notes/cfg; echo written";
    // The first command of a session is also checked afterwards with everything
    // recorded; the second relies on the read-only binds alone.
    let run = run_hostile(&sb, vec![exec("true", None), exec(write, None)], "").await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let results = run.results().join("\n---\n");
    assert!(results.contains("written"), "{results}");
    assert_eq!(read(&ws.join(".git/hooks/pre-commit")), HOOK, "{results}");
    assert_eq!(read(&ws.join(".git/config")), CONFIG, "{results}");
    // The other names kept their content and took the writes.
    assert!(
        read(&ws.join("notes/pc")).ends_with("touch mark\n"),
        "{results}"
    );
    assert!(
        read(&ws.join("notes/cfg")).contains("fsmonitor"),
        "{results}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_outside_the_workspace_keeps_commands_from_running() {
    let sb = Sandbox::new();
    let ws = sb.workspace();
    repository(&ws);
    let outside = sb.dir.path().join("pc-elsewhere");
    std::fs::hard_link(ws.join(".git/hooks/pre-commit"), &outside).unwrap();
    let run = run_hostile(&sb, vec![exec("touch ran", None)], "").await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let results = run.results().join("\n---\n");
    assert!(!ws.join("ran").exists(), "the command ran: {results}");
    assert!(results.contains("pre-commit"), "{results}");
}
