//! Approvals over ACP: `[exec] approval = "ask"` becomes `session/request_permission`
//! for the main agent and for subagents (named), and each answer applies as the
//! terminal client's would; a cancel while the user is asked takes the question back.
//! Checked on the file system.

use super::demo_sandbox;
use crate::support::DEADLINE;
use crate::support::acp::drive;
use crate::support::poll::until_async;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, PermissionOptionKind, PromptRequest, SessionUpdate,
    StopReason, TextContent, ToolCallStatus,
};

const ASK: &str = "[exec]\napproval = \"ask\"\n";

#[tokio::test(flavor = "multi_thread")]
async fn each_answer_applies_as_the_terminal_clients_would() {
    let sandbox = demo_sandbox(ASK);
    let ws = sandbox.workspace();
    let answers = ["allow-once", "reject", "allow-always"];
    let done = drive(&sandbox, &[], &answers, async |s| {
        let id = s.open(&ws).await;
        let mut ends = Vec::new();
        for marker in ["once", "rejected", "always", "unasked"] {
            let answer = s.prompt(&id, &format!("run touch {marker}")).await.unwrap();
            ends.push(answer.stop_reason);
        }
        let asked = s.seen.permissions.lock().unwrap().clone();
        (ends, asked, s.seen.updates())
    })
    .await;
    let (ends, asked, updates) = done.value;
    assert!(ends.iter().all(|e| *e == StopReason::EndTurn), "{ends:?}");
    // Asked three times: "always" covers the fourth call.
    assert_eq!(asked.len(), 3, "{asked:#?}");
    let first = &asked[0];
    assert_eq!(
        first.tool_call.fields.title.as_deref(),
        Some("Run: touch once")
    );
    let kinds: Vec<_> = first.options.iter().map(|o| o.kind).collect();
    assert_eq!(
        kinds,
        [
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
            PermissionOptionKind::RejectOnce
        ]
    );
    // The editor heard of the call before the question about it.
    let announced = updates.iter().any(|u| {
        matches!(u, SessionUpdate::ToolCall(c) if c.tool_call_id == first.tool_call.tool_call_id)
    });
    assert!(announced, "{updates:#?}");
    for (marker, made) in [
        ("once", true),
        ("rejected", false),
        ("always", true),
        ("unasked", true),
    ] {
        assert_eq!(ws.join(marker).exists(), made, "{marker}");
    }
    let rejected = &asked[1].tool_call.tool_call_id;
    let failed = updates.iter().any(|u| {
        matches!(u, SessionUpdate::ToolCallUpdate(c)
            if &c.tool_call_id == rejected && c.fields.status == Some(ToolCallStatus::Failed))
    });
    assert!(failed, "the rejected call ends failed");
    assert_eq!(done.code, 0, "{}", done.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subagents_request_names_it_and_its_answer_applies() {
    let sandbox = demo_sandbox(ASK);
    let ws = sandbox.workspace();
    let marker = ws.join("sub-marker");
    let done = drive(&sandbox, &[], &["allow-once"], async |s| {
        let id = s.open(&ws).await;
        s.prompt(&id, "spawn run touch sub-marker").await.unwrap();
        until_async("the subagent's command ran", DEADLINE, || {
            marker.exists().then_some(())
        })
        .await;
        s.seen.permissions.lock().unwrap().clone()
    })
    .await;
    let asked = done.value;
    assert_eq!(asked.len(), 1, "{}", done.stderr);
    let title = asked[0].tool_call.fields.title.as_deref().unwrap();
    assert!(title.contains("subagent-1"), "{title}");
    assert!(
        asked[0].tool_call.tool_call_id.0.starts_with("subagent-1/"),
        "{:?}",
        asked[0].tool_call.tool_call_id
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_while_the_user_is_asked_withdraws_the_question_and_runs_nothing() {
    let sandbox = demo_sandbox(ASK);
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &["hold"], async |s| {
        let id = s.open(&ws).await;
        let running = s.cx.send_request(PromptRequest::new(
            id.clone(),
            vec![ContentBlock::Text(TextContent::new("run touch never"))],
        ));
        s.seen.until_held().await;
        s.cx.send_notification(CancelNotification::new(id.clone()))
            .unwrap();
        let answer = running.block_task().await.unwrap();
        // The agent took its question back ($/cancel_request).
        let cancellation = s.seen.held.lock().unwrap()[0].1.clone();
        tokio::time::timeout(DEADLINE, cancellation.cancelled())
            .await
            .expect("the question was not withdrawn");
        answer.stop_reason
    })
    .await;
    assert_eq!(done.value, StopReason::Cancelled, "{}", done.stderr);
    assert!(!ws.join("never").exists());
    assert_eq!(done.code, 0, "{}", done.stderr);
}

/// A command the tool would refuse anyway (a deny rule, a working directory outside the
/// workspace) is refused at once: nobody is asked to approve it.
#[tokio::test(flavor = "multi_thread")]
async fn nobody_is_asked_about_a_command_that_would_be_refused() {
    let sandbox = demo_sandbox(ASK);
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &["allow-once"], async |s| {
        let id = s.open(&ws).await;
        let answer = s.prompt(&id, "run rm -rf /").await.unwrap();
        let asked = s.seen.permissions.lock().unwrap().len();
        (answer.stop_reason, asked, s.seen.updates())
    })
    .await;
    let (stop, asked, updates) = done.value;
    assert_eq!(stop, StopReason::EndTurn, "{}", done.stderr);
    assert_eq!(asked, 0);
    let refused = updates.iter().any(|u| {
        matches!(u, SessionUpdate::ToolCallUpdate(c)
            if c.fields.status == Some(ToolCallStatus::Failed))
    });
    assert!(refused, "{updates:#?}");
}
