//! `read_file`: windows, caps and their notes, binary and missing files.

use super::{Setup, call};
use claw_tui::agent::{Tool, ToolUpdates};
use claw_tui::tools::fs::{MAX_READ_BYTES, MAX_READ_LINES};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn reads_text_without_line_numbers_by_default() {
    let s = Setup::new();
    s.file("f.txt", "alpha\nbeta\r\ngamma\n");
    let r = call(&s.read(), json!({"path": "f.txt"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.content, "alpha\nbeta\ngamma");
    assert_eq!(r.details["total_lines"], 3);
    assert_eq!(r.details["truncated"], serde_json::Value::Null);

    let r = call(&s.read(), json!({"path": "f.txt", "line_numbers": true})).await;
    assert_eq!(r.content, "     1\talpha\n     2\tbeta\n     3\tgamma");
}

#[tokio::test]
async fn line_cap_notes_how_to_continue() {
    let s = Setup::new();
    s.file("long.txt", numbered(2500));
    let r = call(&s.read(), json!({"path": "long.txt"})).await;
    assert!(!r.is_error);
    let (body, note) = r.content.split_once("\n\n").unwrap();
    assert_eq!(body.lines().count(), MAX_READ_LINES);
    assert_eq!(body.lines().last(), Some("line 2000"));
    assert_eq!(
        note,
        "[Showing lines 1-2000 of 2500 (2000-line limit). Use offset=2001 to continue.]"
    );
    assert_eq!(r.details["truncated"], "lines");

    let r = call(&s.read(), json!({"path": "long.txt", "offset": 2001})).await;
    assert_eq!(r.content.lines().count(), 500);
    assert!(r.content.starts_with("line 2001\n"));
    assert!(
        r.content.ends_with("line 2500"),
        "no note once the end is shown"
    );

    // A limit above the cap is held to the cap.
    let r = call(&s.read(), json!({"path": "long.txt", "limit": 5000})).await;
    assert!(r.content.contains("Use offset=2001 to continue."));
}

#[tokio::test]
async fn byte_cap_notes_how_to_continue() {
    let s = Setup::new();
    let line = "x".repeat(999);
    s.file("wide.txt", format!("{line}\n").repeat(100));
    let r = call(&s.read(), json!({"path": "wide.txt"})).await;
    let (body, note) = r.content.split_once("\n\n").unwrap();
    // 51 lines of 999 bytes plus separators fit in 50 KB; 52 do not.
    assert_eq!(body.lines().count(), 51);
    assert!(body.len() <= MAX_READ_BYTES);
    assert_eq!(
        note,
        "[Showing lines 1-51 of 100 (50 KB limit). Use offset=52 to continue.]"
    );
    assert_eq!(r.details["truncated"], "bytes");
}

#[tokio::test]
async fn a_single_huge_line_is_cut_with_a_note() {
    let s = Setup::new();
    s.file("min.js", format!("{}\nnext\n", "é".repeat(40_000)));
    let r = call(&s.read(), json!({"path": "min.js"})).await;
    let (body, note) = r.content.split_once("\n\n").unwrap();
    assert!(body.len() <= MAX_READ_BYTES && body.len() > MAX_READ_BYTES - 2);
    assert!(body.chars().all(|c| c == 'é'));
    assert_eq!(
        note,
        "[Line 1 is longer than 50 KB and was cut. Use offset=2 to continue after it.]"
    );
    let r = call(&s.read(), json!({"path": "min.js", "offset": 2})).await;
    assert_eq!(r.content, "next");
}

#[tokio::test]
async fn offset_and_limit_select_a_window() {
    let s = Setup::new();
    s.file("ten.txt", numbered(10));
    let r = call(
        &s.read(),
        json!({"path": "ten.txt", "offset": 3, "limit": 2}),
    )
    .await;
    assert_eq!(
        r.content,
        "line 3\nline 4\n\n[Showing lines 3-4 of 10. Use offset=5 to continue.]"
    );
    assert_eq!(r.details["start_line"], 3);
    assert_eq!(r.details["end_line"], 4);
    assert_eq!(r.details["truncated"], "limit");

    let r = call(
        &s.read(),
        json!({"path": "ten.txt", "offset": 9, "limit": 2}),
    )
    .await;
    assert_eq!(r.content, "line 9\nline 10");
    let r = call(
        &s.read(),
        json!({"path": "ten.txt", "offset": 10, "limit": 1, "line_numbers": true}),
    )
    .await;
    assert_eq!(r.content, "    10\tline 10");

    let r = call(&s.read(), json!({"path": "ten.txt", "offset": 11})).await;
    assert!(r.is_error);
    assert_eq!(
        r.content,
        "Error: offset 11 is past the end of ten.txt, which has 10 lines. Use an offset \
         from 1 to 10."
    );
    let r = call(&s.read(), json!({"path": "ten.txt", "offset": 0})).await;
    assert!(r.is_error);
    assert!(
        r.content.contains("\"offset\" must be at least 1"),
        "{}",
        r.content
    );
}

#[tokio::test]
async fn a_last_line_without_newline_counts() {
    let s = Setup::new();
    s.file("f.txt", "a\nb");
    let r = call(&s.read(), json!({"path": "f.txt", "limit": 1})).await;
    assert_eq!(
        r.content,
        "a\n\n[Showing lines 1-1 of 2. Use offset=2 to continue.]"
    );
}

#[tokio::test]
async fn binary_files_are_refused_with_size_and_type() {
    let s = Setup::new();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.resize(100, 7);
    s.file("pic.png", &png);
    let r = call(&s.read(), json!({"path": "pic.png"})).await;
    assert!(r.is_error);
    // It starts like a PNG, so it is read as an image, and the decoder's reason is told.
    assert!(
        r.content
            .starts_with("Error: pic.png is a damaged PNG image (100 B) that cannot be shown: "),
        "{}",
        r.content
    );
    assert!(r.images.is_empty());

    s.file("tool.elf", b"\x7fELF\x02\x01\x01\x00rest of the header");
    let r = call(&s.read(), json!({"path": "tool.elf"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("is a binary file ("), "{}", r.content);

    let mut blob = vec![b'a'; 3000];
    blob[10] = 0;
    s.file("data.bin", &blob);
    let r = call(&s.read(), json!({"path": "data.bin"})).await;
    assert!(r.is_error);
    assert!(
        r.content.contains("(binary data, 2.9 KiB)"),
        "{}",
        r.content
    );
}

#[tokio::test]
async fn missing_files_and_directories_get_clear_errors() {
    let s = Setup::new();
    let r = call(&s.read(), json!({"path": "nope.txt"})).await;
    assert!(r.is_error);
    assert_eq!(
        r.content,
        "Error: File not found: nope.txt. Check the path; list_dir shows what exists."
    );
    std::fs::create_dir(s.root.join("dir")).unwrap();
    let r = call(&s.read(), json!({"path": "dir"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("is a directory"), "{}", r.content);
    let r = call(&s.read(), json!({})).await;
    assert!(r.is_error);
    assert!(r.content.contains("Missing required argument \"path\""));
}

#[cfg(unix)]
#[tokio::test]
async fn pipes_are_refused_instead_of_blocking() {
    let s = Setup::new();
    let fifo = s.root.join("pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let r = call(&s.read(), json!({"path": "pipe"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("not a regular file"), "{}", r.content);
    let r = call(
        &s.edit(),
        json!({"path": "pipe", "old_text": "a", "new_text": "b"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("not a regular file"), "{}", r.content);
}

#[tokio::test]
async fn empty_files_say_so() {
    let s = Setup::new();
    s.file("empty.txt", "");
    let r = call(&s.read(), json!({"path": "empty.txt"})).await;
    assert!(!r.is_error);
    assert_eq!(r.content, "[empty.txt is empty.]");
}

#[tokio::test]
async fn a_cancelled_read_stops() {
    let s = Setup::new();
    s.file("f.txt", numbered(10));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let tool = s.read();
    let r = tool
        .execute(
            "c",
            crate::support::checked(&tool, json!({"path": "f.txt"})),
            cancel,
            ToolUpdates::discard(),
        )
        .await;
    assert!(r.is_error);
    assert!(r.content.starts_with("Cancelled"), "{}", r.content);
}
