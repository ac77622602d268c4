//! The session store: round trips, resume, torn lines, versions, locks, export.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::reading::request_transcript;
use crate::support::{Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::{
    Agent, AssistantMessage, Block, Message, NoticeLevel, NotificationMessage, StopReason,
    ThinkingSignature, ToolResultMessage, UserMessage,
};
use claw_tui::runtime::InboundMessage;
use claw_tui::session::{self, Entry, SessionError, SessionWriter, export};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

fn every_kind() -> Vec<Message> {
    let mut assistant = AssistantMessage::empty("m");
    assistant.stop_reason = StopReason::ToolUse;
    assistant.content = vec![
        Block::Thinking {
            thinking: "hmm".into(),
            signature: Some(ThinkingSignature::Anthropic("sig".into())),
        },
        Block::Text {
            text: "calling".into(),
        },
        Block::ToolCall {
            id: "c1".into(),
            name: "echo".into(),
            args: json!({"text": "x"}),
        },
    ];
    vec![
        Message::User(UserMessage::new("hi")),
        Message::Assistant(assistant),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "echo".into(),
            content: "x".into(),
            images: Vec::new(),
            details: json!({"n": 1}),
            is_error: false,
            timestamp: 5,
        }),
        Message::Notification(NotificationMessage {
            source: "cron".into(),
            content: "[Cron job \"a\" (1) fired]".into(),
            timestamp: 6,
        }),
        Message::notice(NoticeLevel::Warning, "turn limit"),
    ]
}

fn only_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = walk(dir);
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test]
async fn every_message_kind_round_trips() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(data.path(), ws.path(), "demo", "m").unwrap();
    let messages = every_kind();
    for message in messages.clone() {
        writer.append(&Entry::Message {
            timestamp: 1,
            message,
        });
    }
    writer.append(&Entry::Queue {
        timestamp: 2,
        steering: vec!["s".into()],
        follow_up: vec!["f".into()],
    });
    writer.append(&Entry::Setting {
        timestamp: 3,
        key: "model".into(),
        value: json!("other"),
    });
    let first = InboundMessage::new("system", "cron", "x", "n");
    let second = InboundMessage::new("system", "subagent", "x", "m");
    writer.append(&Entry::PendingNotifications {
        timestamp: 4,
        pending: vec![first.clone()],
        inbox_offset: 0,
    });
    let id = writer.id().to_owned();
    let path = writer.path().to_path_buf();
    writer.close().await;
    // A notification another session left in this one's inbox joins the list.
    session::record_undelivered(&path, &second).unwrap();
    let loaded = session::load(&only_file(data.path())).unwrap();
    assert_eq!(loaded.id(), id);
    assert_eq!(loaded.messages, messages);
    assert_eq!(loaded.steering, ["s"]);
    assert_eq!(loaded.follow_up, ["f"]);
    assert_eq!(loaded.settings["model"], json!("other"));
    assert_eq!(loaded.pending_notifications, [first, second]);
    assert!(loaded.warnings.is_empty());
}

/// A resumed history is kept for the session's life: an answer's block list holds its
/// blocks and no spare room (serde grows it to four places).
#[tokio::test]
async fn a_resumed_answer_keeps_no_spare_room_in_its_block_list() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(data.path(), ws.path(), "demo", "m").unwrap();
    for message in every_kind() {
        writer.append(&Entry::Message {
            timestamp: 1,
            message,
        });
    }
    writer.close().await;
    let loaded = session::load(&only_file(data.path())).unwrap();
    let answers: Vec<&AssistantMessage> = loaded
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(a),
            _ => None,
        })
        .collect();
    assert!(!answers.is_empty());
    for answer in answers {
        assert_eq!(answer.content.capacity(), answer.content.len());
    }
}

