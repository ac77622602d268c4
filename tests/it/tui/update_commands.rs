//! `App::update` for slash commands, completion, and the keys of the tree and dashboard.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::*;
use claw_tui::agent::{AgentEvent, NoticeLevel, QueueKind, QueueMode};
use claw_tui::runtime::cron::{CronError, CronOptions, CronService};
use claw_tui::tui::adapt::RuntimeControls;
use claw_tui::tui::chat::EntryKind;
use claw_tui::tui::layout::Focus;
use claw_tui::tui::{
    Background, BackgroundAction, BackgroundError, BackgroundFailure, Effect, Msg, Overlay,
    sessions, subagents,
};
use crossterm::event::KeyCode;
use serde_json::json;

#[test]
fn slash_commands_become_effects() {
    let mut app = app();
    let run = |app: &mut claw_tui::tui::App, text: &str| {
        typed(app, text);
        app.update(key(KeyCode::Esc));
        app.update(key(KeyCode::Enter))
    };
    assert!(
        run(&mut app, "/steering all")
            .contains(&Effect::SetQueueMode(QueueKind::Steering, QueueMode::All))
    );
    assert_eq!(app.status().queue_modes().0, QueueMode::All);
    assert!(
        run(&mut app, "/followup all")
            .contains(&Effect::SetQueueMode(QueueKind::FollowUp, QueueMode::All))
    );
    assert!(run(&mut app, "/model gpt-x").contains(&Effect::SetModel("gpt-x".into())));
    assert_eq!(app.status().model(), "gpt-x");
    assert!(run(&mut app, "/new").contains(&Effect::Sessions(sessions::Effect::New)));
    // The runtime answers with the new session; until then prompts wait.
    app.update(Msg::Sessions(sessions::Msg::Loaded(Box::default())));
    assert!(run(&mut app, "/quit").contains(&Effect::Quit));
    let effects = run(&mut app, "/bogus");
    assert!(
        !effects.iter().any(|e| !matches!(e, Effect::SaveHistory(_))),
        "{effects:?}"
    );
    assert!(
        !run(&mut app, "/copy")
            .iter()
            .any(|e| matches!(e, Effect::Copy(_))),
        "no answer to copy yet"
    );
    assert_eq!(
        run(&mut app, " /etc/hosts is odd").last(),
        Some(&Effect::Prompt("/etc/hosts is odd".into()))
    );
    run(&mut app, "/help");
    assert_eq!(app.overlay(), Some(&Overlay::Help { scroll: 0 }));
}

#[test]
fn slash_completion_opens_and_tab_completes() {
    let mut app = app();
    typed(&mut app, "/ste");
    assert_eq!(app.composer().completion().unwrap().items, ["/steering"]);
    app.update(key(KeyCode::Tab));
    assert_eq!(app.composer().text(), "/steering ");
    assert_eq!(
        app.focus(),
        Focus::Composer,
        "Tab completed instead of moving the focus"
    );
    typed(&mut app, "a");
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [
            Effect::SaveHistory("/steering all".into()),
            Effect::SetQueueMode(QueueKind::Steering, QueueMode::All)
        ],
        "Enter completes and runs a finished command"
    );
}

#[test]
fn at_paths_ask_for_the_file_list_once() {
    let mut app = app();
    typed(&mut app, "see @sr");
    let effects = app.update(key(KeyCode::Char('c')));
    assert!(effects.is_empty(), "the first @ already asked");
    app.update(Msg::WorkspaceFiles(vec![
        "src/".into(),
        "src/lib.rs".into(),
        "README.md".into(),
    ]));
    assert_eq!(
        app.composer().completion().unwrap().items,
        ["src/", "src/lib.rs"]
    );
    app.update(key(KeyCode::Down));
    app.update(key(KeyCode::Tab));
    assert_eq!(app.composer().text(), "see @src/lib.rs ");

    let mut fresh = self::app();
    let effects: Vec<Effect> = "x @"
        .chars()
        .flat_map(|c| fresh.update(key(KeyCode::Char(c))))
        .collect();
    assert_eq!(effects, [Effect::ListFiles]);
}

