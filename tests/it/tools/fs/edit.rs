//! `edit_file`: uniqueness, line endings, the final newline, the diff.

use super::{Setup, call, names_in};
use serde_json::json;

#[tokio::test]
async fn replaces_a_unique_snippet_and_shows_a_diff() {
    let s = Setup::new();
    let path = s.file("src/lib.rs", "fn a() {}\nfn b() {\n    1\n}\nfn c() {}\n");
    let r = call(
        &s.edit(),
        json!({"path": "src/lib.rs", "old_text": "    1\n", "new_text": "    2\n    3\n"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "fn a() {}\nfn b() {\n    2\n    3\n}\nfn c() {}\n"
    );
    let diff = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,5 +1,6 @@\n fn a() {}\n \
                fn b() {\n-    1\n+    2\n+    3\n }\n fn c() {}\n";
    assert_eq!(r.details["diff"], diff);
    assert_eq!(
        r.content,
        format!(
            "Edited src/lib.rs: replaced 1 occurrence.\n\n{}",
            diff.trim_end()
        )
    );
    assert_eq!(r.details["first_changed_line"], 3);
    assert_eq!(
        names_in(&s.root.join("src")),
        ["lib.rs"],
        "no temp file left behind"
    );
}

#[tokio::test]
async fn no_match_is_an_error_and_leaves_the_file_alone() {
    let s = Setup::new();
    let path = s.file("f.txt", "one\ntwo\n");
    let r = call(
        &s.edit(),
        json!({"path": "f.txt", "old_text": "three", "new_text": "3"}),
    )
    .await;
    assert!(r.is_error);
    assert_eq!(r.content, "Error: old_text not found in f.txt");
    assert_eq!(std::fs::read(&path).unwrap(), b"one\ntwo\n");
}

#[tokio::test]
async fn several_matches_are_refused_and_leave_the_file_alone() {
    let s = Setup::new();
    let path = s.file("f.txt", "x = 1;\ny = 1;\nz = 1;\n");
    let r = call(
        &s.edit(),
        json!({"path": "f.txt", "old_text": " = 1;", "new_text": " = 2;"}),
    )
    .await;
    assert!(r.is_error);
    assert_eq!(
        r.content,
        "Warning: old_text found 3 times in f.txt. Please provide a more unique text \
         snippet. No changes made."
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"x = 1;\ny = 1;\nz = 1;\n");

    // Overlapping occurrences are ambiguous too.
    let path = s.file("g.txt", "aaa");
    let r = call(
        &s.edit(),
        json!({"path": "g.txt", "old_text": "aa", "new_text": "b"}),
    )
    .await;
    assert_eq!(
        r.content,
        "Warning: old_text found 2 times in g.txt. Please provide a more unique text \
         snippet. No changes made."
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"aaa");
}

#[tokio::test]
async fn crlf_files_are_matched_with_lf_text_and_stay_crlf() {
    let s = Setup::new();
    let path = s.file("win.txt", "a\r\nb\r\nc\r\n");
    let r = call(
        &s.edit(),
        json!({"path": "win.txt", "old_text": "b\nc", "new_text": "B\nC\nD"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(std::fs::read(&path).unwrap(), b"a\r\nB\r\nC\r\nD\r\n");
    assert!(!r.details["diff"].as_str().unwrap().contains('\r'));
    assert!(r.content.contains("-b\n-c\n+B\n+C\n+D"), "{}", r.content);
}

#[tokio::test]
async fn the_final_newline_is_preserved() {
    let s = Setup::new();
    // The model drops the final newline along with the last line.
    let path = s.file("crlf.txt", "a\r\nb\r\nc\r\n");
    let r = call(
        &s.edit(),
        json!({"path": "crlf.txt", "old_text": "b\nc\n", "new_text": "X"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(std::fs::read(&path).unwrap(), b"a\r\nX\r\n");

    // A file without one does not gain one.
    let path = s.file("bare.txt", "a\nb");
    let r = call(
        &s.edit(),
        json!({"path": "bare.txt", "old_text": "b", "new_text": "B\n"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(std::fs::read(&path).unwrap(), b"a\nB");
}

#[tokio::test]
async fn lf_files_stay_lf_and_a_bom_survives() {
    let s = Setup::new();
    let path = s.file("bom.txt", "\u{feff}first\nsecond\n");
    let r = call(
        &s.edit(),
        json!({"path": "bom.txt", "old_text": "first", "new_text": "1st\r\n1.5th"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "\u{feff}1st\n1.5th\nsecond\n"
    );
}

#[tokio::test]
async fn edits_replace_the_file_atomically() {
    let s = Setup::new();
    let path = s.file("f.txt", "keep\nchange me\n");
    std::fs::hard_link(&path, s.root.join("old-link")).unwrap();
    let r = call(
        &s.edit(),
        json!({"path": "f.txt", "old_text": "change me", "new_text": "changed"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep\nchanged\n");
    assert_eq!(
        std::fs::read_to_string(s.root.join("old-link")).unwrap(),
        "keep\nchange me\n"
    );
    assert_eq!(names_in(&s.root), ["f.txt", "old-link"]);
}

#[tokio::test]
async fn refusals_leave_files_alone() {
    let s = Setup::new();
    let path = s.file("f.txt", "same\n");
    let r = call(
        &s.edit(),
        json!({"path": "f.txt", "old_text": "", "new_text": "x"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("old_text is empty"), "{}", r.content);
    let r = call(
        &s.edit(),
        json!({"path": "f.txt", "old_text": "same", "new_text": "same"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("nothing would change"), "{}", r.content);
    assert_eq!(std::fs::read(&path).unwrap(), b"same\n");

    let r = call(
        &s.edit(),
        json!({"path": "missing.txt", "old_text": "a", "new_text": "b"}),
    )
    .await;
    assert!(r.is_error);
    assert!(
        r.content.starts_with("Error: File not found: missing.txt"),
        "{}",
        r.content
    );
    assert!(!s.root.join("missing.txt").exists());

    s.file("bin", b"\xff\xfe\x00\x01");
    let r = call(
        &s.edit(),
        json!({"path": "bin", "old_text": "a", "new_text": "b"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("not UTF-8 text"), "{}", r.content);

    let r = call(&s.edit(), json!({"path": "f.txt", "old_text": "same"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("\"new_text\""), "{}", r.content);
}
