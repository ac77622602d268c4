//! Damaged session files: every intact line is recovered, the damage is counted and
//! told, and a torn last line is cut off (its bytes kept in `.damaged`) before anything
//! is appended, so a second resume finds a clean file.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::agent::{AssistantMessage, Block, Message};
use claw_tui::session::{self, Entry, SessionError, SessionWriter, damaged_path};
use std::io::Write;
use std::path::{Path, PathBuf};

const HEADER: &str = r#"{"type":"header","version":1,"id":"abc123","workspace":"/w","provider":"p","model":"m","created":1}"#;

fn user_line(text: &str, ts: u64) -> String {
    format!(
        r#"{{"type":"message","timestamp":{ts},"message":{{"role":"user","content":"{text}","timestamp":{ts}}}}}"#
    )
}

/// A session directory for workspace `ws` under `data`, with one file holding `lines`.
fn session_file(data: &Path, ws: &Path, id: &str, text: &str) -> PathBuf {
    let dir = session::sessions_dir(data, ws);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("20240101T000000Z_{id}.jsonl"));
    std::fs::write(&path, text).unwrap();
    path
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages.iter().map(Message::preview_text).collect()
}

#[test]
fn a_damaged_middle_line_is_skipped_counted_and_the_rest_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let text = [
        HEADER.to_owned(),
        user_line("one", 2),
        // What the original bug left behind: a fragment with a whole line appended.
        format!(
            "{}{}",
            r#"{"type":"message","timestamp":3,"message":{"role":"user","con"#,
            user_line("lost", 3)
        ),
        user_line("two", 4),
        "not json at all".to_owned(),
        user_line("three", 5),
    ]
    .join("\n")
        + "\n";
    let path = dir.path().join("20240101T000000Z_abc123.jsonl");
    std::fs::write(&path, text).unwrap();
    let data = session::load(&path).unwrap();
    assert_eq!(data.id(), "abc123");
    assert_eq!(texts(&data.messages), ["one", "two", "three"]);
    assert_eq!(data.damaged_lines, [3, 5]);
    assert_eq!(data.warnings.len(), 1, "{:?}", data.warnings);
    let warning = &data.warnings[0];
    assert!(
        warning.contains("skipped 2 damaged lines (3, 5)"),
        "{warning}"
    );
    assert!(warning.contains("line 3:"), "{warning}");
}

#[test]
fn an_unknown_role_is_one_damaged_line_not_a_lost_session() {
    let dir = tempfile::tempdir().unwrap();
    let wizard = r#"{"type":"message","timestamp":3,"message":{"role":"wizard","content":"?","timestamp":3}}"#;
    let text = format!(
        "{HEADER}\n{}\n{wizard}\n{}\n",
        user_line("before", 2),
        user_line("after", 4)
    );
    let path = dir.path().join("20240101T000000Z_abc123.jsonl");
    std::fs::write(&path, text).unwrap();
    let data = session::load(&path).unwrap();
    assert_eq!(texts(&data.messages), ["before", "after"]);
    assert_eq!(data.damaged_lines, [3]);
    assert!(data.warnings[0].contains("wizard"), "{:?}", data.warnings);
    assert_eq!(data.last_activity, 4);
}

