//! The controls in the client: what `/undo`, `/rewind`, `/plan`, Shift+Tab and Enter
//! after a plan ask of the runtime, how their answers show, the tool tree's hook marks,
//! and plan mode in the real binary in a pty (`exec` is not offered to the demo model,
//! so nothing runs; `PLAN` shows; the plan is offered for implementing).

use crate::support::bin::Sandbox;
use crate::support::pty::{Tui, status_line};
use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{AgentEvent, Message, StopReason, ToolResult};
use claw_tui::checkpoint::{Confirmation, Conflicts, UndoOutcome, UndoReport};
use claw_tui::runtime::AgentMode;
use claw_tui::tui::{Effect, Msg, Overlay, Rewound, checkpoints};
use crossterm::event::{KeyCode, KeyModifiers};
use serde_json::json;

fn notices(app: &claw_tui::tui::App) -> Vec<String> {
    app.chat()
        .transcript()
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            claw_tui::tui::chat::EntryKind::Notice(_, text) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn enter_command(app: &mut claw_tui::tui::App, command: &str) -> Vec<Effect> {
    typed(app, command);
    app.update(key(KeyCode::Enter))
}

#[test]
fn undo_asks_about_files_changed_since_and_the_answer_decides() {
    let mut app = app();
    let effects = enter_command(&mut app, "/undo");
    assert!(
        effects.contains(&Effect::Checkpoints(checkpoints::Effect::Undo(
            Conflicts::Ask
        ))),
        "{effects:?}"
    );
    let question = Confirmation {
        turns: vec!["fix it".into()],
        clean: vec!["a.rs".into()],
        changed: vec!["b.rs".into()],
    };
    app.update(Msg::Checkpoints(checkpoints::Msg::Undone(Ok(
        UndoOutcome::Confirm(question),
    ))));
    assert!(matches!(
        app.overlay(),
        Some(Overlay::ConfirmUndo { rewind: None, .. })
    ));
    insta::assert_snapshot!("undo_confirmation", draw(&mut app).backend());
    assert_eq!(
        app.update(key(KeyCode::Char('y'))),
        [Effect::Checkpoints(checkpoints::Effect::Undo(
            Conflicts::Overwrite
        ))]
    );
    app.update(Msg::Checkpoints(checkpoints::Msg::Undone(Ok(
        UndoOutcome::Confirm(Confirmation::default()),
    ))));
    assert_eq!(
        app.update(key(KeyCode::Char('s'))),
        [Effect::Checkpoints(checkpoints::Effect::Undo(
            Conflicts::Skip
        ))]
    );
    let report = UndoReport {
        turns: vec!["fix it".into()],
        restored: vec!["a.rs".into()],
        skipped: vec!["b.rs".into()],
        ..UndoReport::default()
    };
    let said = report.message();
    app.update(Msg::Checkpoints(checkpoints::Msg::Undone(Ok(
        UndoOutcome::Done(report),
    ))));
    assert_eq!(notices(&app).last(), Some(&said));
}

#[test]
fn undo_and_rewind_wait_while_the_agent_works() {
    let mut app = app();
    app.update(agent(AgentEvent::AgentStart));
    for command in ["/undo", "/rewind"] {
        let effects = enter_command(&mut app, command);
        assert!(
            !effects.iter().any(|e| matches!(
                e,
                Effect::Checkpoints(
                    checkpoints::Effect::Undo(_) | checkpoints::Effect::Rewind { .. }
                )
            )),
            "{effects:?}"
        );
        assert!(
            notices(&app)
                .last()
                .unwrap()
                .contains("The agent is working")
        );
    }
}

#[test]
fn rewind_picks_a_prompt_then_what_to_take_back() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    for (i, prompt) in ["first", "second", "third"].iter().enumerate() {
        run_start(&clock, &mut app, prompt);
        answer(
            &clock,
            &mut app,
            10 * i as u64 + 5,
            vec![text("ok")],
            StopReason::Stop,
        );
        clock.at(
            &mut app,
            10 * i as u64 + 6,
            agent(AgentEvent::AgentEnd { messages: vec![] }),
        );
    }
    enter_command(&mut app, "/rewind");
    let Some(Overlay::Rewind { prompts, selected }) = app.overlay() else {
        panic!("no picker: {:?}", app.overlay())
    };
    assert_eq!(
        (prompts.as_slice(), *selected),
        (
            &["first".to_owned(), "second".into(), "third".into()][..],
            2
        )
    );
    app.update(key(KeyCode::Up));
    insta::assert_snapshot!("rewind_picker", draw(&mut app).backend());
    app.update(key(KeyCode::Enter));
    assert!(matches!(
        app.overlay(),
        Some(Overlay::RewindChoice { turn: 2, .. })
    ));
    insta::assert_snapshot!("rewind_choice", draw(&mut app).backend());
    assert_eq!(
        app.update(key(KeyCode::Char('c'))),
        [Effect::Checkpoints(checkpoints::Effect::Rewind {
            turn: 2,
            files: false,
            conversation: true,
            conflicts: Conflicts::Ask
        })]
    );
    // The runtime cut the history before "second": the chat follows, the prompt is back.
    let kept = vec![
        Message::user("first"),
        Message::Assistant(assistant(vec![text("ok")], StopReason::Stop)),
    ];
    app.update(Msg::Checkpoints(checkpoints::Msg::Rewound(Box::new(Ok(
        Rewound {
            turn: 2,
            conversation_asked: true,
            files: None,
            conversation: Some((kept.into(), "second".into())),
        },
    )))));
    assert_eq!(app.composer().text(), "second");
    let users: Vec<_> = app
        .chat()
        .transcript()
        .entries()
        .iter()
        .filter(|e| match &e.kind {
            claw_tui::tui::chat::EntryKind::User(_) => true,
            // The rebuilt chat reads the prompts where the agent's history holds them.
            claw_tui::tui::chat::EntryKind::Recorded(r) => r.user().is_some(),
            _ => false,
        })
        .collect();
    assert_eq!(users.len(), 1);
    assert!(
        notices(&app)
            .last()
            .unwrap()
            .contains("Rewound the conversation to before prompt 2")
    );
}