#[tokio::test]
async fn a_torn_last_line_is_skipped_with_a_warning() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(data.path(), ws.path(), "demo", "m").unwrap();
    writer.append(&Entry::Message {
        timestamp: 1,
        message: Message::user("kept"),
    });
    writer.close().await;
    let path = only_file(data.path());
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"type":"message","timestamp":2,"message":{"role":"user","con"#)
        .unwrap();
    let loaded = session::load(&path).unwrap();
    assert_eq!(loaded.messages.len(), 1);
    assert_eq!(loaded.messages[0].preview_text(), "kept");
    assert_eq!(loaded.warnings.len(), 1);
    assert!(
        loaded.warnings[0].contains("incomplete"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn a_file_from_a_newer_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(
        &path,
        "{\"type\":\"header\",\"version\":99,\"id\":\"x\",\"workspace\":\"/w\",\"provider\":\"p\",\"model\":\"m\",\"created\":1}\n",
    )
    .unwrap();
    let err = session::load(&path).unwrap_err();
    assert!(matches!(err, SessionError::NewerVersion { found: 99, .. }));
    assert!(err.to_string().contains("upgrade claw-tui"), "{err}");
}

#[tokio::test]
async fn a_session_has_one_writer_and_fork_copies_history() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(data.path(), ws.path(), "demo", "m").unwrap();
    writer.append(&Entry::Message {
        timestamp: 1,
        message: Message::user("original"),
    });
    writer.sync();
    let path = writer.path().to_path_buf();
    // Wait until the writer thread has written the line.
    let loaded = loop {
        if let Ok(loaded) = session::load(&path)
            && !loaded.messages.is_empty()
        {
            break loaded;
        }
        tokio::task::yield_now().await;
    };
    let err = SessionWriter::resume(&loaded)
        .err()
        .expect("second writer refused");
    assert!(err.to_string().contains("--fork"), "{err}");
    let fork = SessionWriter::fork(&loaded, data.path(), ws.path(), "demo", "m").unwrap();
    assert_ne!(fork.path(), path);
    let fork_path = fork.path().to_path_buf();
    fork.close().await;
    writer.close().await;
    assert_eq!(session::load(&fork_path).unwrap().messages, loaded.messages);
    let sessions = session::list_sessions(data.path(), ws.path());
    assert_eq!(
        sessions.len(),
        2,
        "two sessions in one workspace stay separate"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_continues_with_its_history_and_queues() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();

    let provider = ScriptedProvider::new(vec![Reply::text(&["first answer"])]);
    let agent = Agent::new(provider, "scripted");
    let writer = SessionWriter::create(data.path(), ws.path(), "scripted", "scripted").unwrap();
    let (finish, task) = session::record_events(&agent, writer);
    let mut events = agent.subscribe(None);
    agent.prompt("first question").unwrap();
    until_agent_end(&mut events).await;
    agent.follow_up("queued for later");
    let _ = agent.state();
    finish.send(()).unwrap();
    task.await.unwrap();

    let latest = session::list_sessions(data.path(), ws.path()).remove(0);
    assert_eq!(latest.first_prompt.as_deref(), Some("first question"));
    assert_eq!(latest.message_count, 2);
    let loaded = session::load(&latest.path).unwrap();
    assert_eq!(loaded.follow_up, ["queued for later"]);

    let provider = ScriptedProvider::new(vec![Reply::text(&["second answer"])]);
    let resumed = Agent::new(provider.clone(), "scripted");
    resumed.replace_messages(loaded.messages.clone()).unwrap();
    let mut events = resumed.subscribe(None);
    resumed.prompt("second question").unwrap();
    until_agent_end(&mut events).await;
    let request = &provider.requests()[0];
    let texts = request_transcript(request);
    assert_eq!(
        texts,
        [
            "user:first question",
            "assistant:first answer",
            "user:second question"
        ]
    );
}

#[test]
fn export_writes_markdown_and_json() {
    let data = claw_tui::session::SessionData {
        messages: every_kind(),
        header: Some(claw_tui::session::Header {
            version: 1,
            id: "abc".into(),
            workspace: "/w".into(),
            provider: "demo".into(),
            model: "m".into(),
            created: 0,
        }),
        ..Default::default()
    };
    let md = export::to_markdown(&data);
    assert!(md.starts_with("# Session abc"), "{md}");
    assert!(md.contains("## User\n\nhi"), "{md}");
    assert!(md.contains("**Tool call `echo`**"), "{md}");
    assert!(
        md.contains("**Tool result `echo`**\n\n```text\nx\n```"),
        "{md}"
    );
    assert!(md.contains("> hmm"), "{md}");
    assert!(md.contains("## Notification (cron)"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&export::to_json(&data)).unwrap();
    assert_eq!(json["header"]["id"], "abc");
    assert_eq!(json["messages"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn a_session_that_never_got_a_message_is_not_kept() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let empty = SessionWriter::create(data.path(), ws.path(), "demo", "m").unwrap();
    empty.append(&Entry::Setting {
        timestamp: 1,
        key: "model".into(),
        value: json!("other"),
    });
    empty.close().await;
    assert!(
        walk(data.path()).is_empty(),
        "starting and quitting leaves nothing"
    );

    let used = SessionWriter::create(data.path(), ws.path(), "demo", "m").unwrap();
    used.append(&Entry::Message {
        timestamp: 1,
        message: Message::user("keep me"),
    });
    used.close().await;
    let path = only_file(data.path());
    // Resumed and closed without a new message: still kept.
    let (again, _) = SessionWriter::resume_file(&path).unwrap();
    again.close().await;
    assert_eq!(session::load(&path).unwrap().messages.len(), 1);
}

/// The pending list is the last whole list written and the notifications that arrived
/// after it, in order; the listing counts them the same way.
#[tokio::test]
async fn notifications_that_arrived_join_the_last_pending_list_written() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(data.path(), ws.path(), "demo", "m").unwrap();
    writer.append(&Entry::Message {
        timestamp: 1,
        message: Message::user("hello"),
    });
    let note = |n: &str| InboundMessage::new("system", "cron", "x", n);
    let list = |timestamp, pending: Vec<InboundMessage>| Entry::PendingNotifications {
        timestamp,
        pending,
        inbox_offset: 0,
    };
    let added = |timestamp, added: Vec<InboundMessage>| Entry::PendingAdded {
        timestamp,
        added,
        inbox_offset: 0,
    };
    writer.append(&list(2, vec![note("a")]));
    writer.append(&added(3, vec![note("b")]));
    // Delivered: the list is emptied; then more arrive.
    writer.append(&list(4, vec![]));
    writer.append(&added(5, vec![note("c")]));
    writer.append(&added(6, vec![note("d"), note("e")]));
    let path = writer.path().to_path_buf();
    writer.close().await;
    let loaded = session::load(&path).unwrap();
    let contents: Vec<&str> = loaded
        .pending_notifications
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(contents, ["c", "d", "e"]);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    // Waiting notifications are not activity.
    assert_eq!(loaded.last_activity, 1);
    let listed = session::list_sessions(data.path(), ws.path());
    assert_eq!(listed[0].waiting, 3);
}

/// The listing gives each session its `/name` (a side file, the session untouched) and
/// its last exchange: the last prompt and the text of the answer after it, clipped.
#[tokio::test]
async fn the_listing_has_the_name_and_the_last_exchange() {
    use claw_tui::agent::{AssistantMessage, Block};
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(data.path(), ws.path(), "demo", "m").unwrap();
    let answer = |text: &str| {
        Message::Assistant(AssistantMessage {
            content: vec![Block::Text { text: text.into() }],
            ..AssistantMessage::default()
        })
    };
    let long = "x".repeat(1000);
    for (t, message) in [
        Message::user("first question"),
        answer("first answer"),
        Message::user("second question"),
        answer(&long),
    ]
    .into_iter()
    .enumerate()
    {
        writer.append(&Entry::Message {
            timestamp: t as u64 + 1,
            message,
        });
    }
    let path = writer.path().to_path_buf();
    writer.close().await;
    let before = std::fs::read(&path).unwrap();
    let kept = session::name::write_name(&path, "parser rewrite").unwrap();
    assert_eq!(kept, "parser rewrite");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the session file is not touched"
    );

    let listed = session::list_sessions(data.path(), ws.path());
    let s = &listed[0];
    assert_eq!(s.name.as_deref(), Some("parser rewrite"));
    assert_eq!(s.first_prompt.as_deref(), Some("first question"));
    assert_eq!(s.last_exchange.prompt.as_deref(), Some("second question"));
    let answer = s.last_exchange.answer.as_deref().unwrap();
    assert!(answer.starts_with("xxx") && answer.ends_with('…') && answer.chars().count() < 300);
    // The session still loads as it was.
    assert_eq!(session::load(&path).unwrap().messages.len(), 4);
}
