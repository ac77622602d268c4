//! `list_dir`: prefixes, sizes, order, depth, .gitignore and the entry cap.

use super::{Setup, call};
use claw_tui::tools::fs::MAX_LIST_ENTRIES;
use serde_json::json;

#[tokio::test]
async fn entries_are_prefixed_sorted_and_sized() {
    let s = Setup::new();
    s.file("b.txt", "0123456789");
    s.file("c.bin", vec![0u8; 2048]);
    s.file("a_dir/inner.txt", "x");
    s.file(".hidden", "");
    let r = call(&s.list(), json!({})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        r.content,
        "[file] .hidden (0 B)\n[folder] a_dir/\n[file] b.txt (10 B)\n[file] c.bin (2 KiB)"
    );
    assert_eq!(r.details["entries"], 4);
    let r = call(&s.list(), json!({"path": "a_dir"})).await;
    assert_eq!(r.content, "[file] inner.txt (1 B)");
}

#[tokio::test]
async fn depth_descends_with_relative_paths() {
    let s = Setup::new();
    s.file("src/main.rs", "fn main() {}\n");
    s.file("src/deep/er/file.rs", "");
    s.file("README", "r");
    let r = call(&s.list(), json!({"depth": 2})).await;
    assert_eq!(
        r.content,
        "[file] README (1 B)\n[folder] src/\n[folder] src/deep/\n[file] src/main.rs (13 B)"
    );
    let r = call(&s.list(), json!({"depth": 4})).await;
    assert!(
        r.content.contains("[file] src/deep/er/file.rs (0 B)"),
        "{}",
        r.content
    );
}

#[tokio::test]
async fn gitignore_is_honoured_only_below_depth_one() {
    let s = Setup::new();
    s.file(".gitignore", "target/\n*.log\n");
    s.file("target/debug/app", "bin");
    s.file("run.log", "log");
    s.file("src/lib.rs", "");
    s.file("src/trace.log", "log");
    s.file(".git/HEAD", "ref: refs/heads/main\n");

    let r = call(&s.list(), json!({"path": ".", "depth": 1})).await;
    assert_eq!(
        r.content,
        "[folder] .git/\n[file] .gitignore (14 B)\n[file] run.log (3 B)\n[folder] src/\n\
         [folder] target/"
    );

    let r = call(&s.list(), json!({"depth": 3})).await;
    assert_eq!(
        r.content,
        "[file] .gitignore (14 B)\n[folder] src/\n[file] src/lib.rs (0 B)"
    );
    // Listing a subdirectory deeply still applies the parent's .gitignore.
    let r = call(&s.list(), json!({"path": "src", "depth": 2})).await;
    assert_eq!(r.content, "[file] lib.rs (0 B)");
}

#[tokio::test]
async fn ignore_rules_above_the_workspace_do_not_apply() {
    let s = Setup::new();
    std::fs::write(s.outer.join(".gitignore"), "*\n").unwrap();
    s.file("notes/a.txt", "a");
    let r = call(&s.list(), json!({"depth": 2})).await;
    assert_eq!(r.content, "[folder] notes/\n[file] notes/a.txt (1 B)");
    let r = call(&s.list(), json!({"path": "notes", "depth": 2})).await;
    assert_eq!(r.content, "[file] a.txt (1 B)");
}

#[tokio::test]
async fn the_listing_stops_at_the_cap_with_a_note() {
    let s = Setup::new();
    let dir = s.root.join("many");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..MAX_LIST_ENTRIES + 5 {
        std::fs::write(dir.join(format!("f{i:04}")), "").unwrap();
    }
    let r = call(&s.list(), json!({"path": "many"})).await;
    let (body, note) = r.content.split_once("\n\n").unwrap();
    assert_eq!(body.lines().count(), MAX_LIST_ENTRIES);
    assert_eq!(body.lines().last(), Some("[file] f0999 (0 B)"));
    assert_eq!(
        note,
        "[Showing the first 1000 entries; more exist. List a subdirectory or use a smaller \
         depth to see the rest.]"
    );
    assert_eq!(r.details["truncated"], true);

    // Exactly at the cap nothing is missing, so there is no note.
    for i in MAX_LIST_ENTRIES..MAX_LIST_ENTRIES + 5 {
        std::fs::remove_file(dir.join(format!("f{i:04}"))).unwrap();
    }
    let r = call(&s.list(), json!({"path": "many"})).await;
    assert_eq!(r.content.lines().count(), MAX_LIST_ENTRIES);
    assert_eq!(r.details["truncated"], false);
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_show_their_target() {
    let s = Setup::new();
    s.file("real/x", "");
    std::os::unix::fs::symlink("real", s.root.join("alias")).unwrap();
    let r = call(&s.list(), json!({"depth": 2})).await;
    assert_eq!(
        r.content,
        "[folder] alias/ -> real\n[folder] real/\n[file] real/x (0 B)"
    );
}

#[tokio::test]
async fn files_missing_paths_and_empty_directories() {
    let s = Setup::new();
    let r = call(&s.list(), json!({})).await;
    assert!(!r.is_error);
    assert_eq!(r.content, "[. is empty.]");
    s.file("f.txt", "");
    let r = call(&s.list(), json!({"path": "f.txt"})).await;
    assert!(r.is_error);
    assert!(
        r.content.contains("f.txt is a file, not a directory"),
        "{}",
        r.content
    );
    let r = call(&s.list(), json!({"path": "nowhere"})).await;
    assert!(r.is_error);
    assert!(
        r.content.starts_with("Error: Directory not found: nowhere"),
        "{}",
        r.content
    );
    let r = call(&s.list(), json!({"depth": 0})).await;
    assert!(r.is_error);
    assert!(
        r.content.contains("\"depth\" must be at least 1"),
        "{}",
        r.content
    );
}
