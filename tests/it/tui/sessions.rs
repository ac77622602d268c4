//! Sessions in the client's model: a loaded history rebuilds the chat, the tool tree and
//! the usage totals; the `/sessions` picker and the "open a copy?" prompt.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{
    AgentEvent, Message, NoticeLevel, NotificationMessage, StopReason, ToolResultMessage, Usage,
};
use claw_tui::session::{SessionError, SwitchError};
use claw_tui::tui::chat::EntryKind;
use claw_tui::tui::msg::QueuedText;
use claw_tui::tui::sessions::{self, LoadedSession, SessionRow};
use claw_tui::tui::tool_tree::{CallStatus, TreeRow};
use claw_tui::tui::{Effect, Msg, Overlay};
use crossterm::event::KeyCode;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

fn history() -> Vec<Message> {
    let mut first = assistant(
        vec![
            text("Let me look."),
            call("c1", "read_file", json!({"path": "notes.txt"})),
            call("c2", "exec", json!({"command": "false"})),
        ],
        StopReason::ToolUse,
    );
    first.usage = Usage {
        input: 1200,
        output: 80,
        ..Usage::default()
    };
    let mut second = assistant(vec![text("The notes say **hello**.")], StopReason::Stop);
    second.usage = Usage {
        input: 1500,
        output: 20,
        ..Usage::default()
    };
    let result = |id: &str, name: &str, content: &str, is_error: bool| {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: name.into(),
            content: content.into(),
            images: Vec::new(),
            details: json!(null),
            is_error,
            timestamp: 0,
        })
    };
    vec![
        Message::user("what is in notes.txt?"),
        Message::Assistant(first),
        result("c1", "read_file", "hello", false),
        result("c2", "exec", "exit code 1", true),
        Message::Assistant(second),
        Message::Notification(NotificationMessage {
            source: "cron".into(),
            content: "[SYSTEM NOTIFICATION]\n[Cron job \"tick\" (cron-1) fired]".into(),
            timestamp: 0,
        }),
    ]
}

fn resumed(messages: Vec<Message>, queued: Vec<String>) -> Msg {
    Msg::Sessions(sessions::Msg::Loaded(Box::new(LoadedSession {
        id: Some("feedc0ffee123456".into()),
        messages: messages.into(),
        queued: queued.into_iter().map(QueuedText::follow_up).collect(),
        resumed: true,
        ..LoadedSession::default()
    })))
}

#[test]
fn a_loaded_history_rebuilds_chat_tree_and_totals() {
    let mut app = app();
    typed(&mut app, "draft");
    let effects = app.update(resumed(history(), vec!["then summarise".into()]));
    assert_eq!(effects, [Effect::Sessions(sessions::Effect::Ready)]);
    app.update(Msg::Frame);

    let statuses: Vec<(String, CallStatus)> = ["c1", "c2"]
        .iter()
        .map(|id| {
            let node = app.tools().node(id).unwrap();
            (node.name.clone(), node.status)
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("read_file".to_owned(), CallStatus::Done),
            ("exec".to_owned(), CallStatus::Failed)
        ]
    );
    assert_eq!(app.tools().calls().rows()[0], TreeRow::Turn(1));
    assert_eq!(
        (
            app.status().totals().usage.input,
            app.status().totals().usage.output
        ),
        (2700, 100)
    );
    assert_eq!(app.status().totals().context_tokens, 1520);
    assert_eq!(app.session_id(), Some("feedc0ffee123456"));
    // Queued messages come back in the composer, before what was being typed.
    assert_eq!(app.composer().text(), "then summarise\n\ndraft");

    let screen = format!("{}", draw(&mut app).backend());
    for needle in [
        "what is in notes.txt?",
        "The notes say hello.",
        "Cron job \"tick\"",
        "Resumed session feedc0ff: 6 messages.",
        "✓ read_file",
        "✗ exec",
    ] {
        assert!(screen.contains(needle), "{needle} missing:\n{screen}");
    }
}

#[test]
fn the_next_run_numbers_turns_after_the_loaded_ones() {
    let mut app = app();
    app.update(resumed(history(), Vec::new()));
    assert_eq!(app.status().turn(), 2);
    app.update(agent(AgentEvent::AgentStart));
    app.update(agent(AgentEvent::TurnStart { turn: 1 }));
    app.update(agent(AgentEvent::ToolExecutionStart {
        tool_call_id: "c3".into(),
        tool_name: "list_dir".into(),
        args: json!({}),
    }));
    app.update(Msg::Frame);
    assert!(app.tools().calls().rows().contains(&TreeRow::Turn(3)));
}