#[test]
fn a_torn_last_line_is_skipped_by_load_and_cut_off_by_resume_into_the_damaged_file() {
    let dir = tempfile::tempdir().unwrap();
    let fragment = r#"{"type":"message","timestamp":3,"message":{"role":"user","con"#;
    let text = format!("{HEADER}\n{}\n{fragment}", user_line("kept", 2));
    let path = dir.path().join("20240101T000000Z_abc123.jsonl");
    std::fs::write(&path, &text).unwrap();

    let data = session::load(&path).unwrap();
    assert_eq!(texts(&data.messages), ["kept"]);
    assert_eq!(data.torn_tail, fragment.len() as u64);
    assert!(
        data.warnings[0].contains("incomplete"),
        "{:?}",
        data.warnings
    );
    // Reading alone changes nothing.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[tokio::test]
async fn resuming_twice_after_a_torn_line_keeps_every_message() {
    let dir = tempfile::tempdir().unwrap();
    let fragment = r#"{"type":"message","timestamp":3,"message":{"role":"user","con"#;
    let path = dir.path().join("20240101T000000Z_abc123.jsonl");
    std::fs::write(
        &path,
        format!("{HEADER}\n{}\n{fragment}", user_line("first", 2)),
    )
    .unwrap();

    let (writer, data) = SessionWriter::resume_file(&path).unwrap();
    assert!(
        data.warnings[0].contains("cut off") && data.warnings[0].contains(".damaged"),
        "{:?}",
        data.warnings
    );
    writer.append(&Entry::Message {
        timestamp: 4,
        message: Message::user("second"),
    });
    assert!(writer.close().await.is_saved());
    // The fragment's bytes are kept, and the new line starts a line of its own.
    let damaged = std::fs::read_to_string(damaged_path(&path)).unwrap();
    assert!(damaged.contains(fragment), "{damaged}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(fragment), "{text}");

    let (writer, data) = SessionWriter::resume_file(&path).unwrap();
    assert_eq!(texts(&data.messages), ["first", "second"]);
    assert!(data.warnings.is_empty(), "{:?}", data.warnings);
    writer.close().await;
}

/// The process stopped after the last record's bytes and before its newline: the
/// record is whole, so it is kept (by every reader, and by resuming, which ends it with
/// the newline), not cut aside as damage.
#[tokio::test]
async fn a_whole_last_record_without_its_newline_is_kept() {
    let data_dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let answer = serde_json::to_string(&Entry::Message {
        timestamp: 3,
        message: Message::Assistant(AssistantMessage {
            content: vec![Block::Text {
                text: "the last answer".into(),
            }],
            model: "m".into(),
            timestamp: 3,
            ..AssistantMessage::default()
        }),
    })
    .unwrap();
    let text = format!("{HEADER}\n{}\n{answer}", user_line("question", 2));
    let path = session_file(data_dir.path(), ws.path(), "abc123", &text);

    let data = session::load(&path).unwrap();
    assert_eq!(texts(&data.messages), ["question", "the last answer"]);
    assert_eq!(data.torn_tail, 0);
    assert!(data.warnings.is_empty(), "{:?}", data.warnings);
    let recent = session::load_recent(&path, 1).unwrap();
    assert_eq!(texts(&recent.messages), ["the last answer"]);
    let listed = session::list_sessions(data_dir.path(), ws.path());
    assert_eq!(listed[0].message_count, 2);
    assert_eq!(listed[0].last_activity, 3);

    let (writer, data) = SessionWriter::resume_file(&path).unwrap();
    assert_eq!(texts(&data.messages), ["question", "the last answer"]);
    assert!(data.warnings.is_empty(), "{:?}", data.warnings);
    writer.append(&Entry::Message {
        timestamp: 4,
        message: Message::user("next"),
    });
    assert!(writer.close().await.is_saved());
    assert!(!damaged_path(&path).exists(), "nothing was cut aside");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&format!("{answer}\n")), "{text}");
    let again = session::load(&path).unwrap();
    assert_eq!(
        texts(&again.messages),
        ["question", "the last answer", "next"]
    );
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
}

#[tokio::test]
async fn an_empty_file_is_listed_and_opened_and_gets_a_header() {
    let data_dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let path = session_file(data_dir.path(), ws.path(), "e0e0", "");
    let listed = session::list_sessions(data_dir.path(), ws.path());
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].id.as_str(), listed[0].message_count),
        ("e0e0", 0)
    );

    let (writer, data) = SessionWriter::resume_file(&path).unwrap();
    assert_eq!(data.id(), "e0e0");
    assert!(data.header_missing);
    assert!(data.warnings[0].contains("is empty"), "{:?}", data.warnings);
    writer.append(&Entry::Message {
        timestamp: 9,
        message: Message::user("now it has one"),
    });
    writer.close().await;
    let again = session::load(&path).unwrap();
    assert!(!again.header_missing, "the header was written");
    assert_eq!(again.id(), "e0e0");
    assert_eq!(texts(&again.messages), ["now it has one"]);
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
}

#[test]
fn a_file_with_nothing_of_a_session_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.jsonl");
    std::fs::write(&path, "hello\nworld\n").unwrap();
    let err = session::load(&path).unwrap_err();
    assert!(matches!(err, SessionError::Invalid { .. }), "{err}");
}

