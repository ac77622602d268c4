//! Prompt turns over ACP: streamed text and thoughts, tool calls announced and updated
//! with their diffs and live output, cancel mid-tool, a prompt sent while another runs,
//! and how each turn ends.

use super::{demo_sandbox, real, sandbox_for};
use crate::support::acp::{drive, text_of};
use crate::support::bin::{run, session_lines, session_messages};
use crate::support::fake_llm::anthropic::{
    reply, text_block, text_reply, thinking_block, tool_block,
};
use crate::support::fake_llm::{FakeLlm, Scripted, Step};
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, PromptRequest, SessionUpdate, StopReason, TextContent,
    ToolCallContent, ToolCallStatus, ToolKind,
};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::Notify;

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_streams_its_answer_and_thoughts_and_is_recorded_like_any_session() {
    let server = FakeLlm::start(vec![Scripted::sse(reply(
        vec![
            thinking_block(0, &["let me ", "see"], "sig"),
            text_block(1, &["Hello", ", ", "editor"]),
        ],
        "end_turn",
    ))])
    .await;
    let sandbox = sandbox_for(&server, "");
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &[], async |s| {
        let id = s.open(&ws).await;
        let answer = s.prompt(&id, "hi").await.unwrap();
        (id, answer.stop_reason, s.seen.updates())
    })
    .await;
    let (id, stop, updates) = done.value;
    assert_eq!(stop, StopReason::EndTurn, "{}", done.stderr);
    let chunks: Vec<String> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk(c) => text_of(&c.content),
            _ => None,
        })
        .collect();
    assert_eq!(chunks, ["Hello", ", ", "editor"], "streamed as it came");
    let thoughts: String = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentThoughtChunk(c) => text_of(&c.content),
            _ => None,
        })
        .collect();
    assert_eq!(thoughts, "let me see");
    // After each turn, and with the cost at the end of the run.
    let usage = updates.iter().rev().find_map(|u| match u {
        SessionUpdate::UsageUpdate(usage) => Some(usage.clone()),
        _ => None,
    });
    let usage = usage.expect("a usage update");
    assert!(usage.used > 0 && usage.size >= usage.used, "{usage:?}");
    assert!(
        usage
            .cost
            .is_some_and(|c| c.amount > 0.0 && c.currency == "USD")
    );
    // The token counts have no field of their own: `_meta`.
    let tokens = &usage.meta.as_ref().unwrap()["clawTuiUsage"];
    assert_eq!(tokens["input"], 100, "{tokens}");
    assert_eq!(tokens["output"], 20, "{tokens}");
    assert_eq!(done.code, 0, "{}", done.stderr);
    // Nothing but the protocol on stdout.
    for line in &done.stdout {
        let value: Value = serde_json::from_str(line).unwrap();
        assert_eq!(value["jsonrpc"], "2.0", "{line}");
    }
    // Recorded as any session: the file, its events and requests, so replay and the
    // inspector read it.
    let file = sandbox.only_session();
    assert!(file.to_string_lossy().contains(&id), "{file:?}");
    let roles: Vec<String> = session_messages(&file)
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(session_lines(&file)[0]["type"], "header");
    let mut replay = sandbox.command();
    replay.args(["replay", &id, "--mode", "json"]);
    let (code, stdout, stderr) = run(replay);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("\"agent_end\""), "{stdout}");
    let mut inspect = sandbox.command();
    inspect.args(["inspect", &id, "--list"]);
    let (code, stdout, stderr) = run(inspect);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("claude-sonnet-4-5"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_call_is_announced_updated_and_shows_the_diff_of_its_edit() {
    let server = FakeLlm::start(vec![
        Scripted::sse(reply(
            vec![tool_block(
                0,
                "toolu_1",
                "edit_file",
                &[
                    r#"{"path": "notes.txt", "#,
                    r#""old_text": "beta", "new_text": "gamma"}"#,
                ],
            )],
            "tool_use",
        )),
        Scripted::sse(text_reply(&["Done."])),
    ])
    .await;
    let sandbox = sandbox_for(&server, "");
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &[], async |s| {
        let id = s.open(&ws).await;
        let answer = s.prompt(&id, "change beta").await.unwrap();
        (answer.stop_reason, s.seen.updates())
    })
    .await;
    let (stop, updates) = done.value;
    assert_eq!(stop, StopReason::EndTurn, "{}", done.stderr);
    let file = real(&ws).join("notes.txt");
    // Announced as the model starts writing it: kind and title from its name.
    let announced = updates
        .iter()
        .find_map(|u| match u {
            SessionUpdate::ToolCall(call) if call.tool_call_id.0.as_ref() == "toolu_1" => {
                Some(call.clone())
            }
            _ => None,
        })
        .expect("a tool_call");
    assert_eq!(announced.kind, ToolKind::Edit);
    assert_eq!(announced.status, ToolCallStatus::Pending);
    let mine = |u: &&SessionUpdate| matches!(u, SessionUpdate::ToolCallUpdate(c) if c.tool_call_id.0.as_ref() == "toolu_1");
    let fields: Vec<_> = updates
        .iter()
        .filter(mine)
        .map(|u| match u {
            SessionUpdate::ToolCallUpdate(c) => c.fields.clone(),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(fields.len(), 2, "{fields:#?}");
    // Running: its title, location and raw input.
    assert_eq!(fields[0].status, Some(ToolCallStatus::InProgress));
    assert_eq!(fields[0].title.as_deref(), Some("Edit notes.txt"));
    let location = &fields[0].locations.as_ref().unwrap()[0];
    assert_eq!(real(&location.path), file);
    assert_eq!(fields[0].raw_input.as_ref().unwrap()["new_text"], "gamma");
    // Done: the diff of the whole file, as ACP defines it, and where it changed.
    assert_eq!(fields[1].status, Some(ToolCallStatus::Completed));
    let content = fields[1].content.as_ref().unwrap();
    let ToolCallContent::Diff(diff) = &content[0] else {
        panic!("no diff first: {content:#?}")
    };
    assert_eq!(real(&diff.path), file);
    assert_eq!(diff.old_text.as_deref(), Some("alpha\nbeta\n"));
    assert_eq!(diff.new_text, "alpha\ngamma\n");
    assert_eq!(fields[1].locations.as_ref().unwrap()[0].line, Some(2));
    // What the model got is the content; the tool's details ride in `_meta`.
    assert_eq!(fields[1].raw_output, None);
    let meta = updates
        .iter()
        .filter(mine)
        .find_map(|u| match u {
            SessionUpdate::ToolCallUpdate(c) => c.meta.clone(),
            _ => None,
        })
        .expect("the details in _meta");
    assert_eq!(
        meta["clawTuiDetails"]["change"]["kind"], "edited",
        "{meta:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "alpha\ngamma\n");
    assert_eq!(done.code, 0, "{}", done.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commands_output_streams_while_it_runs() {
    let sandbox = demo_sandbox("");
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &[], async |s| {
        let id = s.open(&ws).await;
        let answer = s
            .prompt(&id, "run echo one; sleep 0.5; echo two")
            .await
            .unwrap();
        (answer.stop_reason, s.seen.updates())
    })
    .await;
    let (stop, updates) = done.value;
    assert_eq!(stop, StopReason::EndTurn, "{}", done.stderr);
    let call = updates
        .iter()
        .find_map(|u| match u {
            SessionUpdate::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(call.kind, ToolKind::Execute);
    let shown: Vec<(Option<ToolCallStatus>, String)> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCallUpdate(c) if c.tool_call_id == call.tool_call_id => Some((
                c.fields.status,
                c.fields
                    .content
                    .iter()
                    .flatten()
                    .filter_map(|c| match c {
                        ToolCallContent::Content(c) => text_of(&c.content),
                        _ => None,
                    })
                    .collect(),
            )),
            _ => None,
        })
        .collect();
    // "one" is shown while the command still runs, before "two" exists.
    let live = shown
        .iter()
        .position(|(status, text)| {
            status.is_none() && text.contains("one") && !text.contains("two")
        })
        .unwrap_or_else(|| panic!("no live output: {shown:#?}"));
    let end = shown
        .iter()
        .position(|(status, _)| *status == Some(ToolCallStatus::Completed))
        .unwrap();
    assert!(live < end);
    assert!(shown[end].1.contains("one\ntwo"), "{shown:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_stops_the_running_tool_and_the_turn_ends_cancelled() {
    let sandbox = demo_sandbox("");
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &["--max-turns", "3"], &[], async |s| {
        let id = s.open(&ws).await;
        let started = std::time::Instant::now();
        let running = s.cx.send_request(PromptRequest::new(
            id.clone(),
            vec![ContentBlock::Text(TextContent::new("run sleep 30"))],
        ));
        s.seen
            .until("the command runs", |u| {
                matches!(u, SessionUpdate::ToolCallUpdate(c)
                    if c.fields.status == Some(ToolCallStatus::InProgress))
            })
            .await;
        s.cx.send_notification(CancelNotification::new(id.clone()))
            .unwrap();
        let answer = running.block_task().await.unwrap();
        let stopped_in = started.elapsed();
        // The session goes on: the next prompt runs.
        let next = s.prompt(&id, "read notes.txt").await.unwrap();
        (
            answer.stop_reason,
            stopped_in,
            next.stop_reason,
            s.seen.updates(),
        )
    })
    .await;
    let (stop, stopped_in, next, updates) = done.value;
    assert_eq!(stop, StopReason::Cancelled, "{}", done.stderr);
    assert!(
        stopped_in.as_secs() < 20,
        "the command was not stopped: {stopped_in:?}"
    );
    assert_eq!(next, StopReason::EndTurn);
    let ended = updates.iter().any(|u| {
        matches!(u, SessionUpdate::ToolCallUpdate(c)
            if c.fields.status == Some(ToolCallStatus::Failed))
    });
    assert!(ended, "the stopped call ends failed: {updates:#?}");
    // The history stays well formed: the stopped call has its result, saying so, and
    // the next prompt follows it.
    let messages = session_messages(&sandbox.only_session());
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles[..4],
        ["user", "assistant", "tool_result", "user"],
        "{messages:#?}"
    );
    assert_eq!(messages[2]["details"]["cancelled"], true);
    assert_eq!(messages[2]["details"]["interrupted"], "abort");
    assert!(
        messages[2]["content"]
            .as_str()
            .unwrap()
            .contains("Cancelled by the user"),
        "{messages:#?}"
    );
    assert_eq!(messages[3]["content"], "read notes.txt");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_sent_while_another_runs_waits_its_turn_and_both_are_answered() {
    let gate = Arc::new(Notify::new());
    let first = Scripted::sse(vec![crate::support::fake_llm::anthropic::message_start(
        "claude-sonnet-4-5",
        10,
        0,
        0,
    )])
    .then_chunks(text_block(0, &["first "]))
    .then(Step::Wait(gate.clone()))
    .then_chunks([
        crate::support::fake_llm::anthropic::message_delta("end_turn", 5),
        crate::support::fake_llm::anthropic::message_stop(),
    ]);
    let server = FakeLlm::start(vec![first, Scripted::sse(text_reply(&["second"]))]).await;
    let sandbox = sandbox_for(&server, "");
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &[], async |s| {
        let id = s.open(&ws).await;
        let one = s.cx.send_request(PromptRequest::new(
            id.clone(),
            vec![ContentBlock::Text(TextContent::new("one"))],
        ));
        s.seen
            .until("the first answer streams", |u| {
                matches!(u, SessionUpdate::AgentMessageChunk(_))
            })
            .await;
        let two = s.cx.send_request(PromptRequest::new(
            id.clone(),
            vec![ContentBlock::Text(TextContent::new("two"))],
        ));
        gate.notify_one();
        let one = one.block_task().await.unwrap();
        let two = two.block_task().await.unwrap();
        (one.stop_reason, two.stop_reason, s.seen.agent_text())
    })
    .await;
    let (one, two, text) = done.value;
    assert_eq!(
        (one, two),
        (StopReason::EndTurn, StopReason::EndTurn),
        "{}",
        done.stderr
    );
    assert_eq!(text, "first second");
    // The second request carries both prompts, in order.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1].body["messages"].to_string();
    let (a, b) = (sent.find("\"one\"").unwrap(), sent.find("\"two\"").unwrap());
    assert!(a < b, "{sent}");
}

#[tokio::test(flavor = "multi_thread")]
async fn each_way_a_turn_ends_has_its_stop_reason() {
    let server = FakeLlm::start(vec![
        Scripted::sse(reply(vec![text_block(0, &["cut"])], "max_tokens")),
        Scripted::sse(reply(vec![text_block(0, &["no"])], "refusal")),
        Scripted::sse(reply(
            vec![tool_block(0, "toolu_9", "read_file", &[r#"{"path": "notes.txt"}"#])],
            "tool_use",
        )),
        Scripted::json(
            400,
            serde_json::json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad request body"}}),
        ),
    ])
    .await;
    let sandbox = sandbox_for(&server, "");
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &["--max-turns", "1"], &[], async |s| {
        let id = s.open(&ws).await;
        let mut ends = Vec::new();
        for text in ["long", "bad", "read it"] {
            ends.push(s.prompt(&id, text).await.unwrap().stop_reason);
        }
        let failed = s.prompt(&id, "fail").await.unwrap_err();
        (ends, failed)
    })
    .await;
    let (ends, failed) = done.value;
    assert_eq!(
        ends,
        [
            StopReason::MaxTokens,
            StopReason::Refusal,
            StopReason::MaxTurnRequests
        ],
        "{}",
        done.stderr
    );
    assert!(failed.message.contains("bad request body"), "{failed:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_clients_cwd_is_the_sessions_workspace() {
    let sandbox = demo_sandbox("");
    let other = sandbox.dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "from the other project\n").unwrap();
    let done = drive(&sandbox, &[], &[], async |s| {
        let id = s.open(&other).await;
        s.prompt(&id, "read notes.txt").await.unwrap();
        (id, s.seen.updates())
    })
    .await;
    let (id, updates) = done.value;
    let read: String = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCallUpdate(c)
                if c.fields.status == Some(ToolCallStatus::Completed) =>
            {
                c.fields.content.clone()
            }
            _ => None,
        })
        .flatten()
        .filter_map(|c| match c {
            ToolCallContent::Content(c) => text_of(&c.content),
            _ => None,
        })
        .collect();
    assert!(read.contains("from the other project"), "{read}");
    // The session is one of that workspace's.
    let mut sessions = std::process::Command::new(env!("CARGO_BIN_EXE_claw-tui"));
    sessions
        .arg("--config")
        .arg(sandbox.config_path())
        .arg("--workspace")
        .arg(&other)
        .arg("sessions");
    sandbox.isolate(&mut sessions);
    let (code, stdout, stderr) = run(sessions);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(&id[..12]), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_hook_extends_a_prompt_or_refuses_it() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["noted"]))]).await;
    let scripts = tempfile::tempdir().unwrap();
    let hook = scripts.path().join("prompt.sh");
    std::fs::write(
        &hook,
        "input=$(cat)\ncase \"$input\" in\n  *password*) echo 'do not paste passwords' >&2; exit 2 ;;\n  *) echo '{\"context\": \"House rule: tests live in t/.\"}' ;;\nesac\n",
    )
    .unwrap();
    let sandbox = sandbox_for(
        &server,
        &format!("[[hooks.prompt]]\ncommand = \"sh {}\"\n", hook.display()),
    );
    let ws = sandbox.workspace();
    let done = drive(&sandbox, &[], &[], async |s| {
        let id = s.open(&ws).await;
        let refused = s.prompt(&id, "my password is hunter2").await.unwrap();
        let said = s.seen.agent_text();
        let passed = s.prompt(&id, "add a test").await.unwrap();
        (refused.stop_reason, said, passed.stop_reason)
    })
    .await;
    let (refused, said, passed) = done.value;
    assert_eq!(refused, StopReason::Refusal, "{}", done.stderr);
    assert!(said.contains("do not paste passwords"), "{said}");
    assert_eq!(passed, StopReason::EndTurn);
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "the refused prompt reached no model");
    let sent = requests[0].body["messages"].to_string();
    assert!(sent.contains("House rule: tests live in t/."), "{sent}");
    assert!(!sent.contains("hunter2"), "{sent}");
}
