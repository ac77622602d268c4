//! `App::update` for agent and runtime messages: the status bar, the transcript, the
//! tree, the queue strip and the dashboard follow what happens.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::*;
use claw_tui::agent::{
    AgentEvent, AssistantMessage, Block, Message, MessageDelta, QueueMode, SKIPPED_FOR_ABORT,
    StopReason, ToolResult, Usage,
};
use claw_tui::tools::exec::{ApprovalDecision, ApprovalRequest};
use claw_tui::tui::sessions::{self, LoadedSession};
use claw_tui::tui::tool_tree::{CallStatus, TreeRow};
use claw_tui::tui::{Effect, Inbox, Msg, subagents};
use crossterm::event::KeyCode;
use serde_json::json;

fn final_message(text: &str, usage: Usage) -> Message {
    Message::Assistant(AssistantMessage {
        content: vec![Block::Text { text: text.into() }],
        stop_reason: StopReason::Stop,
        usage,
        model: "m".into(),
        ..AssistantMessage::default()
    })
}

#[test]
fn the_state_word_follows_the_run() {
    let mut app = app();
    assert_eq!(app.state_word(), "idle");
    app.update(agent(AgentEvent::AgentStart));
    assert_eq!(app.state_word(), "streaming");
    app.update(agent(AgentEvent::AutoRetryStart {
        attempt: 1,
        max_attempts: 3,
        delay_ms: 10,
        reason: "HTTP 500".into(),
    }));
    assert_eq!(app.state_word(), "retrying");
    app.update(agent(AgentEvent::AutoRetryEnd { attempt: 1 }));
    assert_eq!(app.state_word(), "streaming");
    app.update(agent(AgentEvent::ToolExecutionStart {
        tool_call_id: "t".into(),
        tool_name: "exec".into(),
        args: json!({}),
    }));
    assert_eq!(app.state_word(), "running tools");
    app.update(agent(AgentEvent::ToolExecutionEnd {
        tool_call_id: "t".into(),
        tool_name: "exec".into(),
        result: ToolResult::text("ok"),
        is_error: false,
    }));
    assert_eq!(app.state_word(), "streaming");
    app.update(agent(AgentEvent::AgentEnd { messages: vec![] }));
    assert_eq!(app.state_word(), "idle");
    // The state words appear in the status bar only, once.
    let parts = app.status_parts().join(" | ");
    for word in ["idle", "streaming", "running tools", "retrying"] {
        let expected = usize::from(word == "idle");
        assert_eq!(parts.matches(word).count(), expected, "{word} in {parts}");
    }
}

#[test]
fn tokens_context_and_cost_add_up() {
    let mut app = app();
    let usage = |input, output, cost| Usage {
        input,
        output,
        cost,
        ..Usage::default()
    };
    for (u, text) in [
        (usage(1000, 200, 0.01), "one"),
        (usage(3000, 500, 0.02), "two"),
    ] {
        app.update(agent(AgentEvent::MessageStart {
            message: Message::Assistant(AssistantMessage::default()),
        }));
        app.update(agent(AgentEvent::MessageEnd {
            message: final_message(text, u),
        }));
    }
    assert_eq!(app.status().totals().usage.input, 4000);
    assert_eq!(app.status().totals().usage.output, 700);
    assert_eq!(
        app.status().totals().context_tokens,
        3500,
        "the latest call's size"
    );
    let parts = app.status_parts();
    assert!(parts.contains(&"↑4.0k ↓700".to_owned()), "{parts:?}");
    assert!(
        parts.contains(&"ctx 1%".to_owned()),
        "3500 of 200k: {parts:?}"
    );
    assert!(parts.contains(&"$0.0300".to_owned()), "{parts:?}");
}

#[test]
fn settings_and_queues_follow_their_events() {
    let mut app = app();
    app.update(agent(AgentEvent::SettingUpdate {
        key: "model".into(),
        value: json!("other-model"),
    }));
    app.update(agent(AgentEvent::SettingUpdate {
        key: "follow_up_mode".into(),
        value: json!("all"),
    }));
    assert_eq!(app.status().model(), "other-model");
    assert_eq!(app.status().queue_modes().1, QueueMode::All);
    assert!(
        app.status_parts()
            .iter()
            .any(|p| p == "queues steer:one follow-up:all")
    );
    app.update(agent(AgentEvent::QueueUpdate {
        steering: vec!["s".into()],
        follow_up: vec!["f1".into(), "f2".into()],
    }));
    assert_eq!(
        (app.status().queued().0.len(), app.status().queued().1.len()),
        (1, 2)
    );
    assert_eq!(
        app.areas().queue.height,
        3,
        "one strip row per queued message"
    );
}

