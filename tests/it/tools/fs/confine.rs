//! Workspace confinement: `..`, absolute paths, `~`, symlinks, and the opt-out.

use super::{Setup, call};
use claw_tui::tools::Workspace;
use claw_tui::tools::workspace::Access;
use serde_json::json;
use std::path::PathBuf;

fn assert_refused(result: &claw_tui::agent::ToolResult, s: &Setup) {
    assert!(result.is_error, "expected a refusal, got {result:?}");
    assert!(
        result.content.contains(&s.root.display().to_string()),
        "the refusal should name the workspace: {}",
        result.content
    );
    assert!(!result.content.contains("top secret"), "{}", result.content);
}

/// Where `path` leads in `ws`, as the file tools would open it.
fn resolve(ws: &Workspace, path: impl AsRef<std::path::Path>) -> Result<PathBuf, String> {
    ws.locate(path, Access::Read)
        .map(|l| l.path().to_path_buf())
        .map_err(|e| e.to_string())
}

#[test]
fn locate_keeps_inside_paths_and_names_the_workspace_when_refusing() {
    let s = Setup::new();
    let ws = Workspace::new(&s.root, false);
    assert_eq!(ws.root(), s.root.as_path());
    assert_eq!(resolve(&ws, "a/b.txt").unwrap(), s.root.join("a/b.txt"));
    assert_eq!(resolve(&ws, "a/../b.txt").unwrap(), s.root.join("b.txt"));
    assert_eq!(resolve(&ws, "").unwrap(), s.root);
    assert_eq!(resolve(&ws, s.root.join("x")).unwrap(), s.root.join("x"));
    let located = ws.locate("a/b.txt", Access::Write).unwrap();
    assert_eq!(located.rel(), std::path::Path::new("a/b.txt"));
    assert_eq!(
        ws.locate("", Access::Read).unwrap().rel(),
        std::path::Path::new(".")
    );

    for escape in ["..", "../secret.txt", "a/../../secret.txt"] {
        let err = resolve(&ws, escape).unwrap_err();
        assert!(err.contains("outside the workspace"), "{err}");
        assert!(err.contains(&s.root.display().to_string()), "{err}");
    }
    let err = resolve(&ws, s.outer.join("secret.txt")).unwrap_err();
    assert!(err.contains(&s.root.display().to_string()), "{err}");
    // A sibling whose name merely starts with the root's name is still outside.
    let err = resolve(&ws, s.outer.join("ws2/file")).unwrap_err();
    assert!(err.contains("outside the workspace"), "{err}");
}

#[test]
fn a_relative_root_is_made_absolute() {
    let ws = Workspace::new(".", false);
    assert!(ws.root().is_absolute());
    assert_eq!(
        ws.root(),
        std::env::current_dir().unwrap().canonicalize().unwrap()
    );
}

