//! Hostile paths, from the model's side: every file tool is pointed out of the workspace
//! through a missing component and `..` before a symlink to `/` or to a directory
//! outside, through absolute paths, `..` chains, symlink loops, dangling symlinks and
//! `/proc` magic links. The checks are on the file system: nothing outside is written or
//! changed, and no outside content comes back.

use super::{Setup, call, names_in};
use claw_tui::agent::ToolResult;
use serde_json::json;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

/// Paths that first wander into a part that does not exist, then climb back out of it.
const DETOURS: [&str; 5] = [
    "nope/../",
    "nope/deeper/../../",
    "nope/./../",
    "docs/nope/../../",
    "a/b/c/../../../",
];

/// Makes the symlink `link` (relative to the workspace) to `target` with a real `ln -s`
/// process, as a command run by `exec` would.
fn ln_s(s: &Setup, target: &Path, link: &str) {
    let status = Command::new("ln")
        .arg("-s")
        .arg(target)
        .arg(link)
        .current_dir(&s.root)
        .status()
        .unwrap();
    assert!(status.success());
}

fn assert_no_leak(r: &ToolResult, what: &str) {
    assert!(r.is_error, "{what}: expected a refusal, got {r:?}");
    assert!(!r.content.contains("top secret"), "{what}: {}", r.content);
    assert!(
        !r.content.contains("secret.txt (") && !r.content.contains("[file] secret.txt"),
        "{what} listed the outside directory: {}",
        r.content
    );
}

/// The outside directory holds exactly what the setup put there, unchanged.
fn assert_outside_untouched(s: &Setup) {
    let mut names = names_in(&s.outer);
    names.retain(|n| n != "ws");
    assert_eq!(names, ["secret.txt"], "something was created outside");
    assert_eq!(
        std::fs::read_to_string(s.outer.join("secret.txt")).unwrap(),
        "top secret\n"
    );
}

/// Every file tool, sent through `via` (a path in the workspace that leads to the outside
/// directory), must refuse and leave the outside alone.
async fn every_tool_refuses(s: &Setup, via: &str) {
    let r = call(&s.read(), json!({"path": format!("{via}/secret.txt")})).await;
    assert_no_leak(&r, &format!("read {via}"));
    let r = call(
        &s.write(),
        json!({"path": format!("{via}/pwned.txt"), "content": "pwned"}),
    )
    .await;
    assert_no_leak(&r, &format!("write {via}"));
    let r = call(
        &s.write(),
        json!({"path": format!("{via}/new/dir/pwned.txt"), "content": "pwned"}),
    )
    .await;
    assert_no_leak(&r, &format!("write with parents {via}"));
    let r = call(
        &s.edit(),
        json!({"path": format!("{via}/secret.txt"), "old_text": "top", "new_text": "no"}),
    )
    .await;
    assert_no_leak(&r, &format!("edit {via}"));
    let r = call(&s.list(), json!({"path": via})).await;
    assert_no_leak(&r, &format!("list {via}"));
    let r = call(&s.list(), json!({"path": via, "depth": 3})).await;
    assert_no_leak(&r, &format!("deep list {via}"));
    assert_outside_untouched(s);
}

/// The outside directory as seen through a link to `/`: `LINK/tmp/.../` for `/tmp/...`.
fn through_root(link: &str, s: &Setup) -> String {
    format!("{link}{}", s.outer.display())
}

#[tokio::test]
async fn missing_then_dotdot_then_a_premade_link_is_refused_by_every_tool() {
    let s = Setup::new();
    std::fs::create_dir(s.root.join("docs")).unwrap();
    symlink("/", s.root.join("docs/root")).unwrap();
    symlink(&s.outer, s.root.join("docs/out")).unwrap();
    for detour in DETOURS {
        every_tool_refuses(&s, &format!("{detour}docs/out")).await;
        every_tool_refuses(&s, &through_root(&format!("{detour}docs/root"), &s)).await;
    }
}

#[tokio::test]
async fn missing_then_dotdot_then_a_link_made_by_ln_is_refused_by_every_tool() {
    let s = Setup::new();
    ln_s(&s, Path::new("/"), "r");
    ln_s(&s, &s.outer, "o");
    for detour in DETOURS {
        every_tool_refuses(&s, &format!("{detour}o")).await;
        every_tool_refuses(&s, &through_root(&format!("{detour}r"), &s)).await;
    }
    // A listing shows the links and where they point, without looking there.
    let r = call(&s.list(), json!({"depth": 3})).await;
    assert_eq!(
        r.content,
        format!(
            "[link] o -> {} (outside the workspace)\n[link] r -> / (outside the workspace)",
            s.outer.display()
        )
    );
}

#[tokio::test]
async fn a_link_to_the_root_never_reaches_system_files() {
    let s = Setup::new();
    ln_s(&s, Path::new("/"), "r");
    let name = format!("claw-tui-escape-{}", fastrand::u64(..));
    let r = call(
        &s.write(),
        json!({"path": format!("nope/../r/tmp/{name}"), "content": "pwned"}),
    )
    .await;
    assert_no_leak(&r, "write into /tmp");
    assert!(!Path::new("/tmp").join(&name).exists());
    let r = call(&s.read(), json!({"path": "nope/../r/etc/passwd"})).await;
    assert_no_leak(&r, "read /etc/passwd");
    assert!(!r.content.contains("root:"), "{}", r.content);
    let r = call(&s.list(), json!({"path": "nope/../r/etc"})).await;
    assert_no_leak(&r, "list /etc");
    assert!(!r.content.contains("passwd"), "{}", r.content);
    // The refusal says what happened and what to do instead.
    assert!(
        r.content.contains("outside the workspace")
            && r.content.contains(&s.root.display().to_string()),
        "{}",
        r.content
    );
}