#[test]
fn streamed_markdown_renders_the_same_as_the_final_message() {
    let text = "# Title\n\nA paragraph with **bold** and a long enough line to wrap around the pane at least once or twice.\n\n```rust\nfn main() {\n\n    println!(\"x\");\n}\n```\n\n> quoted\n> lines\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThe end.";
    let mut app = sized(70, 40);
    app.update(agent(AgentEvent::MessageStart {
        message: Message::Assistant(AssistantMessage::default()),
    }));
    for (i, chunk) in text.as_bytes().chunks(3).enumerate() {
        let delta = MessageDelta::Text {
            index: 0,
            text: String::from_utf8_lossy(chunk).into_owned(),
        };
        app.update(agent(AgentEvent::MessageUpdate { delta }));
        if i % 4 == 0 {
            app.update(Msg::Frame);
        }
    }
    app.update(Msg::Frame);
    let streamed = chat_rows(&app);
    app.update(agent(AgentEvent::MessageEnd {
        message: final_message(text, Usage::default()),
    }));
    app.update(Msg::Frame);
    assert_eq!(streamed, chat_rows(&app));
    assert!(
        streamed.iter().any(|r| r.contains("fn main()")),
        "{streamed:#?}"
    );
}

#[test]
fn tool_cards_follow_the_tree_and_unstarted_calls_are_skipped_on_abort() {
    let mut app = app();
    app.update(agent(AgentEvent::AgentStart));
    app.update(agent(AgentEvent::TurnStart { turn: 1 }));
    let message = Message::Assistant(AssistantMessage {
        content: vec![
            Block::ToolCall {
                id: "a".into(),
                name: "exec".into(),
                args: json!({"command": "sleep 9"}),
            },
            Block::ToolCall {
                id: "b".into(),
                name: "read_file".into(),
                args: json!({"path": "x"}),
            },
        ],
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::default()
    });
    app.update(agent(AgentEvent::MessageStart {
        message: Message::Assistant(AssistantMessage::default()),
    }));
    app.update(agent(AgentEvent::MessageEnd { message }));
    assert_eq!(app.chat().card("a").unwrap().status, CallStatus::Queued);
    app.update(agent(AgentEvent::ToolExecutionStart {
        tool_call_id: "a".into(),
        tool_name: "exec".into(),
        args: json!({"command": "sleep 9"}),
    }));
    app.update(agent(AgentEvent::ToolExecutionUpdate {
        tool_call_id: "a".into(),
        tool_name: "exec".into(),
        partial: json!({"stdout": "tick\n"}),
    }));
    app.update(Msg::Frame);
    let rows = chat_rows(&app);
    assert!(
        rows.iter().any(|r| r.contains(" exec sleep 9")),
        "{rows:#?}"
    );
    assert!(
        rows.iter().any(|r| r.contains("│ tick")),
        "the card shows the live line: {rows:#?}"
    );
    assert!(app.tools().calls().rows().contains(&TreeRow::Live {
        depth: 0,
        text: "tick".into()
    }));
    app.update(agent(AgentEvent::ToolExecutionEnd {
        tool_call_id: "a".into(),
        tool_name: "exec".into(),
        result: ToolResult::error(SKIPPED_FOR_ABORT),
        is_error: true,
    }));
    app.update(agent(AgentEvent::AgentEnd { messages: vec![] }));
    app.update(Msg::Frame);
    assert_eq!(app.chat().card("a").unwrap().status, CallStatus::Skipped);
    assert_eq!(
        app.chat().card("b").unwrap().status,
        CallStatus::Skipped,
        "never started: skipped when the run ended"
    );
    let rows = chat_rows(&app);
    assert!(
        rows.iter().any(|r| r.contains("read_file x · skipped")),
        "{rows:#?}"
    );
}

