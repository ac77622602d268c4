//! Session modes: `default` and `plan`, claw-tui's own plan mode (the model is offered
//! only the tools that change nothing), switched with `session/set_mode` or `/plan`,
//! told with `current_mode_update`, kept in the session for the next load, a plan-mode
//! answer's steps sent as a `plan`; and the model, a session config option.

use super::sandbox_for;
use crate::support::acp::drive;
use crate::support::fake_llm::anthropic::text_reply;
use crate::support::fake_llm::{FakeLlm, Scripted};
use agent_client_protocol::v1::schema::{
    LoadSessionRequest, NewSessionRequest, SessionConfigKind, SessionConfigOption,
    SessionConfigOptionCategory, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionModeRequest, StopReason,
};

fn offered(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_mode_offers_only_tools_that_change_nothing_and_is_kept() {
    let server = FakeLlm::start(vec![
        Scripted::sse(text_reply(&[
            "The plan:\n\n1. **Read** `src/lib.rs`\n",
            "2. Add the test\n",
        ])),
        Scripted::sse(text_reply(&["Done:\n1. read it\n2. added it\n"])),
    ])
    .await;
    let sandbox = sandbox_for(&server, "");
    let ws = sandbox.workspace();
    let first = drive(&sandbox, &[], &[], async |s| {
        s.initialize().await;
        let new = s
            .cx
            .send_request(NewSessionRequest::new(ws.clone()))
            .block_task()
            .await
            .unwrap();
        let id = new.session_id.0.to_string();
        let modes = new.modes.unwrap();
        let ids: Vec<&str> = modes.available_modes.iter().map(|m| m.id.0.as_ref()).collect();
        assert_eq!(ids, ["default", "plan"]);
        assert_eq!(modes.current_mode_id.0.as_ref(), "default");
        s.cx
            .send_request(SetSessionModeRequest::new(id.clone(), "plan"))
            .block_task()
            .await
            .unwrap();
        s.seen
            .until("the mode is told", |u| {
                matches!(u, SessionUpdate::CurrentModeUpdate(m) if m.current_mode_id.0.as_ref() == "plan")
            })
            .await;
        let planned = s.prompt(&id, "plan it").await.unwrap();
        assert_eq!(planned.stop_reason, StopReason::EndTurn);
        // The plan-mode answer's steps are sent as plan entries too.
        s.seen
            .until("the plan", |u| matches!(u, SessionUpdate::Plan(_)))
            .await;
        let plans: Vec<Vec<String>> = s
            .seen
            .updates()
            .into_iter()
            .filter_map(|u| match u {
                SessionUpdate::Plan(plan) => {
                    Some(plan.entries.into_iter().map(|e| e.content).collect())
                }
                _ => None,
            })
            .collect();
        assert_eq!(plans, [["Read `src/lib.rs`", "Add the test"]]);
        let unknown = s
            .cx
            .send_request(SetSessionModeRequest::new(id.clone(), "yolo"))
            .block_task()
            .await
            .unwrap_err();
        assert!(unknown.message.contains("yolo"), "{unknown:?}");
        id
    })
    .await;
    let id = first.value;
    let tools = offered(&server.requests()[0].body);
    assert!(tools.contains(&"read_file".to_owned()), "{tools:?}");
    for changing in ["write_file", "edit_file", "exec", "spawn"] {
        assert!(
            !tools.contains(&changing.to_owned()),
            "{changing} offered: {tools:?}"
        );
    }
    // Loaded again, the session is still in plan mode; `/plan` turns it off.
    let second = drive(&sandbox, &[], &[], async |s| {
        s.initialize().await;
        let loaded = s
            .cx
            .send_request(LoadSessionRequest::new(id.clone(), ws.clone()))
            .block_task()
            .await
            .unwrap();
        let answer = s.prompt(&id, "/plan").await.unwrap();
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        s.seen
            .until("plan mode off", |u| {
                matches!(u, SessionUpdate::CurrentModeUpdate(m) if m.current_mode_id.0.as_ref() == "default")
            })
            .await;
        s.prompt(&id, "do it").await.unwrap();
        // Out of plan mode a numbered answer is not a plan.
        let plans = s.seen.updates().into_iter().filter(|u| matches!(u, SessionUpdate::Plan(_)));
        assert_eq!(plans.count(), 0);
        loaded.modes.unwrap().current_mode_id.0.to_string()
    })
    .await;
    assert_eq!(second.value, "plan", "{}", second.stderr);
    let tools = offered(&server.requests()[1].body);
    assert!(tools.contains(&"write_file".to_owned()), "{tools:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_is_a_config_option_the_next_run_uses() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["from opus"]))]).await;
    let sandbox = sandbox_for(
        &server,
        "[providers.big]\napi = \"anthropic\"\nmodel = \"claude-opus-4-1\"\n",
    );
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &[], async |s| {
        s.initialize().await;
        let new =
            s.cx.send_request(NewSessionRequest::new(ws.clone()))
                .block_task()
                .await
                .unwrap();
        let id = new.session_id.0.to_string();
        let offered = new.config_options.unwrap();
        let unknown =
            s.cx.send_request(SetSessionConfigOptionRequest::new(
                id.clone(),
                "model",
                "gpt-9",
            ))
            .block_task()
            .await
            .unwrap_err();
        let set =
            s.cx.send_request(SetSessionConfigOptionRequest::new(
                id.clone(),
                "model",
                "claude-opus-4-1",
            ))
            .block_task()
            .await
            .unwrap();
        s.prompt(&id, "hi").await.unwrap();
        (offered, unknown, set.config_options)
    })
    .await;
    let (offered, unknown, now) = done.value;
    let current = |options: &[SessionConfigOption]| match &options[0].kind {
        SessionConfigKind::Select(select) => select.current_value.0.to_string(),
        other => panic!("{other:?}"),
    };
    assert_eq!(offered[0].id.0.as_ref(), "model");
    assert_eq!(
        offered[0].category,
        Some(SessionConfigOptionCategory::Model)
    );
    assert_eq!(current(&offered), "claude-sonnet-4-5");
    assert!(unknown.message.contains("claude-opus-4-1"), "{unknown:?}");
    assert_eq!(current(&now), "claude-opus-4-1");
    assert_eq!(server.requests()[0].body["model"], "claude-opus-4-1");
}
