#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Prompt caching over real HTTP: in all three wire formats each request of an agent
//! run starts with the previous request's messages byte for byte (same system prompt,
//! same tools in the same order, same JSON key order); Anthropic's cache breakpoints sit
//! on the tools, the system prompt and the two newest user turns and move forward;
//! cache reads and writes are counted and priced; `cache = false` sends none of it.

use crate::support::fake_llm::anthropic as wire_a;
use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::openai as wire_o;
use crate::support::fake_llm::responses::{Script, text_reply as responses_reply};
use crate::support::fake_llm::{FakeLlm, Recorded, Scripted};
use crate::support::json_text::{elements, field};
use crate::support::{echo_tool, until_agent_end};
use claw_tui::agent::{Agent, ThinkingLevel, Tool};
use claw_tui::llm::{Provider, RemoteProvider};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

const BREAKPOINT: &str = r#""cache_control":{"type":"ephemeral"}"#;

/// A second tool, so that the order of tools is checked too.
fn shout_tool() -> Arc<dyn Tool> {
    crate::support::FnTool::new(
        "shout",
        crate::support::text_schema(),
        |_, args, _, _| async move {
            claw_tui::agent::ToolResult::text(
                args["text"].as_str().unwrap_or_default().to_uppercase(),
            )
        },
    )
}

/// Runs one prompt through an agent with two tools; the server scripts two tool turns
/// and a final answer. Returns the three requests as sent.
async fn three_requests(provider: RemoteProvider, server: &FakeLlm) -> Vec<Recorded> {
    let agent = Agent::new(Arc::new(provider), "model-x");
    agent.set_system_prompt("You are a careful agent.\nUse tools.");
    agent.set_tools(vec![echo_tool(), shout_tool()]);
    agent.set_thinking_level(ThinkingLevel::Low);
    let mut rx = agent.subscribe(None);
    agent.prompt("echo a, then shout b").unwrap();
    until_agent_end(&mut rx).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    requests
}

fn raw(request: &Recorded) -> String {
    String::from_utf8(request.raw.to_vec()).unwrap()
}

/// Each request's `messages_key` array starts with the previous request's elements,
/// byte for byte (after removing `strip`, the markers allowed to move), and the fields
/// in `same` are identical in every request.
fn assert_prefix_stable(requests: &[Recorded], messages_key: &str, same: &[&str], strip: &str) {
    for pair in requests.windows(2) {
        let (before, after) = (raw(&pair[0]), raw(&pair[1]));
        for key in same {
            assert_eq!(field(&before, key), field(&after, key), "{key} changed");
        }
        let old = elements(field(&before, messages_key));
        let new = elements(field(&after, messages_key));
        assert!(new.len() > old.len(), "{} then {}", old.len(), new.len());
        for (i, (a, b)) in old.iter().zip(&new).enumerate() {
            let (a, b) = (without(a, strip), without(b, strip));
            assert_eq!(a, b, "element {i} of {messages_key} changed");
        }
    }
}

/// `text` without the field `marker` (with the comma that joined it to a neighbour).
fn without(text: &str, marker: &str) -> String {
    if marker.is_empty() {
        return text.to_owned();
    }
    text.replace(&format!("{marker},"), "")
        .replace(&format!(",{marker}"), "")
}

