//! `session/load`: an earlier session of the workspace, resumed in a new process, its
//! history replayed as updates before the answer, and the conversation going on from
//! it; `session/close`, after which the session is written and gone.

use super::{real, sandbox_for};
use crate::support::acp::{drive, text_of};
use crate::support::fake_llm::anthropic::{reply, text_reply, tool_block};
use crate::support::fake_llm::{FakeLlm, Scripted};
use agent_client_protocol::v1::schema::{
    CloseSessionRequest, LoadSessionRequest, SessionUpdate, StopReason, ToolCallContent,
    ToolCallStatus,
};

#[tokio::test(flavor = "multi_thread")]
async fn a_loaded_session_replays_its_history_and_goes_on() {
    let server = FakeLlm::start(vec![
        Scripted::sse(reply(
            vec![tool_block(
                0,
                "toolu_w",
                "write_file",
                &[r#"{"path": "plan.md", "content": "step 1\n"}"#],
            )],
            "tool_use",
        )),
        Scripted::sse(text_reply(&["Noted: 42."])),
        Scripted::sse(text_reply(&["It was 42."])),
    ])
    .await;
    let sandbox = sandbox_for(&server, "");
    let ws = sandbox.workspace();
    let first = drive(&sandbox, &[], &[], async |s| {
        let id = s.open(&ws).await;
        s.prompt(&id, "remember 42").await.unwrap();
        id
    })
    .await;
    let id = first.value;
    assert_eq!(first.code, 0, "{}", first.stderr);
    let second = drive(&sandbox, &[], &[], async |s| {
        s.initialize().await;
        let loaded =
            s.cx.send_request(LoadSessionRequest::new(id.clone(), ws.clone()))
                .block_task()
                .await
                .unwrap();
        // Everything replayed came before the answer.
        let replayed = s.seen.updates();
        let answer = s.prompt(&id, "what was it?").await.unwrap();
        (loaded, replayed, answer.stop_reason)
    })
    .await;
    let (loaded, replayed, stop) = second.value;
    assert_eq!(stop, StopReason::EndTurn, "{}", second.stderr);
    assert_eq!(loaded.modes.unwrap().current_mode_id.0.as_ref(), "default");
    let user: Vec<String> = replayed
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::UserMessageChunk(c) => text_of(&c.content),
            _ => None,
        })
        .collect();
    assert_eq!(user, ["remember 42"]);
    let said: String = replayed
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk(c) => text_of(&c.content),
            _ => None,
        })
        .collect();
    assert_eq!(said, "Noted: 42.");
    // The tool call with its result and the diff of the file it wrote.
    let call = replayed.iter().position(
        |u| matches!(u, SessionUpdate::ToolCall(c) if c.tool_call_id.0.as_ref() == "toolu_w"),
    );
    let done = replayed.iter().position(|u| {
        matches!(u, SessionUpdate::ToolCallUpdate(c)
            if c.tool_call_id.0.as_ref() == "toolu_w"
                && c.fields.status == Some(ToolCallStatus::Completed))
    });
    assert!(call.unwrap() < done.unwrap(), "{replayed:#?}");
    let SessionUpdate::ToolCallUpdate(result) = &replayed[done.unwrap()] else {
        unreachable!()
    };
    let diff = result
        .fields
        .content
        .iter()
        .flatten()
        .find_map(|c| match c {
            ToolCallContent::Diff(d) => Some(d.clone()),
            _ => None,
        })
        .expect("the write's diff");
    assert_eq!(real(&diff.path), real(&ws).join("plan.md"));
    assert_eq!((diff.old_text, diff.new_text.as_str()), (None, "step 1\n"));
    // The model saw the earlier conversation.
    let requests = server.requests();
    let sent = requests[2].body["messages"].to_string();
    assert!(
        sent.contains("remember 42") && sent.contains("what was it?"),
        "{sent}"
    );
    // One session file, continued.
    assert_eq!(sandbox.session_files().len(), 1);
    assert_eq!(second.code, 0, "{}", second.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn loading_an_unknown_session_is_an_error_that_names_it() {
    let server = FakeLlm::start(Vec::new()).await;
    let sandbox = sandbox_for(&server, "");
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &[], async |s| {
        s.initialize().await;
        s.cx.send_request(LoadSessionRequest::new("0123abcd", ws.clone()))
            .block_task()
            .await
            .unwrap_err()
    })
    .await;
    let error = done.value;
    assert!(error.message.contains("0123abcd"), "{error:?}");
    assert_eq!(done.code, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_session_is_saved_and_then_unknown() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["kept"]))]).await;
    let sandbox = sandbox_for(&server, "");
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &[], async |s| {
        let id = s.open(&ws).await;
        s.prompt(&id, "keep this").await.unwrap();
        s.cx.send_request(CloseSessionRequest::new(id.clone()))
            .block_task()
            .await
            .unwrap();
        // Written and closed before the answer: another process may open it now.
        let roles = crate::support::bin::session_roles(&sandbox.only_session());
        let after = s.prompt(&id, "still there?").await.unwrap_err();
        (roles, after)
    })
    .await;
    let (roles, after) = done.value;
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(i32::from(after.code), -32002, "{after:?}");
    assert_eq!(done.code, 0, "{}", done.stderr);
}