#[test]
fn plan_mode_shows_plan_and_enter_after_a_plan_offers_to_implement_it() {
    let mut app = app();
    let effects = app.update(with(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(effects, [Effect::SetMode(AgentMode::Plan)]);
    assert_eq!(app.status().mode(), AgentMode::Plan);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "how would you add caching?");
    let plan = "1. Add a cache module.\n2. Use it in fetch().";
    answer(&clock, &mut app, 10, vec![text(plan)], StopReason::Stop);
    clock.at(
        &mut app,
        11,
        agent(AgentEvent::AgentEnd { messages: vec![] }),
    );
    let screen = draw(&mut app);
    let bar = (0..screen.backend().buffer().area.width)
        .map(|x| screen.backend().buffer()[(x, 39)].symbol().to_owned())
        .collect::<String>();
    assert!(bar.trim_start().starts_with("PLAN "), "{bar}");

    app.update(key(KeyCode::Enter));
    assert_eq!(
        app.overlay(),
        Some(&Overlay::ImplementPlan { plan: plan.into() })
    );
    insta::assert_snapshot!("implement_plan", draw(&mut app).backend());
    assert_eq!(
        app.update(key(KeyCode::Char('y'))),
        [
            Effect::SetMode(AgentMode::Default),
            Effect::Prompt(format!("Implement this plan:\n\n{plan}")),
        ]
    );
    // Out of plan mode, Enter on an empty composer does nothing.
    app.update(agent(AgentEvent::SettingUpdate {
        key: "mode".into(),
        value: json!("default"),
    }));
    assert_eq!(app.status().mode(), AgentMode::Default);
    assert!(app.update(key(KeyCode::Enter)).is_empty());
    assert_eq!(app.overlay(), None);
    assert!(enter_command(&mut app, "/plan").contains(&Effect::SetMode(AgentMode::Plan)));
}

#[test]
fn the_tree_marks_what_hooks_did_and_a_blocked_prompt_comes_back() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "clean up");
    answer(
        &clock,
        &mut app,
        10,
        vec![
            call("a", "exec", json!({"command": "rm -rf src"})),
            call("b", "exec", json!({"command": "ls"})),
        ],
        StopReason::ToolUse,
    );
    for (id, command) in [("a", "rm -rf src"), ("b", "ls")] {
        start(
            &clock,
            &mut app,
            20,
            id,
            "exec",
            json!({"command": command}),
        );
    }
    let blocked = ToolResult::error("Blocked by a hook: rm outside build/ is not allowed (src)")
        .with_details(json!({"hook": {"blocked": "rm outside build/ is not allowed (src)"}}));
    let rewritten = ToolResult::text("a.txt")
        .with_details(json!({"hook": {"rewritten_args": {"command": "ls -1"}}}));
    for (id, result) in [("a", blocked), ("b", rewritten)] {
        clock.at(
            &mut app,
            30,
            agent(AgentEvent::ToolExecutionEnd {
                tool_call_id: id.into(),
                tool_name: "exec".into(),
                is_error: result.is_error,
                result,
            }),
        );
    }
    insta::assert_snapshot!("hook_marks", draw(&mut app).backend());

    app.update(Msg::PromptBlocked {
        text: "my password is hunter2".into(),
        reason: "do not paste passwords".into(),
    });
    assert_eq!(app.composer().text(), "my password is hunter2");
    assert_eq!(
        notices(&app).last().unwrap(),
        "⛔ A prompt hook blocked your message: do not paste passwords"
    );
}

