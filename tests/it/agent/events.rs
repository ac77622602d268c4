#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The event stream of the `Agent` facade: order, payloads, JSON form and the tool
//! round trip.

// tests/support is shared and not ours to edit; its `FnTool::new` returns `Arc<dyn Tool>`.

use crate::support::reading::assistant_text;
use crate::support::*;
use claw_tui::agent::{
    Agent, AgentEvent, EventKind, Message, MessageDelta, StopReason, ToolResult,
};
use claw_tui::llm::LlmMessage;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The snake_case tag every event kind must serialise to.
fn tag(kind: EventKind) -> &'static str {
    match kind {
        EventKind::AgentStart => "agent_start",
        EventKind::AgentEnd => "agent_end",
        EventKind::TurnStart => "turn_start",
        EventKind::TurnEnd => "turn_end",
        EventKind::MessageStart => "message_start",
        EventKind::MessageUpdate => "message_update",
        EventKind::MessageEnd => "message_end",
        EventKind::ToolExecutionStart => "tool_execution_start",
        EventKind::ToolExecutionUpdate => "tool_execution_update",
        EventKind::ToolExecutionEnd => "tool_execution_end",
        EventKind::QueueUpdate => "queue_update",
        EventKind::AutoRetryStart => "auto_retry_start",
        EventKind::AutoRetryEnd => "auto_retry_end",
        EventKind::SettingUpdate => "setting_update",
        EventKind::HistoryCut => "history_cut",
        EventKind::CompactionStart => "compaction_start",
        EventKind::CompactionEnd => "compaction_end",
    }
}

