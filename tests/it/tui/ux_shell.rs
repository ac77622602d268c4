//! `!command`, `/status` and errors in the order they happened (issue 18, items
//! 16-18), on the model side: a shell command becomes an exec call shown as a card, its
//! output goes with the next message (`!!`: not); `/status` lists what the session runs
//! on; retries and the final failure read top to bottom, each thing said once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{AgentEvent, AssistantMessage, Message, StopReason};
use claw_tui::mcp::{McpServerInfo, McpServerState, McpToolInfo, Origin};
use claw_tui::tui::{App, Effect, Msg, Overlay, sessions, shell};
use crossterm::event::KeyCode;
use serde_json::json;
use std::time::Instant;

fn shell_events(app: &mut App, id: &str, command: &str, out: &str) {
    // One instant for start, output and end: the card's duration reads 0ms however
    // loaded the machine running the snapshot is.
    let at = Instant::now();
    app.update_at(
        Msg::Shell(shell::Msg::Event(AgentEvent::ToolExecutionStart {
            tool_call_id: id.into(),
            tool_name: "exec".into(),
            args: json!({ "command": command }),
        })),
        at,
    );
    app.update_at(
        Msg::Shell(shell::Msg::Event(AgentEvent::ToolExecutionUpdate {
            tool_call_id: id.into(),
            tool_name: "exec".into(),
            partial: json!({ "stdout": out }),
        })),
        at,
    );
    app.update_at(
        Msg::Shell(shell::Msg::Event(AgentEvent::ToolExecutionEnd {
            tool_call_id: id.into(),
            tool_name: "exec".into(),
            result: exec_result(out, 0),
            is_error: false,
        })),
        at,
    );
}

#[test]
fn a_shell_command_is_a_card_and_its_output_goes_with_the_next_message() {
    let mut app = app();
    typed(&mut app, "!git status --short");
    let effects = app.update(key(KeyCode::Enter));
    assert_eq!(
        effects,
        [
            Effect::SaveHistory("!git status --short".into()),
            Effect::Shell(shell::Effect::Run {
                id: "shell-1".into(),
                command: "git status --short".into()
            })
        ]
    );
    shell_events(
        &mut app,
        "shell-1",
        "git status --short",
        " M src/lib.rs\n?? notes.txt\n",
    );
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("✓ ! git status --short"), "{shown}");
    assert!(
        shown.contains("│  M src/lib.rs") && shown.contains("exit 0 · 2 lines"),
        "{shown}"
    );
    assert!(
        shown.contains("↳ its output goes with your next message"),
        "{shown}"
    );
    assert!(
        shown.contains("You ran"),
        "the Tools pane lists it: {shown}"
    );
    insta::assert_snapshot!("shell_card_120x40", draw(&mut app).backend());
    resize(&mut app, 80, 24);
    insta::assert_snapshot!("shell_card_80x24", draw(&mut app).backend());

    typed(&mut app, "what changed?");
    let effects = app.update(key(KeyCode::Enter));
    let Some(Effect::Prompt(text)) = effects.last() else {
        panic!("a prompt: {effects:?}");
    };
    assert_eq!(
        text,
        "<shell-command>git status --short</shell-command>\n<shell-output>\n M src/lib.rs\n?? \
         notes.txt\n[exit code: 0]\n</shell-output>\n\nwhat changed?"
    );
    // The user message shows the command folded, not the whole output again.
    for e in user(text) {
        app.update(agent(e));
    }
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("› $ git status --short · output sent along"),
        "{shown}"
    );
    assert!(shown.contains("  what changed?"), "{shown}");
    // Sent once: the next message goes alone.
    typed(&mut app, "and now?");
    assert_eq!(
        app.update(key(KeyCode::Enter)).last(),
        Some(&Effect::Prompt("and now?".into()))
    );
}

#[test]
fn a_double_bang_command_keeps_its_output_out_of_the_conversation() {
    let mut app = app();
    typed(&mut app, "!!ls");
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        matches!(effects.last(), Some(Effect::Shell(shell::Effect::Run { command, .. })) if command == "ls")
    );
    shell_events(&mut app, "shell-1", "ls", "README.md\n");
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("✓ !! ls") && shown.contains("not added to the conversation"),
        "{shown}"
    );
    typed(&mut app, "hi");
    assert_eq!(
        app.update(key(KeyCode::Enter)).last(),
        Some(&Effect::Prompt("hi".into()))
    );
    typed(&mut app, "!");
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Shell(_))),
        "an empty command runs nothing"
    );
}

#[test]
fn status_lists_what_the_session_runs_on() {
    let mut config = config();
    config.base_url = Some("http://localhost:8080/v1".into());
    config.sandbox =
        "workspace-write (Landlock) · network allowed · own pid namespace · approval never".into();
    let mut app = App::new(config);
    app.set_clock(std::time::Instant::now(), epoch());
    resize(&mut app, 120, 40);
    app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        claw_tui::tui::sessions::LoadedSession {
            id: Some("3c3b1f2a9d8e7f60".into()),
            path: Some(
                "/home/me/.local/share/claw-tui/sessions/ws/2026_3c3b1f2a9d8e7f60.jsonl".into(),
            ),
            quiet: true,
            ..Default::default()
        },
    ))));
    typed(&mut app, "/status");
    app.update(key(KeyCode::Enter));
    assert_eq!(app.overlay(), Some(&Overlay::Status { scroll: 0 }));
    let shown = screen(&mut app).join("\n");
    for needle in [
        "provider",
        "demo (offline)",
        "http://localhost:8080/v1",
        "200.0k tokens",
        "cost n/a",
        "one at a time",
        "parallel",
        "workspace-write (Landlock)",
        "MCP servers",
        "none configured",
        "3c3b1f2a9d8e7f60",
        "2026_3c3b1f2a9d8e7f60.jsonl",
    ] {
        assert!(shown.contains(needle), "{needle} missing:\n{shown}");
    }
    insta::assert_snapshot!("status_overlay_120x40", draw(&mut app).backend());
    // The MCP servers the runtime reports show up there.
    app.update(Msg::McpServer(McpServerInfo {
        name: "github".into(),
        origin: Origin::User,
        transport: "stdio".into(),
        state: McpServerState::Ready,
        server_info: None,
        tools: (0..12)
            .map(|i| McpToolInfo {
                name: format!("mcp__github__t{i}"),
                remote_name: format!("t{i}"),
                description: String::new(),
                definition_tokens: 10,
            })
            .collect(),
    }));
    assert!(
        screen(&mut app)
            .join("\n")
            .contains("github: ready · 12 tools")
    );
    resize(&mut app, 80, 24);
    insta::assert_snapshot!("status_overlay_80x24", draw(&mut app).backend());
}