#[tokio::test]
async fn dotdot_is_refused_by_every_file_tool() {
    let s = Setup::new();
    let r = call(&s.read(), json!({"path": "../secret.txt"})).await;
    assert_refused(&r, &s);
    let r = call(&s.write(), json!({"path": "../new.txt", "content": "x"})).await;
    assert_refused(&r, &s);
    assert!(!s.outer.join("new.txt").exists());
    let r = call(
        &s.edit(),
        json!({"path": "../secret.txt", "old_text": "top", "new_text": "no"}),
    )
    .await;
    assert_refused(&r, &s);
    assert_eq!(
        std::fs::read_to_string(s.outer.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    let r = call(&s.list(), json!({"path": ".."})).await;
    assert_refused(&r, &s);
    assert!(!r.content.contains("secret.txt"), "{}", r.content);
}

#[tokio::test]
async fn absolute_paths_elsewhere_are_refused() {
    let s = Setup::new();
    let secret = s.outer.join("secret.txt").display().to_string();
    assert_refused(&call(&s.read(), json!({"path": secret})).await, &s);
    assert_refused(&call(&s.read(), json!({"path": "/etc/passwd"})).await, &s);
    // An absolute path inside the workspace is fine.
    s.file("in.txt", "inside\n");
    let inside = s.root.join("in.txt").display().to_string();
    let r = call(&s.read(), json!({"path": inside})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.content, "inside");
}

#[tokio::test]
async fn home_paths_are_refused() {
    let s = Setup::new();
    let name = format!("claw-tui-confine-{}.txt", fastrand::u64(..));
    let r = call(
        &s.write(),
        json!({"path": format!("~/{name}"), "content": "x"}),
    )
    .await;
    assert_refused(&r, &s);
    if let Some(home) = std::env::var_os("HOME") {
        assert!(!std::path::Path::new(&home).join(&name).exists());
    }
    assert_refused(&call(&s.read(), json!({"path": "~"})).await, &s);
    assert_refused(&call(&s.list(), json!({"path": "~/"})).await, &s);
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_pointing_outside_are_refused() {
    use std::os::unix::fs::symlink;
    let s = Setup::new();
    symlink(&s.outer, s.root.join("out_dir")).unwrap();
    symlink(s.outer.join("secret.txt"), s.root.join("out_file")).unwrap();
    symlink(s.outer.join("not-yet"), s.root.join("dangling")).unwrap();

    assert_refused(&call(&s.read(), json!({"path": "out_file"})).await, &s);
    assert_refused(
        &call(&s.read(), json!({"path": "out_dir/secret.txt"})).await,
        &s,
    );
    assert_refused(&call(&s.list(), json!({"path": "out_dir"})).await, &s);
    let r = call(
        &s.write(),
        json!({"path": "out_dir/new.txt", "content": "x"}),
    )
    .await;
    assert_refused(&r, &s);
    assert!(!s.outer.join("new.txt").exists());
    // A dangling link would create its target outside on write.
    let r = call(&s.write(), json!({"path": "dangling", "content": "x"})).await;
    assert_refused(&r, &s);
    assert!(!s.outer.join("not-yet").exists());
    let r = call(
        &s.edit(),
        json!({"path": "out_file", "old_text": "top", "new_text": "no"}),
    )
    .await;
    assert_refused(&r, &s);
    assert_eq!(
        std::fs::read_to_string(s.outer.join("secret.txt")).unwrap(),
        "top secret\n"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_within_the_workspace_work() {
    let s = Setup::new();
    s.file("real/data.txt", "data\n");
    std::os::unix::fs::symlink("real", s.root.join("alias")).unwrap();
    let r = call(&s.read(), json!({"path": "alias/data.txt"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.content, "data");
    let r = call(
        &s.write(),
        json!({"path": "alias/more.txt", "content": "m"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(s.root.join("real/more.txt")).unwrap(),
        "m"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_workspace_reached_through_a_symlink_still_confines() {
    let s = Setup::new();
    let link = s.outer.join("ws-link");
    std::os::unix::fs::symlink(&s.root, &link).unwrap();
    let ws = Workspace::new(&link, false);
    assert_eq!(ws.root(), s.root.as_path());
    assert_eq!(resolve(&ws, "f").unwrap(), s.root.join("f"));
    assert!(resolve(&ws, "../secret.txt").is_err());
}

#[tokio::test]
async fn opting_out_allows_paths_outside() {
    let s = Setup::new();
    let ws = s.open_workspace();
    assert!(ws.allows_outside());
    assert_eq!(
        resolve(&ws, "../secret.txt").unwrap(),
        s.outer.join("secret.txt")
    );
    let read = claw_tui::tools::fs::ReadFileTool::new(ws.clone());
    let r = call(&read, json!({"path": "../secret.txt"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.content, "top secret");
    let absolute = s.outer.join("elsewhere/new.txt").display().to_string();
    let write = claw_tui::tools::fs::WriteFileTool::new(ws);
    let r = call(&write, json!({"path": absolute, "content": "ok"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(s.outer.join("elsewhere/new.txt")).unwrap(),
        "ok"
    );
    if let Some(home) = std::env::var_os("HOME") {
        let expected = std::path::Path::new(&home).join("x");
        let resolved = resolve(&s.open_workspace(), "~/x").unwrap();
        assert!(resolved.ends_with("x"));
        assert_eq!(
            resolved.parent().unwrap().canonicalize().unwrap(),
            expected.parent().unwrap().canonicalize().unwrap()
        );
    }
}

#[cfg(unix)]
#[tokio::test]
async fn opting_out_reaches_outside_with_every_tool_and_through_links() {
    use claw_tui::tools::fs::{EditFileTool, ListDirTool, ReadFileTool, WriteFileTool};
    let s = Setup::new();
    let ws = s.open_workspace();
    std::os::unix::fs::symlink(&s.outer, s.root.join("o")).unwrap();
    std::os::unix::fs::symlink("/", s.root.join("r")).unwrap();
    let via_root = format!("nope/../r{}", s.outer.display());

    let r = call(
        &ReadFileTool::new(ws.clone()),
        json!({"path": "nope/../o/secret.txt"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.content, "top secret");
    let r = call(
        &EditFileTool::new(ws.clone()),
        json!({"path": format!("{via_root}/secret.txt"), "old_text": "top", "new_text": "no"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(s.outer.join("secret.txt")).unwrap(),
        "no secret\n"
    );
    let r = call(
        &WriteFileTool::new(ws.clone()),
        json!({"path": "o/made/by/link.txt", "content": "out"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(s.outer.join("made/by/link.txt")).unwrap(),
        "out"
    );
    let r = call(&ListDirTool::new(ws.clone()), json!({"path": ".."})).await;
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.content.contains("[file] secret.txt (10 B)"),
        "{}",
        r.content
    );
    assert!(r.content.contains("[folder] ws/"), "{}", r.content);
    // Inside, a link out is described by what it points at.
    let r = call(&ListDirTool::new(ws), json!({})).await;
    assert!(r.content.contains("[folder] o/ -> "), "{}", r.content);
}
