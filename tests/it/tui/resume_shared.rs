//! A session resumed in the client is in memory once: the chat's prompts and answers
//! and the tool tree's results read the very messages the agent holds, and the agent's
//! next message leaves them shared rather than copying the history.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::control::Rig;
use crate::support::tui::app;
use crate::support::tui::scene::{assistant, call, screen, text};
use crate::support::{Reply, until_agent_end};
use claw_tui::agent::{EventKind, Message, StopReason, ToolResultMessage};
use claw_tui::session::{Entry, OpenedSession, Resume, SessionService, SessionWriter};
use claw_tui::tui::chat::EntryKind;
use claw_tui::tui::sessions::{self, LoadedSession};
use claw_tui::tui::{Effect, Msg};
use serde_json::json;
use std::sync::Arc;

/// A question, a call, its result and an answer, `groups` times.
fn history(groups: usize) -> Vec<Message> {
    let mut messages = Vec::new();
    for g in 0..groups {
        messages.push(Message::user(format!("Question {g}")));
        messages.push(Message::Assistant(assistant(
            vec![call(
                &format!("call-{g}"),
                "list_dir",
                json!({"path": "src"}),
            )],
            StopReason::ToolUse,
        )));
        messages.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: format!("call-{g}"),
            tool_name: "list_dir".into(),
            content: format!("file_{g}.rs\n"),
            images: Vec::new(),
            details: json!(null),
            is_error: false,
            timestamp: 0,
        }));
        messages.push(Message::Assistant(assistant(
            vec![text(&format!("Answer {g}"))],
            StopReason::Stop,
        )));
    }
    messages
}

#[tokio::test]
async fn the_chat_and_the_tree_show_the_agents_own_messages() {
    let rig = Rig::start("", &[], vec![Reply::text(&["noted"])]);
    let agent = &rig.main.agent;
    let earlier =
        SessionWriter::create(&rig.settings.data_dir, rig.ws(), "demo", "scripted").unwrap();
    let path = earlier.path().to_path_buf();
    for (i, message) in history(25).into_iter().enumerate() {
        earlier.append(&Entry::Message {
            timestamp: i as u64,
            message,
        });
    }
    earlier.close().await;
    let (writer, data) = SessionWriter::resume_file(&path).unwrap();
    let mut sessions = SessionService::new(
        agent.clone(),
        Some(rig.main.session_binding(&rig.settings)),
        &rig.settings,
        true,
    );
    let opened = OpenedSession {
        writer,
        resumed: Some(data),
        notes: Vec::new(),
    };
    let entered = sessions.record(opened, Resume::OnScreen);
    let state = agent.state();
    let held = state.messages.frozen().clone();
    drop(state);
    assert_eq!(held.len(), 100);
    assert!(
        Arc::ptr_eq(&entered.shown, &held),
        "the screen gets the agent's messages, not a copy"
    );

    let mut app = app();
    let effects = app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some(entered.id.clone()),
            messages: entered.shown.clone(),
            resumed: true,
            ..LoadedSession::default()
        },
    ))));
    assert_eq!(effects, [Effect::Sessions(sessions::Effect::Ready)]);
    // Every prompt and answer is an entry that reads its message in the agent's history.
    let mut shown = Vec::new();
    for entry in app.chat().transcript().entries() {
        match &entry.kind {
            EntryKind::Recorded(r) => {
                assert!(
                    Arc::ptr_eq(r.history(), &held),
                    "entry {} copied",
                    r.index()
                );
                shown.push(r.index());
            }
            EntryKind::User(text) => panic!("a prompt was copied: {text}"),
            EntryKind::Assistant(m) => panic!("an answer was copied: {}", m.text()),
            _ => {}
        }
    }
    let expected: Vec<usize> = (0..100).filter(|i| i % 4 != 2).collect();
    assert_eq!(shown, expected);
    // Each call's result is the history's text itself.
    for (i, message) in held.iter().enumerate() {
        let Message::ToolResult(r) = message else {
            continue;
        };
        let node = app.tools().node(&r.tool_call_id).unwrap();
        let result = node.result.as_ref().unwrap();
        assert!(
            std::ptr::eq(result.content(), r.content.as_str()),
            "result {i} copied"
        );
    }
    // The chat still shows them: the newest answer is on screen.
    app.update(Msg::Frame);
    assert!(screen(&mut app).iter().any(|row| row.contains("Answer 24")));

    // The agent's next messages go after the shared ones: nothing is copied, and the
    // chat's messages are still the agent's.
    let mut ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
    agent.prompt("one more").unwrap();
    until_agent_end(&mut ends).await;
    let state = agent.state();
    assert_eq!(state.messages.len(), 102);
    assert!(Arc::ptr_eq(state.messages.frozen(), &held));
    assert_eq!(state.messages[101].preview_text(), "noted");
}