#[test]
fn retries_and_the_final_failure_read_in_the_order_they_happened() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "hello");
    clock.at(
        &mut app,
        5,
        agent(AgentEvent::MessageStart {
            message: Message::Assistant(AssistantMessage::default()),
        }),
    );
    for attempt in 1..=3 {
        clock.at(
            &mut app,
            10 * u64::from(attempt),
            agent(AgentEvent::AutoRetryStart {
                attempt,
                max_attempts: 3,
                delay_ms: 1000,
                reason: "HTTP 503 Service Unavailable".into(),
            }),
        );
        clock.at(
            &mut app,
            10 * u64::from(attempt) + 5,
            agent(AgentEvent::AutoRetryEnd { attempt }),
        );
    }
    let mut failed = assistant(vec![], StopReason::Error);
    failed.error_message = Some(
        "demo failed: HTTP 503 Service Unavailable, still failing after 3 retries. Wait a \
         little, then send a message to try again."
            .into(),
    );
    clock.at(
        &mut app,
        50,
        agent(AgentEvent::MessageEnd {
            message: Message::Assistant(failed),
        }),
    );
    run_end(&clock, &mut app, 60);
    let shown = screen(&mut app).join("\n");
    let at = |needle: &str| {
        shown
            .find(needle)
            .unwrap_or_else(|| panic!("{needle}:\n{shown}"))
    };
    assert!(at("↻ retry 1/3") < at("↻ retry 2/3") && at("↻ retry 2/3") < at("↻ retry 3/3"));
    assert!(
        at("↻ retry 3/3") < at("✗ demo failed"),
        "the failure comes last:\n{shown}"
    );
    assert_eq!(
        shown.to_lowercase().matches("try again").count(),
        1,
        "said once:\n{shown}"
    );
    assert!(
        shown.contains("Your conversation is kept; /retry sends the request again."),
        "{shown}"
    );
    insta::assert_snapshot!("retries_in_order_120x40", draw(&mut app).backend());
}

/// A retry's wait counts down on its line (Esc cancels it) and stops counting when the
/// request goes again; `/retry` after a failure asks for the request again, and says why
/// not when the last answer did not fail or a run is going on.
#[test]
fn a_retry_counts_down_and_retry_only_follows_a_failure() {
    let mut app = sized(120, 40);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "hello");
    let retry = AgentEvent::AutoRetryStart {
        attempt: 1,
        max_attempts: 10,
        delay_ms: 30_000,
        reason: "HTTP 429: slow down".into(),
    };
    clock.at(&mut app, 0, agent(retry));
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("↻ retry 1/10 in 30s · Esc cancels: HTTP 429"),
        "{shown}"
    );
    clock.at(&mut app, 10_000, Msg::Tick);
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("↻ retry 1/10 in 20s · Esc cancels"),
        "{shown}"
    );
    clock.at(
        &mut app,
        30_000,
        agent(AgentEvent::AutoRetryEnd { attempt: 1 }),
    );
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("↻ retry 1/10 in 30.0s: HTTP 429"), "{shown}");

    // While the run goes on, /retry says the run retries by itself.
    typed(&mut app, "/retry");
    let effects = app.update(key(KeyCode::Enter));
    assert!(!effects.iter().any(|e| matches!(e, Effect::Retry)));
    assert!(screen(&mut app).join("\n").contains("A run is active"));

    let failed = AssistantMessage {
        stop_reason: StopReason::Error,
        error_message: Some("HTTP 400: upstream hiccup".into()),
        ..AssistantMessage::default()
    };
    clock.at(
        &mut app,
        31_000,
        agent(AgentEvent::MessageStart {
            message: Message::Assistant(AssistantMessage::default()),
        }),
    );
    clock.at(
        &mut app,
        31_000,
        agent(AgentEvent::MessageEnd {
            message: Message::Assistant(failed),
        }),
    );
    run_end(&clock, &mut app, 31_000);
    typed(&mut app, "/retry");
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        effects.iter().any(|e| matches!(e, Effect::Retry)),
        "{effects:?}"
    );

    // After an answer that did not fail there is nothing to retry.
    let mut app = sized(120, 40);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "hello");
    answer(&clock, &mut app, 10, vec![text("Hi.")], StopReason::Stop);
    run_end(&clock, &mut app, 20);
    typed(&mut app, "/retry");
    let effects = app.update(key(KeyCode::Enter));
    assert!(!effects.iter().any(|e| matches!(e, Effect::Retry)));
    assert!(screen(&mut app).join("\n").contains("Nothing to retry"));
}