#[test]
fn outbound_messages_notifications_and_notices_get_entries() {
    let mut app = app();
    app.update(Msg::Outbound(claw_tui::tools::message::OutboundMessage {
        channel: "cli".into(),
        chat_id: "direct".into(),
        content: "\u{1b}[31mhi\u{1b}[0m there".into(),
    }));
    app.update(Msg::Notice(
        claw_tui::agent::NoticeLevel::Warning,
        "careful".into(),
    ));
    app.update(Msg::Frame);
    let rows = chat_rows(&app);
    assert!(
        rows.contains(&"✉ message to cli:direct".to_owned()),
        "{rows:#?}"
    );
    assert!(
        rows.contains(&"┃ hi there".to_owned()),
        "escape sequences are removed: {rows:#?}"
    );
    assert!(rows.contains(&"⚠ careful".to_owned()), "{rows:#?}");
}

#[test]
fn copy_takes_the_last_answer_or_its_last_code_block() {
    let mut app = app();
    app.update(agent(AgentEvent::MessageStart {
        message: Message::Assistant(AssistantMessage::default()),
    }));
    app.update(agent(AgentEvent::MessageEnd {
        message: final_message("Run:\n\n```sh\nls -la\n```\n", Usage::default()),
    }));
    typed(&mut app, "/copy code");
    app.update(key(KeyCode::Esc));
    assert_eq!(
        app.update(key(KeyCode::Enter)).last(),
        Some(&Effect::Copy("ls -la".into()))
    );
    typed(&mut app, "/copy");
    app.update(key(KeyCode::Esc));
    assert_eq!(
        app.update(key(KeyCode::Enter)).last(),
        Some(&Effect::Copy("Run:\n\n```sh\nls -la\n```\n".into()))
    );
}

#[test]
fn a_new_session_clears_everything_but_the_composer_history() {
    let mut app = app();
    for e in [AgentEvent::AgentStart, AgentEvent::TurnStart { turn: 1 }] {
        app.update(agent(e));
    }
    app.update(agent(AgentEvent::ToolExecutionStart {
        tool_call_id: "x".into(),
        tool_name: "exec".into(),
        args: json!({}),
    }));
    app.update(agent(AgentEvent::AgentEnd { messages: vec![] }));
    typed(&mut app, "/new");
    app.update(key(KeyCode::Enter));
    let effects = app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some("0123456789abcdef".into()),
            ..LoadedSession::default()
        },
    ))));
    assert_eq!(effects, [Effect::Sessions(sessions::Effect::Ready)]);
    app.update(Msg::Frame);
    assert!(app.tools().calls().rows().is_empty());
    assert_eq!(chat_rows(&app), ["ℹ New session 01234567."]);
    assert_eq!(app.session_id(), Some("0123456789abcdef"));
    assert_eq!(app.composer().history(), ["/new"]);
}

#[test]
fn subagent_updates_upsert_and_ticks_only_redraw_while_busy() {
    let mut app = app();
    app.update(Msg::Frame);
    app.update(Msg::Tick);
    assert!(!app.needs_draw(), "an idle tick changes nothing");
    app.update(Msg::Subagents(subagents::Msg::Update(subagent("a"))));
    app.update(Msg::Subagents(subagents::Msg::Update(subagent("b"))));
    let mut done = subagent("a");
    done.status = claw_tui::runtime::SubagentStatus::Done;
    app.update(Msg::Subagents(subagents::Msg::Update(done)));
    assert_eq!(
        app.dashboard()
            .subagents()
            .iter()
            .map(|s| (s.id.as_str(), s.status))
            .collect::<Vec<_>>(),
        [
            ("a", claw_tui::runtime::SubagentStatus::Done),
            ("b", claw_tui::runtime::SubagentStatus::Running)
        ]
    );
    app.update(Msg::Frame);
    app.update(Msg::Tick);
    assert!(app.needs_draw(), "a working subagent animates");
}

#[tokio::test]
async fn outbound_messages_come_as_runtime_events_and_approvals_through_the_inbox() {
    let (events, mut runtime) = claw_tui::runtime::runtime_channel();
    (events.outbound_messages())(claw_tui::tools::message::OutboundMessage {
        channel: "c".into(),
        chat_id: "d".into(),
        content: "x".into(),
    });
    let outbound = Msg::from(runtime.recv().await.unwrap());
    assert!(matches!(outbound, Msg::Outbound(m) if m.content == "x"));
    let mut inbox = Inbox::new();
    let asker = inbox.approval_asker(false);
    let request = ApprovalRequest {
        id: "r1".into(),
        tool_call_id: "c1".into(),
        tool_name: "exec".into(),
        args: json!({"command": "ls"}),
        subagent: None,
    };
    let answer = tokio::spawn(asker(request.clone()));
    let asked = inbox.recv().await.unwrap();
    assert!(matches!(asked, Msg::Approval(ref r) if *r == request));
    inbox
        .approvals()
        .resolve("r1", ApprovalDecision::AllowSession);
    assert_eq!(answer.await.unwrap(), ApprovalDecision::AllowSession);
    assert_eq!(
        Inbox::new().approval_asker(true)(request).await,
        ApprovalDecision::Allow,
        "--yes approves"
    );
}