fn rows() -> Vec<SessionRow> {
    let at = |minutes: u64| epoch() - Duration::from_secs(minutes * 60);
    let row = |id: &str, minutes, prompt: Option<&str>, count| SessionRow {
        id: id.into(),
        path: PathBuf::from(format!("/data/{id}.jsonl")),
        created: at(minutes + 30),
        last_activity: at(minutes),
        first_prompt: prompt.map(str::to_owned),
        message_count: count,
        waiting: 0,
        name: None,
        last: Default::default(),
    };
    vec![
        row("aaaa1111bbbb2222", 0, Some("current work"), 4),
        row("cccc3333dddd4444", 90, Some("fix the parser\nplease"), 12),
        row("eeee5555ffff6666", 3 * 24 * 60, None, 0),
    ]
}

#[test]
fn the_picker_lists_sessions_and_opens_the_chosen_one() {
    let mut app = app();
    app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some("aaaa1111bbbb2222".into()),
            quiet: true,
            ..LoadedSession::default()
        },
    ))));
    typed(&mut app, "/sessions");
    assert!(
        app.update(key(KeyCode::Enter))
            .contains(&Effect::Sessions(sessions::Effect::List))
    );
    app.update(Msg::Sessions(sessions::Msg::List(rows())));
    // The current session is first; the highlight starts on the next one.
    assert!(matches!(
        app.overlay(),
        Some(Overlay::Sessions { selected: 1, .. })
    ));
    insta::assert_snapshot!("session_picker", draw(&mut app).backend());
    app.update(key(KeyCode::Down));
    app.update(key(KeyCode::Up));
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [Effect::Sessions(sessions::Effect::Open {
            path: PathBuf::from("/data/cccc3333dddd4444.jsonl"),
            fork: false
        })]
    );
    assert!(app.overlay().is_none());

    // Esc closes the picker without doing anything.
    app.update(Msg::Sessions(sessions::Msg::List(rows())));
    assert!(app.update(key(KeyCode::Esc)).is_empty());
    assert!(app.overlay().is_none());
}

#[test]
fn switching_is_refused_while_a_run_is_active() {
    let mut app = app();
    app.update(agent(AgentEvent::AgentStart));
    app.update(Msg::Sessions(sessions::Msg::List(rows())));
    assert!(app.update(key(KeyCode::Enter)).is_empty());
    typed(&mut app, "/new");
    assert!(
        !app.update(key(KeyCode::Enter))
            .contains(&Effect::Sessions(sessions::Effect::New))
    );
    app.update(Msg::Frame);
    let screen = format!("{}", draw(&mut app).backend());
    assert!(screen.contains("switching sessions."), "{screen}");
    assert!(screen.contains("starting a new session."), "{screen}");
}

#[test]
fn a_session_in_use_is_offered_as_a_copy() {
    let mut app = app();
    let path = PathBuf::from("/data/cccc.jsonl");
    app.update(Msg::Sessions(sessions::Msg::Locked {
        path: path.clone(),
        id: "cccc3333dddd4444".into(),
    }));
    let screen = format!("{}", draw(&mut app).backend());
    assert!(
        screen.contains("open in another claw-tui process"),
        "{screen}"
    );
    assert_eq!(
        app.update(key(KeyCode::Char('y'))),
        [Effect::Sessions(sessions::Effect::Open {
            path,
            fork: true
        })]
    );
    app.update(Msg::Sessions(sessions::Msg::Locked {
        path: PathBuf::from("/data/cccc.jsonl"),
        id: "cccc3333dddd4444".into(),
    }));
    assert!(app.update(key(KeyCode::Char('n'))).is_empty());
    assert!(app.overlay().is_none());
}

