//! A subagent's approval request in the client: the overlay names the subagent and its
//! task, and the answer goes back to the waiting call through the real runtime.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::runtime::{RoutingProvider, is_status, settings, until_runtime};
use crate::support::tui::scene::draw;
use crate::support::tui::{app, key, request};
use crate::support::{DEADLINE, Reply};
use claw_tui::runtime::SubagentStatus;
use claw_tui::setup::start_runtime_with;
use claw_tui::tools::exec::{ApprovalDecision, ApprovalRequest, Approver};
use claw_tui::tools::policy::SubagentRef;
use claw_tui::tui::{Effect, Inbox, Msg};
use crossterm::event::KeyCode;
use serde_json::json;

fn from_subagent(id: &str, command: &str) -> ApprovalRequest {
    ApprovalRequest {
        subagent: Some(SubagentRef {
            id: "subagent-3".into(),
            label: "flaky tests".into(),
            task: "Find out why tests/it/net.rs fails one run in ten\nand fix it.".into(),
        }),
        ..request(id, command)
    }
}

#[test]
fn the_overlay_names_the_subagent_and_its_task() {
    let mut app = app();
    app.update(Msg::Approval(from_subagent(
        "approval-7",
        "cargo test -- net",
    )));
    let screen = draw(&mut app).backend().to_string();
    assert!(
        screen.contains("Subagent subagent-3 \"flaky tests\""),
        "{screen}"
    );
    assert!(
        screen.contains("task: Find out why tests/it/net.rs fails one run in ten and fix it."),
        "{screen}"
    );
    assert!(screen.contains("The subagent wants to run:"), "{screen}");
    insta::assert_snapshot!("subagent_approval_overlay", draw(&mut app).backend());
    // The answer names this request.
    assert_eq!(
        app.update(key(KeyCode::Char('n'))),
        [Effect::Approve {
            id: "approval-7".into(),
            decision: ApprovalDecision::Deny
        }]
    );
}

#[tokio::test]
async fn a_subagents_request_reaches_the_overlay_and_y_runs_its_command() {
    let (_home, settings) = settings("[exec]\napproval = \"ask\"\n");
    let provider = RoutingProvider::new();
    provider.route(
        "fix the flaky test",
        vec![
            Reply::tool_calls(&[(
                "main-1",
                "spawn",
                json!({"task": "touch the marker", "label": "marker"}),
            )]),
            Reply::text(&["Started."]),
            Reply::text(&["Done."]),
        ],
    );
    provider.route(
        "touch the marker",
        vec![
            Reply::tool_calls(&[("s1", "exec", json!({"command": "touch tui-marker"}))]),
            Reply::text(&["Touched."]),
        ],
    );
    let mut inbox = Inbox::new();
    let approver = Approver::Ask(inbox.approval_asker(false));
    let mut main =
        start_runtime_with(&settings, provider, std::sync::Arc::new(|_| {}), approver).unwrap();
    main.supervisor.submit("fix the flaky test");
    let asked = loop {
        let msg = tokio::time::timeout(DEADLINE, inbox.recv())
            .await
            .expect("no approval request reached the client")
            .unwrap();
        if let Msg::Approval(request) = msg {
            break request;
        }
    };
    let marker = settings.workspace.join("tui-marker");
    assert!(!marker.exists(), "the command ran before it was approved");

    let mut app = app();
    app.update(Msg::Approval(asked.clone()));
    let screen = draw(&mut app).backend().to_string();
    assert!(
        screen.contains("Subagent subagent-1 \"marker\""),
        "{screen}"
    );
    assert!(screen.contains("task: touch the marker"), "{screen}");
    assert!(screen.contains("$ touch tui-marker"), "{screen}");
    let effects = app.update(key(KeyCode::Char('y')));
    let [Effect::Approve { id, decision }] = effects.as_slice() else {
        panic!("expected one approval, got {effects:?}");
    };
    assert_eq!(id, &asked.id);
    // What the client's runtime does with the effect.
    inbox.approvals().resolve(id, *decision);
    until_runtime(&mut main.events, |e| {
        is_status(e, "subagent-1", SubagentStatus::Done)
    })
    .await;
    assert!(marker.exists(), "the approved command did not run");
    main.subagents.shutdown().await;
    main.supervisor.stop().await;
}
