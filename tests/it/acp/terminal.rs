//! The editor's terminal (`[acp] editor_terminal`): with it on and offered by the
//! client, `exec` runs each command in a terminal the editor creates (embedded in the
//! call's update), after the user allows that command, whatever `[exec] approval`
//! says; the deny rules and the working directory are still checked first, and a
//! cancel kills the command. Without the offer, commands stay in the sandbox.

use super::{demo_sandbox, real};
use crate::support::acp::drive;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, PromptRequest, SessionUpdate, StopReason,
    TextContent, ToolCallContent, ToolCallStatus,
};

const ON: &str = "[acp]\neditor_terminal = true\n";

fn with_terminal() -> ClientCapabilities {
    ClientCapabilities::new().terminal(true)
}

fn shows_terminal(update: &SessionUpdate) -> bool {
    matches!(update, SessionUpdate::ToolCallUpdate(c)
        if c.fields.content.iter().flatten().any(|c| matches!(c, ToolCallContent::Terminal(_))))
}

#[tokio::test(flavor = "multi_thread")]
async fn each_command_is_allowed_by_the_user_then_runs_in_the_editors_terminal() {
    let sandbox = demo_sandbox(ON);
    let ws = sandbox.workspace();
    let done = drive(
        &sandbox,
        &[],
        // A third answer is there to be used if the deny-rule command were asked about.
        &["allow-once", "reject", "allow-once"],
        async |s| {
            s.initialize_with(with_terminal()).await;
            let id = s.open_initialized(&ws).await;
            let ran = s
                .prompt(&id, "run echo hi-there && touch made")
                .await
                .unwrap();
            let rejected = s.prompt(&id, "run touch rejected").await.unwrap();
            let refused = s.prompt(&id, "run rm -rf /").await.unwrap();
            let asked = s.seen.permissions.lock().unwrap().len();
            let created = s.seen.terminals.created.lock().unwrap().clone();
            let requests = s.seen.terminals.asked.lock().unwrap().clone();
            (
                [ran.stop_reason, rejected.stop_reason, refused.stop_reason],
                asked,
                created,
                requests,
                s.seen.updates(),
            )
        },
    )
    .await;
    let (stops, asked, created, requests, updates) = done.value;
    assert_eq!(stops, [StopReason::EndTurn; 3], "{}", done.stderr);
    // Asked for each command the deny rules let through: the default approval is
    // "never", but outside the sandbox each command is the user's to allow; nobody is
    // asked about one that would be refused anyway.
    assert_eq!(asked, 2);
    // Only the allowed command reached the editor, as sh -c in the workspace: not the
    // rejected one, nor the one the deny rules refuse.
    assert_eq!(
        created,
        [(
            vec![
                "sh".to_owned(),
                "-c".to_owned(),
                "echo hi-there && touch made".to_owned()
            ],
            Some(real(&ws))
        )]
    );
    assert!(ws.join("made").exists());
    assert!(!ws.join("rejected").exists());
    let methods: Vec<&str> = requests.iter().map(|(m, _)| *m).collect();
    assert_eq!(methods, ["wait_for_exit", "output", "release"]);
    // The call's updates embed the terminal, and its end carries the output.
    assert!(updates.iter().any(shows_terminal), "{updates:#?}");
    let finished = updates.iter().any(|u| {
        matches!(u, SessionUpdate::ToolCallUpdate(c)
            if c.fields.status == Some(ToolCallStatus::Completed)
                && format!("{:?}", c.fields.content).contains("hi-there"))
    });
    assert!(finished, "{updates:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_kills_the_command_in_the_editors_terminal() {
    let sandbox = demo_sandbox(ON);
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &["allow-once"], async |s| {
        s.initialize_with(with_terminal()).await;
        let id = s.open_initialized(&ws).await;
        let running = s.cx.send_request(PromptRequest::new(
            id.clone(),
            vec![ContentBlock::Text(TextContent::new("run sleep 30"))],
        ));
        s.seen.until("the terminal is shown", shows_terminal).await;
        s.cx.send_notification(CancelNotification::new(id.clone()))
            .unwrap();
        let answer = running.block_task().await.unwrap();
        let requests = s.seen.terminals.asked.lock().unwrap().clone();
        (answer.stop_reason, requests)
    })
    .await;
    let (stop, requests) = done.value;
    assert_eq!(stop, StopReason::Cancelled, "{}", done.stderr);
    let methods: Vec<&str> = requests.iter().map(|(m, _)| *m).collect();
    assert!(methods.contains(&"kill"), "{methods:?}");
    assert!(methods.contains(&"release"), "{methods:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_offer_commands_stay_in_the_sandbox() {
    let sandbox = demo_sandbox(ON);
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &[], async |s| {
        let id = s.open(&ws).await;
        s.prompt(&id, "run touch sandboxed").await.unwrap();
        s.seen.terminals.created.lock().unwrap().len()
    })
    .await;
    assert_eq!(done.value, 0);
    assert!(ws.join("sandboxed").exists());
    assert!(
        done.stderr
            .contains("editor_terminal is on, but this editor does not offer terminal"),
        "{}",
        done.stderr
    );
}