#[test]
fn input_waits_while_a_switch_is_under_way() {
    let mut app = app();
    typed(&mut app, "/new");
    assert!(
        app.update(key(KeyCode::Enter))
            .contains(&Effect::Sessions(sessions::Effect::New))
    );
    // A second switch or a prompt would race the history being replaced.
    typed(&mut app, "/new");
    assert!(
        !app.update(key(KeyCode::Enter))
            .contains(&Effect::Sessions(sessions::Effect::New))
    );
    app.update(ctrl('c'));
    typed(&mut app, "hello");
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Prompt(_))),
        "{effects:?}"
    );
    assert_eq!(app.composer().text(), "hello", "nothing typed is lost");
    app.update(Msg::Sessions(sessions::Msg::Failed(Arc::new(
        SwitchError::Session(SessionError::Io {
            path: "/data/sessions/new.jsonl".into(),
            source: std::io::Error::from(std::io::ErrorKind::StorageFull),
        }),
    ))));
    let full = std::io::Error::from(std::io::ErrorKind::StorageFull).to_string();
    assert!(
        app.chat().transcript().entries().iter().any(|e| matches!(
            &e.kind,
            EntryKind::Notice(NoticeLevel::Error, text)
                if *text == format!("session file /data/sessions/new.jsonl: {full}")
        )),
        "the failure is an error line naming the file and the cause"
    );
    assert!(
        app.update(key(KeyCode::Enter))
            .contains(&Effect::Prompt("hello".into()))
    );
}

/// The picker filters as you type (id, name, first or last prompt), shows a session's
/// name before its first prompt and the highlighted one's last exchange below.
#[test]
fn the_picker_filters_as_you_type_and_previews_the_last_exchange() {
    use claw_tui::session::LastExchange;
    let mut app = app();
    let mut listed = rows();
    listed[1].name = Some("parser rewrite".into());
    listed[1].last = LastExchange {
        prompt: Some("and the quoted strings?".into()),
        answer: Some("They are handled in lexer.rs now.".into()),
    };
    app.update(Msg::Sessions(sessions::Msg::List(listed.clone())));
    app.update(key(KeyCode::Down));
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("Sessions (3) · type to filter"), "{shown}");
    assert!(
        shown.contains("parser rewrite · fix the parser please"),
        "{shown}"
    );
    assert!(shown.contains("› and the quoted strings?"), "{shown}");
    assert!(
        shown.contains("They are handled in lexer.rs now."),
        "{shown}"
    );
    insta::assert_snapshot!("session_picker_preview", draw(&mut app).backend());

    // Typing filters: `q` is typed, not a close.
    typed(&mut app, "quoted");
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("Sessions: \"quoted\" (1 of 3)"), "{shown}");
    assert!(
        shown.contains("They are handled in lexer.rs now."),
        "one match keeps its preview: {shown}"
    );
    assert!(!shown.contains("current work"), "{shown}");
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [Effect::Sessions(sessions::Effect::Open {
            path: PathBuf::from("/data/cccc3333dddd4444.jsonl"),
            fork: false
        })]
    );

    // No match says so; Backspace edits the filter; a name matches.
    app.update(Msg::Sessions(sessions::Msg::List(listed)));
    typed(&mut app, "zzz");
    assert!(screen(&mut app).join("\n").contains("no session matches"));
    for _ in 0..3 {
        app.update(key(KeyCode::Backspace));
    }
    typed(&mut app, "REWRITE");
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("(1 of 3)") && shown.contains("parser rewrite"),
        "{shown}"
    );
}

/// `/name` asks for the session shown to be named; without sessions it says so.
#[test]
fn name_names_the_session_shown() {
    let mut app = app();
    app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some("aaaa1111bbbb2222".into()),
            path: Some(PathBuf::from("/data/aaaa1111bbbb2222.jsonl")),
            quiet: true,
            ..LoadedSession::default()
        },
    ))));
    typed(&mut app, "/name parser rewrite");
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        effects.contains(&Effect::Sessions(sessions::Effect::Name {
            path: PathBuf::from("/data/aaaa1111bbbb2222.jsonl"),
            name: "parser rewrite".into(),
        })),
        "{effects:?}"
    );
}

/// The preview shows a model's answer: its escape sequences never reach the screen.
#[test]
fn the_preview_cannot_write_escape_sequences() {
    let mut app = app();
    let mut listed = rows();
    listed[0].last = claw_tui::session::LastExchange {
        prompt: Some("hi".into()),
        answer: Some("done\u{1b}]52;c;cm0gLXJmIH4=\u{7} \u{1b}[2J".into()),
    };
    app.update(Msg::Sessions(sessions::Msg::List(listed)));
    let terminal = draw(&mut app);
    let cells = screen_text(&terminal);
    assert!(
        !cells.contains('\u{1b}') && !cells.contains('\u{7}'),
        "{cells}"
    );
    assert!(cells.contains("done"), "{cells}");
}