#[tokio::test]
async fn text_only_run_emits_the_exact_sequence_and_leaves_an_idle_state() {
    let provider = ScriptedProvider::new(vec![
        Reply::text(&["Hel", "lo", " world"]),
        Reply::text(&["Second"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut rx = agent.subscribe(None);

    agent.prompt("hi").unwrap();
    let events = until_agent_end(&mut rx).await;

    assert_eq!(
        labels(&events),
        [
            "agent_start",
            "turn_start:1",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_update",
            "message_update",
            "message_update",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ]
    );

    // The user message carries the prompt, in start and end alike.
    for event in &events[2..4] {
        let (AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message }) = event
        else {
            unreachable!()
        };
        let Message::User(user) = message else {
            panic!("expected the user message, got {message:?}")
        };
        assert_eq!(user.content, "hi");
    }

    // The assistant message starts empty; one update per streamed chunk, in order.
    let AgentEvent::MessageStart { message: start } = &events[4] else {
        unreachable!()
    };
    assert!(start.as_assistant().unwrap().content.is_empty());
    let deltas: Vec<MessageDelta> = events[5..8]
        .iter()
        .map(|e| match e {
            AgentEvent::MessageUpdate { delta } => delta.clone(),
            other => panic!("expected message_update, got {other:?}"),
        })
        .collect();
    assert_eq!(
        deltas,
        ["Hel", "lo", " world"]
            .iter()
            .map(|t| MessageDelta::Text {
                index: 0,
                text: (*t).to_owned()
            })
            .collect::<Vec<_>>()
    );

    let AgentEvent::MessageEnd {
        message: final_message,
    } = &events[8]
    else {
        unreachable!()
    };
    assert_eq!(assistant_text(final_message), "Hello world");
    assert_eq!(
        final_message.as_assistant().unwrap().stop_reason,
        StopReason::Stop
    );

    let AgentEvent::TurnEnd {
        message,
        tool_results,
        ..
    } = &events[9]
    else {
        unreachable!()
    };
    assert_eq!(message, final_message);
    assert!(tool_results.is_empty());

    let AgentEvent::AgentEnd { messages: added } = &events[10] else {
        unreachable!()
    };
    assert_eq!(added.len(), 2);
    assert!(matches!(&added[0], Message::User(u) if u.content == "hi"));
    assert_eq!(&added[1], final_message);

    // The state already reflects the finished run when agent_end is received.
    let state = agent.state();
    assert_eq!(state.messages.to_vec(), added.as_slice());
    assert!(!state.is_streaming);
    assert!(state.streaming_message.is_none());
    assert!(state.pending_tool_calls.is_empty());
    assert!(state.error.is_none());
    tokio::time::timeout(DEADLINE, agent.wait_for_idle())
        .await
        .expect("agent_end was received but the agent is not idle");

    // A second run's agent_end holds only what that run added, not the whole history.
    agent.prompt("again").unwrap();
    let events = until_agent_end(&mut rx).await;
    let Some(AgentEvent::AgentEnd { messages: added2 }) = events.last() else {
        unreachable!()
    };
    let state = agent.state();
    assert_eq!(state.messages.len(), 4);
    assert_eq!(state.messages.to_vec()[..2], added[..]);
    assert_eq!(state.messages.to_vec()[2..], added2[..]);
    assert!(matches!(&added2[0], Message::User(u) if u.content == "again"));
    assert_eq!(assistant_text(&added2[1]), "Second");
    assert_eq!(provider.requests().len(), 2);
}

#[tokio::test]
async fn events_serialise_with_snake_case_tags_and_round_trip() {
    let reporting_echo = FnTool::new("echo", text_schema(), |_, args, _, updates| async move {
        updates.send(json!({"progress": 50}));
        ToolResult::text(args["text"].as_str().unwrap_or_default().to_owned())
    });
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[("call_1", "echo", json!({"text": "ping"}))]),
        Reply::text(&["pong"]),
        Reply::text(&["later too"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_tools(vec![reporting_echo]);
    let mut rx = agent.subscribe(None);

    // Queued before the run: produces queue_update now and when the run takes it.
    agent.follow_up("later");
    agent.prompt("hi").unwrap();
    let events = until_agent_end(&mut rx).await;

    let mut seen = BTreeSet::new();
    for event in &events {
        let text = serde_json::to_string(event).unwrap();
        let json: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["type"], tag(event.kind()), "wrong tag in {text}");
        seen.insert(tag(event.kind()));

        let back: AgentEvent = serde_json::from_str(&text).unwrap();
        assert_eq!(&back, event, "round trip changed {text}");

        match event {
            AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
                assert_eq!(json["message"]["role"], role(message), "{text}");
                if let Message::ToolResult(result) = message {
                    assert!(!result.is_error);
                    assert_eq!(json["message"]["is_error"], json!(false), "{text}");
                    assert_eq!(json["message"]["content"], "ping");
                    assert_eq!(json["message"]["tool_call_id"], "call_1");
                    assert_eq!(json["message"]["tool_name"], "echo");
                }
            }
            AgentEvent::ToolExecutionEnd { is_error, .. } => {
                assert!(!is_error);
                assert_eq!(json["is_error"], json!(false), "{text}");
                assert_eq!(json["result"]["is_error"], json!(false), "{text}");
                assert_eq!(json["result"]["content"], "ping", "{text}");
                assert_eq!(json["tool_call_id"], "call_1");
                assert_eq!(json["tool_name"], "echo");
            }
            AgentEvent::TurnEnd { tool_results, .. } => {
                assert_eq!(json["message"]["role"], "assistant", "{text}");
                for (i, result) in tool_results.iter().enumerate() {
                    assert_eq!(json["tool_results"][i]["role"], "tool_result", "{text}");
                    assert_eq!(json["tool_results"][i]["is_error"], json!(false), "{text}");
                    assert!(matches!(result, Message::ToolResult(_)));
                }
            }
            AgentEvent::AgentEnd { messages } => {
                let roles: Vec<&str> = json["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m["role"].as_str().unwrap())
                    .collect();
                assert_eq!(
                    roles,
                    [
                        "user",
                        "assistant",
                        "tool_result",
                        "assistant",
                        "user",
                        "assistant"
                    ]
                );
                assert_eq!(messages.len(), 6);
            }
            AgentEvent::QueueUpdate { .. } => {
                assert!(json["steering"].is_array(), "{text}");
                assert!(json["follow_up"].is_array(), "{text}");
            }
            AgentEvent::MessageUpdate { .. } => {
                assert!(json["delta"]["kind"].is_string(), "{text}");
            }
            _ => {}
        }
    }

    let expected: BTreeSet<&str> = [
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "queue_update",
    ]
    .into_iter()
    .collect();
    assert_eq!(seen, expected);

    // The first queue_update (the follow-up being queued) has the exact JSON form.
    let first_queue = events
        .iter()
        .find(|e| e.kind() == EventKind::QueueUpdate)
        .unwrap();
    assert_eq!(
        serde_json::to_value(first_queue).unwrap(),
        json!({"type": "queue_update", "steering": [], "follow_up": ["later"]})
    );
    assert_eq!(provider.remaining(), 0);
}

#[tokio::test]
async fn tool_call_round_trip_feeds_the_result_to_the_next_request() {
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[("call_1", "echo", json!({"text": "ping"}))]),
        Reply::text(&["got ping"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_tools(vec![echo_tool()]);
    let mut rx = agent.subscribe(None);

    agent.prompt("call echo").unwrap();
    let events = until_agent_end(&mut rx).await;

    assert_eq!(
        labels(&events),
        [
            "agent_start",
            "turn_start:1",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_update",
            "message_update",
            "message_end:assistant",
            "tool_start:call_1",
            "tool_end:call_1",
            "message_start:tool_result",
            "message_end:tool_result",
            "turn_end",
            "turn_start:2",
            "message_start:assistant",
            "message_update",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ]
    );

    let AgentEvent::ToolExecutionStart {
        tool_call_id,
        tool_name,
        args,
    } = &events[8]
    else {
        unreachable!()
    };
    assert_eq!(
        (tool_call_id.as_str(), tool_name.as_str()),
        ("call_1", "echo")
    );
    assert_eq!(args, &json!({"text": "ping"}));

    let AgentEvent::ToolExecutionEnd {
        result, is_error, ..
    } = &events[9]
    else {
        unreachable!()
    };
    assert_eq!(result.content, "ping");
    assert!(!is_error && !result.is_error);

    let AgentEvent::MessageEnd {
        message: Message::ToolResult(tool_result),
    } = &events[11]
    else {
        panic!("expected the tool result message, got {:?}", events[11])
    };
    assert_eq!(tool_result.content, "ping");
    assert_eq!(tool_result.tool_call_id, "call_1");
    assert_eq!(tool_result.tool_name, "echo");
    assert!(!tool_result.is_error);

    let AgentEvent::TurnEnd {
        message,
        tool_results,
        ..
    } = &events[12]
    else {
        unreachable!()
    };
    let calls = message.as_assistant().unwrap().tool_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_1");
    assert_eq!(tool_results, &[Message::ToolResult(tool_result.clone())]);

    let AgentEvent::TurnEnd {
        message,
        tool_results,
        ..
    } = &events[17]
    else {
        unreachable!()
    };
    assert_eq!(assistant_text(message), "got ping");
    assert!(tool_results.is_empty());

    // The model saw the tool, then the result of its call in the second request.
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].tools.iter().any(|t| t.name == "echo"));
    assert_eq!(requests[0].messages.len(), 1);
    let second = &requests[1].messages;
    assert_eq!(second.len(), 3, "{second:#?}");
    assert!(matches!(&second[0], LlmMessage::User(u) if u.content == "call echo"));
    assert!(matches!(&second[1], LlmMessage::Assistant(a) if a.tool_calls().len() == 1));
    let LlmMessage::ToolResult(sent) = &second[2] else {
        panic!("expected a tool result, got {:?}", second[2])
    };
    assert_eq!(sent.as_ref(), tool_result);

    let AgentEvent::AgentEnd { messages } = &events[18] else {
        unreachable!()
    };
    assert_eq!(
        messages.iter().map(role).collect::<Vec<_>>(),
        ["user", "assistant", "tool_result", "assistant"]
    );
    assert_eq!(agent.state().messages.to_vec(), messages.as_slice());
}