#[test]
fn a_damaged_session_is_listed_found_by_id_and_continued_first() {
    let data_dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let older = format!(
        "{}\n{}\n",
        HEADER.replace("abc123", "01d"),
        user_line("old", 5)
    );
    session_file(data_dir.path(), ws.path(), "01d", &older);
    let wizard = r#"{"type":"message","timestamp":50,"message":{"role":"wizard","timestamp":50}}"#;
    let newer = format!(
        "{}\n{}\n{wizard}\n{}\n",
        HEADER.replace("abc123", "ne3"),
        user_line("new", 40),
        user_line("newest", 60)
    );
    let newer_path = session_file(data_dir.path(), ws.path(), "ne3", &newer);

    let listed = session::list_sessions(data_dir.path(), ws.path());
    let ids: Vec<&str> = listed.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["ne3", "01d"], "most recent first, damaged or not");
    assert_eq!(listed[0].message_count, 2);
    assert_eq!(listed[0].damaged_lines, 1);
    assert_eq!(listed[0].first_prompt.as_deref(), Some("new"));
    let latest = session::latest_session(data_dir.path(), ws.path()).unwrap();
    assert_eq!(latest.path, newer_path);
    assert!(latest.passed_over.is_empty());
    assert_eq!(
        session::find_session(data_dir.path(), ws.path(), "ne").unwrap(),
        newer_path
    );
}

#[test]
fn the_newest_messages_can_be_read_from_the_end_alone() {
    let dir = tempfile::tempdir().unwrap();
    // Several of the reader's 256 KB blocks, and one line longer than a block.
    let mut text = format!("{HEADER}\n");
    for i in 0..2_000 {
        let content = if i == 1_990 {
            "x".repeat(300_000)
        } else {
            format!("m{i}")
        };
        text.push_str(&user_line(&content, i));
        text.push('\n');
        if i == 10 {
            text.push_str(&user_line(&"y".repeat(600_000), i));
            text.push('\n');
        }
    }
    // A damaged line near the end and a torn one at the very end are skipped.
    text.push_str("garbage\n");
    text.push_str(&user_line("m2000", 2_000));
    text.push('\n');
    text.push_str(r#"{"type":"message","times"#);
    let path = dir.path().join("20240101T000000Z_abc123.jsonl");
    std::fs::write(&path, &text).unwrap();

    let recent = session::load_recent(&path, 3).unwrap();
    assert_eq!(texts(&recent.messages), ["m1998", "m1999", "m2000"]);
    assert!(!recent.complete);
    let loaded = session::load(&path).unwrap().messages;
    let last_twenty = session::load_recent(&path, 20).unwrap();
    assert_eq!(last_twenty.messages, loaded[loaded.len() - 20..]);
    assert_eq!(last_twenty.messages[9].preview_text().len(), 300_000);
    let all = session::load_recent(&path, 10_000).unwrap();
    assert!(all.complete);
    assert_eq!(all.messages, loaded);
}

#[test]
fn a_line_in_another_field_order_is_read_like_any_other() {
    let dir = tempfile::tempdir().unwrap();
    // `message` before `type`, `role` last: the generic parser reads it.
    let reordered = r#"{"message":{"content":"hand-written","timestamp":2,"role":"user"},"timestamp":2,"type":"message"}"#;
    let path = dir.path().join("20240101T000000Z_abc123.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    writeln!(file, "{HEADER}\n{reordered}").unwrap();
    let data = session::load(&path).unwrap();
    assert_eq!(texts(&data.messages), ["hand-written"]);
    assert!(data.warnings.is_empty());
}

#[test]
fn the_latest_readable_queue_snapshot_wins_and_a_damaged_later_one_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let queue = |items: &[&str], ts: u64| {
        format!(
            r#"{{"type":"queue","timestamp":{ts},"steering":[],"follow_up":{}}}"#,
            serde_json::to_string(items).unwrap()
        )
    };
    let text = [
        HEADER.to_owned(),
        queue(&["a"], 2),
        user_line("one", 3),
        queue(&["a", "b"], 4),
        r#"{"type":"queue","timestamp":5,"steering":[],"follow_up":["a","#.to_owned(),
        user_line("two", 6),
    ]
    .join("\n")
        + "\n";
    let path = dir.path().join("20240101T000000Z_abc123.jsonl");
    std::fs::write(&path, text).unwrap();
    let data = session::load(&path).unwrap();
    assert_eq!(data.follow_up, ["a", "b"]);
    assert_eq!(data.damaged_lines, [5]);
    assert_eq!(texts(&data.messages), ["one", "two"]);
    assert_eq!(data.last_activity, 6);
}