#[tokio::test]
async fn absolute_paths_and_dotdot_chains_are_refused() {
    let s = Setup::new();
    std::fs::create_dir(s.root.join("docs")).unwrap();
    let outside = s.outer.display().to_string();
    for via in [
        outside.clone(),
        "..".to_owned(),
        "../../..".to_owned() + &outside,
        "docs/../..".to_owned(),
        "./../ws/..".to_owned(),
        "docs/../../ws/../".to_owned(),
        format!("{}/..", s.root.display()),
    ] {
        every_tool_refuses(&s, &via).await;
    }
    let r = call(&s.read(), json!({"path": "/etc/passwd"})).await;
    assert_no_leak(&r, "read /etc/passwd");
    let r = call(&s.list(), json!({"path": "/"})).await;
    assert_no_leak(&r, "list /");
    assert!(!r.content.contains("[folder] etc/"), "{}", r.content);
}

#[tokio::test]
async fn symlink_loops_are_errors_not_hangs() {
    let s = Setup::new();
    symlink("loop2", s.root.join("loop1")).unwrap();
    symlink("loop1", s.root.join("loop2")).unwrap();
    symlink("self", s.root.join("self")).unwrap();
    for path in ["loop1", "self", "loop1/x", "nope/../self/x"] {
        let r = call(&s.read(), json!({"path": path})).await;
        assert!(r.is_error, "{r:?}");
        assert!(r.content.contains("symbolic links"), "{}", r.content);
        let r = call(&s.write(), json!({"path": path, "content": "x"})).await;
        assert!(r.is_error, "{r:?}");
        let r = call(&s.list(), json!({"path": path})).await;
        assert!(r.is_error, "{r:?}");
    }
    // The links are still links, and nothing else appeared.
    assert!(
        std::fs::symlink_metadata(s.root.join("self"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(names_in(&s.root), ["loop1", "loop2", "self"]);
    // A listing shows the loop without following it.
    let r = call(&s.list(), json!({"depth": 3})).await;
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.content.contains("[file] self -> self (unreadable)"),
        "{}",
        r.content
    );
}

#[tokio::test]
async fn dangling_links_are_followed_only_inside() {
    let s = Setup::new();
    symlink(s.outer.join("not-yet"), s.root.join("out-abs")).unwrap();
    symlink("../not-yet", s.root.join("out-rel")).unwrap();
    symlink("later.txt", s.root.join("in-rel")).unwrap();
    for path in ["out-abs", "out-rel", "nope/../out-rel"] {
        let r = call(&s.write(), json!({"path": path, "content": "pwned"})).await;
        assert_no_leak(&r, path);
        let r = call(
            &s.edit(),
            json!({"path": path, "old_text": "a", "new_text": "b"}),
        )
        .await;
        assert_no_leak(&r, path);
    }
    assert!(!s.outer.join("not-yet").exists());
    assert_outside_untouched(&s);
    let r = call(&s.write(), json!({"path": "in-rel", "content": "fine"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(s.root.join("later.txt")).unwrap(),
        "fine"
    );
}

#[tokio::test]
async fn proc_magic_links_are_refused() {
    let s = Setup::new();
    symlink("/proc/self/root", s.root.join("proc-root")).unwrap();
    symlink("/proc/self/cwd", s.root.join("proc-cwd")).unwrap();
    let held = std::fs::File::open(s.outer.join("secret.txt")).unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&held);
    let fd_link = format!("/proc/self/fd/{fd}");

    every_tool_refuses(&s, &format!("/proc/self/root{}", s.outer.display())).await;
    every_tool_refuses(&s, &format!("proc-root{}", s.outer.display())).await;
    every_tool_refuses(&s, &format!("nope/../proc-root{}", s.outer.display())).await;
    let r = call(&s.read(), json!({"path": fd_link})).await;
    assert_no_leak(&r, "read through /proc/self/fd");
    let r = call(
        &s.edit(),
        json!({"path": fd_link, "old_text": "top", "new_text": "no"}),
    )
    .await;
    assert_no_leak(&r, "edit through /proc/self/fd");
    // The test's own working directory (the crate) is outside the workspace too.
    let r = call(&s.read(), json!({"path": "proc-cwd/Cargo.toml"})).await;
    assert_no_leak(&r, "read through /proc/self/cwd");
    assert!(!r.content.contains("[package]"), "{}", r.content);
    assert_outside_untouched(&s);
    drop(held);
}

#[tokio::test]
async fn the_detours_still_work_inside_the_workspace() {
    let s = Setup::new();
    s.file("docs/guide.md", "guide\n");
    std::fs::create_dir(s.root.join("real")).unwrap();
    symlink("real", s.root.join("docs-alias")).unwrap();
    for detour in DETOURS {
        let r = call(&s.read(), json!({"path": format!("{detour}docs/guide.md")})).await;
        assert!(!r.is_error, "{detour}: {r:?}");
        assert_eq!(r.content, "guide");
        let r = call(
            &s.write(),
            json!({"path": format!("{detour}docs-alias/w.txt"), "content": detour}),
        )
        .await;
        assert!(!r.is_error, "{detour}: {r:?}");
        assert_eq!(
            std::fs::read_to_string(s.root.join("real/w.txt")).unwrap(),
            detour
        );
    }
    // The missing parts were only a detour: nothing was made for them.
    assert!(!s.root.join("nope").exists() && !s.root.join("a").exists());
    assert!(!s.root.join("docs/nope").exists());
    assert_eq!(names_in(&s.root.join("real")), ["w.txt"]);
}