#[test]
fn a_streaming_answer_asks_for_its_newest_code_block_a_few_times_a_second() {
    let mut app = app();
    let t0 = std::time::Instant::now();
    app.update_at(
        agent(AgentEvent::MessageStart {
            message: Message::Assistant(AssistantMessage::default()),
        }),
        t0,
    );
    let highlights = |effects: Vec<Effect>| -> Vec<String> {
        effects
            .into_iter()
            .filter_map(|e| match e {
                Effect::Highlight(r) => Some(r.code),
                _ => None,
            })
            .collect()
    };
    let mut asked = Vec::new();
    for i in 0..6u64 {
        let text = format!("```rust\nfn f{i}() {{}}\n```\n\npara {i}\n\n");
        let delta = MessageDelta::Text { index: 0, text };
        let at = t0 + std::time::Duration::from_millis(100 * i);
        app.update_at(agent(AgentEvent::MessageUpdate { delta }), at);
        asked.extend(highlights(app.update_at(Msg::Frame, at)));
    }
    assert_eq!(
        asked,
        ["fn f0() {}", "fn f3() {}"],
        "the newest block, at most every 250 ms"
    );
    // Once the answer is complete, the blocks on screen are asked for.
    let text: String = (0..6)
        .map(|i| format!("```rust\nfn f{i}() {{}}\n```\n\npara {i}\n\n"))
        .collect();
    app.update(agent(AgentEvent::MessageEnd {
        message: final_message(&text, Usage::default()),
    }));
    // The first frame adds the last tokens; the next renders the answer in full.
    let mut rest = highlights(app.update(Msg::Frame));
    assert!(app.needs_draw(), "the full rendering is still due");
    rest.extend(highlights(app.update(Msg::Frame)));
    assert_eq!(rest.len(), 4, "the four not asked for yet: {rest:?}");
}

#[test]
fn runtime_reports_become_messages() {
    use claw_tui::runtime::cron::{CronJobInfo, RunStatus};
    use claw_tui::runtime::{RuntimeEvent, SubagentInfo, SubagentStatus};
    use claw_tui::tui::{CronRow, CronRunStatus, SubagentRow};
    let info = SubagentInfo {
        id: "subagent-1".into(),
        label: "count".into(),
        task: "count lines".into(),
        status: SubagentStatus::Running,
        turns: 2,
        tokens: 900,
        elapsed_ms: 1500,
        current_tool: Some("exec".into()),
        parent_tool_call_id: "call-9".into(),
        chat_id: "cli:direct".into(),
    };
    let row = SubagentRow::from(&info);
    assert_eq!(
        (
            row.status,
            row.elapsed.as_millis(),
            row.current_tool.as_deref()
        ),
        (
            claw_tui::runtime::SubagentStatus::Running,
            1500,
            Some("exec")
        )
    );
    let msg = Msg::from(RuntimeEvent::SubagentEvent {
        subagent_id: "subagent-1".into(),
        parent_tool_call_id: "call-9".into(),
        event: AgentEvent::AgentStart,
    });
    assert!(
        matches!(msg, Msg::Subagents(subagents::Msg::Event { ref parent_call_id, .. }) if parent_call_id == "call-9")
    );
    assert!(matches!(
        Msg::from(RuntimeEvent::PendingNotifications { count: 3 }),
        Msg::PendingNotifications(3)
    ));
    let job = CronJobInfo {
        id: "j1".into(),
        name: "build".into(),
        message: "check the build".into(),
        schedule: "every 5 minutes".into(),
        next_fire: None,
        paused: true,
        done: false,
        last_status: Some(RunStatus::Missed),
        last_run_at: None,
        problem: None,
    };
    let row = CronRow::from(&job);
    assert_eq!((row.paused, row.last_status), (true, CronRunStatus::Missed));
}
