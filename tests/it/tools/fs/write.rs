//! `write_file`: parent directories, atomic replacement, no leftovers.

use super::{Setup, call, names_in};
use serde_json::json;

#[tokio::test]
async fn creates_parent_directories_and_reports_bytes() {
    let s = Setup::new();
    let r = call(&s.write(), json!({"path": "a/b/c.txt", "content": "héllo"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.content, "Wrote 6 bytes to a/b/c.txt (created).");
    assert_eq!(r.details["bytes"], 6);
    assert_eq!(r.details["created"], true);
    assert_eq!(
        std::fs::read_to_string(s.root.join("a/b/c.txt")).unwrap(),
        "héllo"
    );
    assert_eq!(
        names_in(&s.root.join("a/b")),
        ["c.txt"],
        "no temp file left behind"
    );
}

#[tokio::test]
async fn replaces_an_existing_file_by_rename() {
    let s = Setup::new();
    let path = s.file("f.txt", "old content that is longer\n");
    // A hard link keeps the old inode: an in-place rewrite would change it too.
    std::fs::hard_link(&path, s.root.join("old-link")).unwrap();

    let r = call(&s.write(), json!({"path": "f.txt", "content": "new\n"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.content, "Wrote 4 bytes to f.txt (replaced).");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
    assert_eq!(
        std::fs::read_to_string(s.root.join("old-link")).unwrap(),
        "old content that is longer\n"
    );
    assert_eq!(
        names_in(&s.root),
        ["f.txt", "old-link"],
        "no temp file left behind"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn keeps_the_permissions_of_a_replaced_file() {
    use std::os::unix::fs::PermissionsExt;
    let s = Setup::new();
    let path = s.file("script.sh", "echo old\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
    let r = call(
        &s.write(),
        json!({"path": "script.sh", "content": "echo new\n"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o751);
}

#[tokio::test]
async fn writes_empty_content() {
    let s = Setup::new();
    let r = call(&s.write(), json!({"path": "empty", "content": ""})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.content, "Wrote 0 bytes to empty (created).");
    assert_eq!(std::fs::read(s.root.join("empty")).unwrap(), b"");
}

#[tokio::test]
async fn refuses_directories_and_bad_arguments() {
    let s = Setup::new();
    std::fs::create_dir(s.root.join("dir")).unwrap();
    let r = call(&s.write(), json!({"path": "dir", "content": "x"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("dir is a directory"), "{}", r.content);
    assert!(s.root.join("dir").is_dir());

    let r = call(&s.write(), json!({"path": "f.txt"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("\"content\""), "{}", r.content);
    let r = call(&s.write(), json!({"path": 5, "content": "x"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("must be a string"), "{}", r.content);
    assert_eq!(names_in(&s.root), ["dir"]);
}

#[tokio::test]
async fn a_file_in_the_way_of_a_parent_directory_is_an_error() {
    let s = Setup::new();
    s.file("blocker", "x");
    let r = call(&s.write(), json!({"path": "blocker/f.txt", "content": "x"})).await;
    assert!(r.is_error, "{r:?}");
    assert!(r.content.starts_with("Error: could not"), "{}", r.content);
    assert_eq!(
        std::fs::read_to_string(s.root.join("blocker")).unwrap(),
        "x"
    );
}