#[test]
fn plan_mode_in_the_real_client_offers_no_exec_and_offers_the_plan() {
    let sandbox = Sandbox::new();
    let mut tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_for("the idle state", |s| status_line(s).contains("idle"));
    tui.send("\x1b[Z");
    tui.wait_for("PLAN in the status bar", |s| {
        status_line(s).trim_start().starts_with("PLAN ")
    });
    tui.send("run touch made-in-plan-mode\r");
    let screen = tui.wait_for("the refused call", |s| {
        s.contents().contains("The exec tool is not available") && status_line(s).contains("idle")
    });
    assert!(
        !sandbox.workspace().join("made-in-plan-mode").exists(),
        "nothing ran:\n{screen}"
    );
    tui.send("\r");
    tui.wait_text("Implement this plan?");
    tui.send("n");
    tui.send("\x1b[Z");
    tui.wait_for("plan mode off", |s| !status_line(s).contains("PLAN"));
    tui.send("run touch made-after\r");
    tui.wait_for("the command", |s| {
        s.contents().contains("✓ exec") && status_line(s).contains("idle")
    });
    assert!(sandbox.workspace().join("made-after").exists());
}

#[test]
fn prompt_hooks_in_the_real_client_block_or_add_context() {
    let sandbox = Sandbox::new();
    sandbox.write_config(
        "[[hooks.prompt]]\ncommand = \"\"\"input=$(cat); case \"$input\" in \
         *password*) echo 'no passwords, please' >&2; exit 2;; \
         *) echo '{\"context\": \"House rule: be brief.\"}';; esac\"\"\"\n",
    );
    // A message with an image takes the same way as one without.
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::new_rgb8(16, 9)
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    std::fs::write(sandbox.workspace().join("shot.png"), png.into_inner()).unwrap();
    let mut tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_for("the idle state", |s| status_line(s).contains("idle"));
    tui.send("my password @shot.png is hunter2\r");
    let screen = tui.wait_text("A prompt hook blocked your message: no passwords, please");
    assert!(
        !screen.contains("› my password"),
        "the message was not sent:\n{screen}"
    );
    // The text is back in the composer (Ctrl+C clears it); the next message goes out
    // with the hook's context added and its image, as the chat shows it.
    tui.send("\x03");
    tui.send("hello @shot.png there\r");
    tui.wait_for("the message with its context and image", |s| {
        let text = s.contents();
        [
            "› hello @shot.png there",
            "House rule: be brief.",
            "[image: shot.png",
        ]
        .iter()
        .all(|l| text.contains(l))
            && status_line(s).contains("idle")
    });
}
