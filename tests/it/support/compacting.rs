//! Compaction against the fake server: an agent with a small context window on the
//! OpenAI-compatible provider, replies with scripted usage, and readers of what each
//! request carried.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::FnTool;
use super::fake_llm::openai::{chunk, done_marker, finish, text, tool, usage};
use super::fake_llm::{FakeLlm, Recorded, Scripted};
use claw_tui::agent::{Agent, AgentEvent, CompactionEnd, CompactionSettings, Tool, ToolResult};
use serde_json::{Value, json};
use std::sync::Arc;

/// The window of these tests.
pub const WINDOW: u64 = 8_000;

/// `reserve_tokens` 2,000 (threshold 6,000) and `keep_recent_tokens` 2,500.
pub fn settings() -> CompactionSettings {
    CompactionSettings {
        reserve_tokens: 2_000,
        keep_recent_tokens: 2_500,
        ..CompactionSettings::default()
    }
}

/// An agent on `server` (OpenAI-compatible) with an 8,000-token window, `settings` and a
/// short system prompt.
pub fn agent_on(server: &FakeLlm, settings: CompactionSettings) -> Agent {
    let provider = Arc::new(super::fake_llm::drive::openai(server));
    let agent = Agent::new(provider, "test-model");
    // Requests then start with a system message, as they do in the app.
    agent.set_system_prompt("You are the test agent.");
    agent.configure(|c| {
        c.context_window = Some(WINDOW);
        c.compaction = settings;
    });
    agent
}

/// A `read_file` tool that answers every call with `size` characters of `x`.
pub fn big_reader(size: usize) -> Arc<dyn Tool> {
    FnTool::new(
        "read_file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        move |_, _, _, _| async move { ToolResult::text("x".repeat(size)) },
    )
}

/// A reply calling `name(args)` as `id`, reporting `prompt` input and 20 output tokens.
pub fn call_reply(id: &str, name: &str, args: Value, prompt: u64) -> Scripted {
    Scripted::sse([
        chunk(json!({"role": "assistant", "content": null}), None),
        tool(Some(0), Some(id), Some(name), &args.to_string()),
        finish("tool_calls"),
        usage(prompt, 20, 0),
        done_marker(),
    ])
}

/// A text reply reporting `prompt` input and 10 output tokens.
pub fn text_reply(answer: &str, prompt: u64) -> Scripted {
    Scripted::sse([
        chunk(json!({"role": "assistant", "content": ""}), None),
        text(answer),
        finish("stop"),
        usage(prompt, 10, 0),
        done_marker(),
    ])
}

/// OpenAI's answer to a request longer than the window.
pub fn openai_overflow() -> Scripted {
    Scripted::json(
        400,
        json!({"error": {"message": "This model's maximum context length is 8000 tokens. \
               However, your messages resulted in 9105 tokens. Please reduce the length of \
               the messages.", "type": "invalid_request_error", "param": "messages",
               "code": "context_length_exceeded"}}),
    )
}

/// The messages of a recorded chat completions request.
pub fn messages(request: &Recorded) -> Vec<Value> {
    request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The text of message `i` of a request (`""` when it has none).
pub fn content(request: &Recorded, i: usize) -> String {
    messages(request)
        .get(i)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Whether `request` is a summary request (our summary prompt, one user message).
pub fn is_summary_request(request: &Recorded) -> bool {
    content(request, 0).contains("working summary") && messages(request).len() == 2
}

/// The `compaction_end` events among `events`.
pub fn compaction_ends(events: &[AgentEvent]) -> Vec<CompactionEnd> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::CompactionEnd(end) => Some(end.clone()),
            _ => None,
        })
        .collect()
}

/// A sandbox on `server` with the settings of [`settings`] and a window of [`WINDOW`],
/// whose workspace holds `a.txt` and `b.txt` of 6,000 bytes each (reading both fills
/// the window past the threshold).
pub fn two_big_files_on(server: &FakeLlm) -> super::bin::Sandbox {
    let sandbox = super::bin::Sandbox::new();
    std::fs::write(sandbox.workspace().join("a.txt"), "a".repeat(6_000)).unwrap();
    std::fs::write(sandbox.workspace().join("b.txt"), "b".repeat(6_000)).unwrap();
    sandbox.write_config(&format!(
        "provider = \"local\"\n\n[compaction]\nreserve_tokens = 2000\nkeep_recent_tokens = 2500\n\n\
         [providers.local]\napi = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"local-model\"\n\
         context_window = 8000\n",
        server.url()
    ));
    sandbox
}

/// `turns` earlier exchanges of about 1,000 bytes a message (a question and its
/// answer each), to give a history something to compact.
pub fn earlier_history(turns: usize) -> Vec<claw_tui::agent::Message> {
    use claw_tui::agent::{AssistantMessage, Block, Message, StopReason};
    (0..turns)
        .flat_map(|i| {
            [
                Message::user(format!("old question {i}: {}", "q".repeat(1_000))),
                Message::Assistant(AssistantMessage {
                    content: vec![Block::Text {
                        text: format!("old answer {i}: {}", "a".repeat(1_000)),
                    }],
                    stop_reason: StopReason::Stop,
                    model: "test-model".into(),
                    ..AssistantMessage::default()
                }),
            ]
        })
        .collect()
}
