#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Images on the wire, over real HTTP: an attached image and a tool result's image in
//! each format (Anthropic `image` blocks, also inside `tool_result`; chat completions
//! `image_url` data URLs; Responses `input_image`), the images of tool results following
//! them as a user message where tool outputs carry text only, and a text-only model
//! getting a note instead.

use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::responses::text_reply as responses_reply;
use crate::support::fake_llm::{FakeLlm, Scripted, anthropic as wire_a, openai as wire_o};
use base64::Engine;
use claw_tui::agent::{
    AssistantMessage, Block, ImageData, StopReason, ToolResultMessage, UserMessage,
};
use claw_tui::llm::{LlmMessage, LlmRequest, Provider, RemoteProvider};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A real (tiny) PNG, as the composer or `read_file` would attach it.
fn shot(name: &str) -> ImageData {
    let mut bytes = std::io::Cursor::new(Vec::new());
    image::DynamicImage::new_rgb8(3, 2)
        .write_to(&mut bytes, image::ImageFormat::Png)
        .unwrap();
    claw_tui::images::from_bytes(name, bytes.into_inner()).unwrap()
}

fn b64(image: &ImageData) -> String {
    base64::engine::general_purpose::STANDARD.encode(&image.data)
}

/// "look" with `screen.png`, then a call of `read_file` whose result carries `plot.png`.
fn conversation(model: &str) -> (LlmRequest<'static>, ImageData, ImageData) {
    let screen = shot("screen.png");
    let plot = shot("plot.png");
    let mut req = request(model, "unused");
    let mut call = AssistantMessage::empty(model);
    call.stop_reason = StopReason::ToolUse;
    call.content = vec![Block::ToolCall {
        id: "call_1".into(),
        name: "read_file".into(),
        args: json!({"path": "plot.png"}),
    }];
    req.messages = vec![
        LlmMessage::from(UserMessage::new("look").with_images(vec![screen.clone()])),
        LlmMessage::from(call),
        LlmMessage::from(ToolResultMessage {
            tool_call_id: "call_1".into(),
            tool_name: "read_file".into(),
            content: "Image plot.png".into(),
            images: vec![plot.clone()],
            details: Value::Null,
            is_error: false,
            timestamp: 0,
        }),
    ];
    (req, screen, plot)
}

async fn send(provider: &RemoteProvider, req: LlmRequest<'static>) {
    done(&collect(provider.stream(req, CancellationToken::new())).await);
}

#[tokio::test]
async fn anthropic_sends_image_blocks_also_inside_tool_results() {
    let server = FakeLlm::start(vec![Scripted::sse(wire_a::text_reply(&["ok"]))]).await;
    let (req, screen, plot) = conversation("claude-sonnet-4-5");
    send(&anthropic(&server), req).await;
    let turns = server.requests()[0].body["messages"].clone();
    assert_eq!(
        turns[0]["content"],
        json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(&screen)}},
            {"type": "text", "text": "look", "cache_control": {"type": "ephemeral"}}
        ])
    );
    assert_eq!(
        turns[2]["content"][0]["content"],
        json!([
            {"type": "text", "text": "Image plot.png"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(&plot)}}
        ])
    );
}

#[tokio::test]
async fn chat_completions_sends_data_urls_and_tool_images_after_the_tool_messages() {
    let server = FakeLlm::start(vec![Scripted::sse(wire_o::text_reply(&["ok"]))]).await;
    let (req, screen, plot) = conversation("gpt-4o");
    send(&openai(&server), req).await;
    let messages = server.requests()[0].body["messages"].clone();
    let url = |i: &ImageData| format!("data:image/png;base64,{}", b64(i));
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": url(&screen)}}
        ]})
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "Image plot.png"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "user", "content": [
            {"type": "text", "text": "The images the tool results above returned: plot.png"},
            {"type": "image_url", "image_url": {"url": url(&plot)}}
        ]})
    );
    assert_eq!(messages.as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn responses_sends_input_images() {
    let server = FakeLlm::start(vec![Scripted::sse(responses_reply("gpt-5", &["ok"]))]).await;
    let (req, screen, plot) = conversation("gpt-5");
    send(&responses(&server), req).await;
    let input = server.requests()[0].body["input"].clone();
    let url = |i: &ImageData| format!("data:image/png;base64,{}", b64(i));
    assert_eq!(
        input[0],
        json!({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": url(&screen), "detail": "auto"}
        ]})
    );
    assert_eq!(
        input[2],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "Image plot.png"})
    );
    assert_eq!(
        input[3]["content"][1],
        json!({"type": "input_image", "image_url": url(&plot), "detail": "auto"})
    );
}

#[tokio::test]
async fn a_text_only_model_reads_a_note_instead_of_the_image() {
    let server = FakeLlm::start(vec![Scripted::sse(wire_o::text_reply(&["ok"]))]).await;
    let (req, _, _) = conversation("deepseek-chat");
    send(&openai(&server), req).await;
    let sent = &server.requests()[0];
    let raw = String::from_utf8(sent.raw.to_vec()).unwrap();
    assert!(!raw.contains("image_url"), "{raw}");
    assert_eq!(
        sent.body["messages"][1]["content"],
        "look\n[image: screen.png 3×2, 88 B: not sent, the model deepseek-chat cannot see images]"
    );
    assert!(
        sent.body["messages"][3]["content"]
            .as_str()
            .unwrap()
            .ends_with("plot.png 3×2, 88 B: not sent, the model deepseek-chat cannot see images]")
    );
}