#[test]
fn tree_and_dashboard_keys() {
    let mut app = app();
    app.update(agent(AgentEvent::AgentStart));
    app.update(agent(AgentEvent::TurnStart { turn: 1 }));
    app.update(agent(AgentEvent::ToolExecutionStart {
        tool_call_id: "c1".into(),
        tool_name: "exec".into(),
        args: json!({"command": "ls"}),
    }));
    app.update(key(KeyCode::Tab));
    app.update(key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Tree);
    assert_eq!(app.tools().selected(), Some("c1"));
    let effects = app.update(key(KeyCode::Enter));
    assert_eq!(
        app.overlay(),
        Some(&Overlay::Detail {
            call_id: "c1".into(),
            scroll: 0
        })
    );
    assert!(
        matches!(effects.as_slice(), [Effect::Highlight(r)] if r.lang == "json" && r.code.contains("\"ls\""))
    );
    app.update(key(KeyCode::Down));
    assert_eq!(
        app.overlay(),
        Some(&Overlay::Detail {
            call_id: "c1".into(),
            scroll: 1
        })
    );
    app.update(key(KeyCode::Esc));
    assert_eq!(app.overlay(), None);

    app.update(Msg::Subagents(subagents::Msg::List(vec![subagent("sa-1")])));
    app.update(Msg::CronJobs(vec![
        cron("job-1", false),
        cron("job-2", true),
    ]));
    app.update(key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Dashboard);
    // x asks first, like d; y cancels.
    assert_eq!(app.update(key(KeyCode::Char('x'))), []);
    assert!(matches!(app.overlay(), Some(Overlay::ConfirmCancel { id, .. }) if id == "sa-1"));
    assert_eq!(
        app.update(key(KeyCode::Char('y'))),
        [Effect::Subagents(subagents::Effect::Cancel("sa-1".into()))]
    );
    app.update(key(KeyCode::Down));
    assert_eq!(
        app.update(key(KeyCode::Char('p'))),
        [Effect::PauseCron("job-1".into())]
    );
    app.update(key(KeyCode::Down));
    assert_eq!(
        app.update(key(KeyCode::Char('p'))),
        [Effect::ResumeCron("job-2".into())]
    );
    assert_eq!(app.update(key(KeyCode::Char('d'))), []);
    assert!(matches!(app.overlay(), Some(Overlay::ConfirmDelete { id, .. }) if id == "job-2"));
    assert_eq!(
        app.update(key(KeyCode::Char('y'))),
        [Effect::DeleteCron("job-2".into())]
    );
    app.update(key(KeyCode::Char('d')));
    assert_eq!(
        app.update(key(KeyCode::Char('n'))),
        [],
        "any other key keeps the job"
    );
    assert_eq!(app.overlay(), None);
}

#[test]
fn a_failed_dashboard_action_is_an_error_line_naming_the_action_and_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    let cron =
        CronService::open(&dir.path().join("data"), &workspace, CronOptions::default()).unwrap();
    let controls = RuntimeControls {
        cron: Some(cron),
        ..RuntimeControls::default()
    };
    let refused = controls.pause_cron("cron-9").unwrap_err();
    assert!(
        matches!(&refused, BackgroundError::Cron(CronError::UnknownJob { id }) if id == "cron-9"),
        "{refused:?}"
    );
    let absent = controls.cancel_subagent("subagent-1").unwrap_err();
    assert!(matches!(absent, BackgroundError::NoSubagents), "{absent:?}");

    let mut app = app();
    for (action, error) in [
        (BackgroundAction::PauseCron, refused),
        (BackgroundAction::CancelSubagent, absent),
    ] {
        app.update(Msg::BackgroundFailed(BackgroundFailure { action, error }));
    }
    let lines: Vec<(NoticeLevel, String)> = app
        .chat()
        .transcript()
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Notice(level, text) => Some((*level, text.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        lines,
        [
            (
                NoticeLevel::Error,
                "cannot pause the job: No cron job with id \"cron-9\" in this workspace. \
                 action=list shows the job ids."
                    .to_owned()
            ),
            (
                NoticeLevel::Error,
                "cannot cancel the subagent: subagents are not available in this session."
                    .to_owned()
            ),
        ]
    );
}