#[tokio::test]
async fn anthropic_requests_keep_their_prefix_and_move_the_breakpoints() {
    let call = |id: &str, name: &str, text: &str| {
        let mut out = vec![wire_a::message_start(
            "claude-sonnet-4-5",
            2_000,
            1_500,
            300,
        )];
        out.extend(wire_a::thinking_block(0, &["Plan."], "c2lnbmF0dXJl"));
        let input = format!("{{\"text\":\"{text}\"}}");
        out.extend(wire_a::tool_block(1, id, name, &[&input]));
        out.push(wire_a::message_delta("tool_use", 20));
        out.push(wire_a::message_stop());
        Scripted::sse(out)
    };
    let server = FakeLlm::start(vec![
        call("toolu_1", "echo", "a"),
        call("toolu_2", "shout", "b"),
        Scripted::sse(wire_a::text_reply(&["a B"])),
    ])
    .await;
    let requests = three_requests(anthropic(&server), &server).await;
    assert_prefix_stable(&requests, "messages", &["system", "tools"], BREAKPOINT);

    // Consecutive requests agree even on the markers: the newest user turn of one is
    // the second newest of the next.
    let first = elements(field(&raw(&requests[0]), "messages")).join(",");
    let second = field(&raw(&requests[1]), "messages").to_owned();
    assert!(second.starts_with(&format!("[{first}")), "{second}");

    // Four breakpoints: the last tool, the system prompt, the last block of each of the
    // two newest user turns.
    let body = &requests[2].body;
    assert_eq!(raw(&requests[2]).matches(BREAKPOINT).count(), 4);
    assert_eq!(body["tools"][1]["name"], "shout");
    assert_eq!(
        body["tools"][1]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert!(body["tools"][0].get("cache_control").is_none());
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    let turns = body["messages"].as_array().unwrap();
    assert_eq!(turns.len(), 5);
    assert!(turns[0]["content"][0].get("cache_control").is_none());
    for i in [2, 4] {
        assert_eq!(turns[i]["role"], "user");
        assert_eq!(turns[i]["content"][0]["type"], "tool_result");
        assert_eq!(
            turns[i]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
    }
}

#[tokio::test]
async fn cache_reads_and_writes_are_counted_and_priced() {
    let mut reply = vec![wire_a::message_start(
        "claude-sonnet-4-5",
        100,
        20_000,
        3_000,
    )];
    reply.extend(wire_a::text_block(0, &["ok"]));
    reply.push(wire_a::message_delta("end_turn", 10));
    reply.push(wire_a::message_stop());
    let server = FakeLlm::start(vec![Scripted::sse(reply)]).await;
    let events = collect(
        anthropic(&server).stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()),
    )
    .await;
    let u = done(&events).usage;
    assert_eq!(
        (u.input, u.cache_read, u.cache_write, u.output),
        (100, 20_000, 3_000, 10)
    );
    // Sonnet 4 list prices: $3 in, $15 out, $0.30 cache read, $3.75 cache write per 1M.
    let expected = (100.0 * 3.0 + 10.0 * 15.0 + 20_000.0 * 0.3 + 3_000.0 * 3.75) / 1e6;
    assert!(
        (u.cost - expected).abs() < 1e-12,
        "{} vs {expected}",
        u.cost
    );
}

#[tokio::test]
async fn chat_completions_requests_keep_their_prefix() {
    let call = |id: &str, name: &str, text: &str| {
        Scripted::sse([
            wire_o::tool(
                Some(0),
                Some(id),
                Some(name),
                &format!("{{\"text\":\"{text}\"}}"),
            ),
            wire_o::finish("tool_calls"),
            wire_o::usage(500, 20, 400),
            wire_o::done_marker(),
        ])
    };
    let server = FakeLlm::start(vec![
        call("call_1", "echo", "a"),
        call("call_2", "shout", "b"),
        Scripted::sse(wire_o::text_reply(&["a B"])),
    ])
    .await;
    let mut config = openai_config(&server);
    config.compat.prompt_cache_key = true;
    let requests = three_requests(RemoteProvider::new(config).unwrap(), &server).await;
    assert_prefix_stable(&requests, "messages", &["tools", "prompt_cache_key"], "");
    let key = requests[0].body["prompt_cache_key"].as_str().unwrap();
    assert!(key.starts_with("claw-"));
}

#[tokio::test]
async fn responses_requests_keep_their_prefix_with_the_reasoning_replayed() {
    let call = |index: usize, id: &str, name: &str, text: &str| {
        Scripted::sse(
            Script::new("gpt-5")
                .reasoning(0, &[&["Thinking ", "it over."]], &format!("ENC-{index}"))
                .call(1, id, name, &["{\"text\":", &format!("\"{text}\"}}")])
                .completed(800, 512, 30, 12),
        )
    };
    let server = FakeLlm::start(vec![
        call(1, "call_1", "echo", "a"),
        call(2, "call_2", "shout", "b"),
        Scripted::sse(responses_reply("gpt-5", &["a B"])),
    ])
    .await;
    let requests = three_requests(responses(&server), &server).await;
    assert_prefix_stable(
        &requests,
        "input",
        &["instructions", "tools", "prompt_cache_key", "reasoning"],
        "",
    );
    let input = requests[2].body["input"].as_array().unwrap().clone();
    let reasoning: Vec<_> = input.iter().filter(|i| i["type"] == "reasoning").collect();
    assert_eq!(reasoning.len(), 2);
    assert_eq!(reasoning[1]["encrypted_content"], "ENC-2");
}

#[tokio::test]
async fn cache_off_sends_no_breakpoints_and_no_cache_key() {
    let server = FakeLlm::start(vec![
        Scripted::sse(wire_a::text_reply(&["x"])),
        Scripted::sse(responses_reply("gpt-5", &["y"])),
    ])
    .await;
    let mut config = anthropic_config(&server);
    config.remote.cache = false;
    let provider = RemoteProvider::new(config).unwrap();
    done(
        &collect(provider.stream(request("claude-sonnet-4-5", "x"), CancellationToken::new()))
            .await,
    );
    let mut config = responses_config(&server);
    config.remote.cache = false;
    let provider = RemoteProvider::new(config).unwrap();
    done(&collect(provider.stream(request("gpt-5", "y"), CancellationToken::new())).await);
    let requests = server.requests();
    assert!(
        !raw(&requests[0]).contains("cache_control"),
        "{}",
        raw(&requests[0])
    );
    assert_eq!(requests[0].body["system"], "You are terse.");
    assert!(requests[1].body.get("prompt_cache_key").is_none());
}
