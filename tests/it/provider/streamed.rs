#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! A long request's body is written while it is sent: on each wire format it arrives
//! byte for byte as the whole body would, with its exact `Content-Length` and not
//! chunked, and a retry sends the same bytes again.

use crate::support::fake_llm::drive::*;
use crate::support::fake_llm::long::{long_history, request_of, shared};
use crate::support::fake_llm::responses as rsp;
use crate::support::fake_llm::{FakeLlm, Recorded, Scripted, anthropic as ant, openai as oai};
use claw_tui::agent::{History, ImageData, Message, UserMessage};
use claw_tui::llm::{LlmRequest, Provider, RemoteProvider, SharedRequest, WireConfig};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Checks that `received` is `expected` with its exact length, not chunked.
fn assert_sent_whole(received: &Recorded, expected: &[u8]) {
    assert!(
        received.raw[..] == expected[..],
        "the body differs from the one written whole ({} bytes received, {} expected)",
        received.raw.len(),
        expected.len()
    );
    assert_eq!(
        received.headers.get("content-length"),
        Some(&expected.len().to_string())
    );
    assert_eq!(received.headers.get("transfer-encoding"), None);
}

/// Sends the request of a long history to `server` in `config`'s format, which must
/// answer "ok", and checks what arrived.
async fn arrives_whole(config: WireConfig, server: &FakeLlm) {
    let provider = RemoteProvider::new(config).unwrap();
    let history = Arc::new(long_history(120));
    let expected = provider.request_body(&request_of(&history)).unwrap();
    // Many times the size of a chunk the body is written in.
    assert!(expected.len() > 500_000, "{}", expected.len());
    let events =
        collect(provider.stream_shared(shared(&history), CancellationToken::new(), None)).await;
    assert_eq!(done(&events).text(), "ok");
    let received = server.requests();
    assert_eq!(received.len(), 1);
    assert_sent_whole(&received[0], &expected);
}

#[tokio::test]
async fn a_long_anthropic_body_arrives_as_written_whole() {
    let server = FakeLlm::start(vec![Scripted::sse(ant::text_reply(&["ok"]))]).await;
    arrives_whole(WireConfig::from(anthropic_config(&server)), &server).await;
}

#[tokio::test]
async fn a_long_chat_completions_body_arrives_as_written_whole() {
    let server = FakeLlm::start(vec![Scripted::sse(oai::text_reply(&["ok"]))]).await;
    arrives_whole(WireConfig::from(openai_config(&server)), &server).await;
}

#[tokio::test]
async fn a_long_responses_body_arrives_as_written_whole() {
    let reply = rsp::text_reply("claude-sonnet-4-5", &["ok"]);
    let server = FakeLlm::start(vec![Scripted::sse(reply)]).await;
    arrives_whole(WireConfig::from(responses_config(&server)), &server).await;
}

#[tokio::test]
async fn a_retry_after_a_500_sends_the_long_body_again_byte_for_byte() {
    let server = FakeLlm::start(vec![
        Scripted::json(
            500,
            json!({"error": {"message": "try again", "type": "server_error"}}),
        ),
        Scripted::sse(oai::text_reply(&["ok"])),
    ])
    .await;
    let provider = openai(&server);
    let history = Arc::new(long_history(120));
    let expected = provider.request_body(&request_of(&history)).unwrap();
    let events =
        collect(provider.stream_shared(shared(&history), CancellationToken::new(), None)).await;
    let (starts, ends) = retries(&events);
    assert_eq!((starts.len(), ends), (1, vec![1]));
    assert_eq!(done(&events).text(), "ok");
    let received = server.requests();
    assert_eq!(received.len(), 2);
    for attempt in &received {
        assert_sent_whole(attempt, &expected);
    }
}

#[tokio::test]
async fn a_short_shared_request_is_sent_as_a_plain_one() {
    let server = FakeLlm::start(vec![Scripted::sse(oai::text_reply(&["ok"]))]).await;
    let provider = openai(&server);
    let history = Arc::new(long_history(1));
    let expected = provider.request_body(&request_of(&history)).unwrap();
    let events =
        collect(provider.stream_shared(shared(&history), CancellationToken::new(), None)).await;
    assert_eq!(done(&events).text(), "ok");
    assert_sent_whole(&server.requests()[0], &expected);
}

#[tokio::test]
async fn images_a_model_cannot_see_become_notes_in_a_long_shared_request() {
    let server = FakeLlm::start(vec![Scripted::sse(oai::text_reply(&["ok"]))]).await;
    let provider = openai(&server);
    let mut messages = long_history(120).to_vec();
    let image = ImageData {
        name: "shot.png".into(),
        mime: "image/png".into(),
        width: 1,
        height: 1,
        size: 4,
        sha256: "00".into(),
        data: bytes::Bytes::from_static(b"\x89PNG"),
    };
    let mut asking = UserMessage::new("what is in it?");
    asking.images.push(image);
    messages.insert(1, Message::User(asking));
    let history = Arc::new(History::from(messages));
    // A model that takes text only: the image becomes a note in the text.
    fn text_only(history: &History) -> LlmRequest<'_> {
        LlmRequest {
            model: "gpt-3.5-turbo".into(),
            ..request_of(history)
        }
    }
    let expected = provider.request_body(&text_only(&history)).unwrap();
    assert!(String::from_utf8_lossy(&expected).contains("cannot see images"));
    let request = Arc::new(SharedRequest::new(history.clone(), text_only));
    let events = collect(provider.stream_shared(request, CancellationToken::new(), None)).await;
    assert_eq!(done(&events).text(), "ok");
    assert_sent_whole(&server.requests()[0], &expected);
    // The history keeps its image.
    let Message::User(kept) = &history[1] else {
        panic!("not the user message");
    };
    assert_eq!(kept.images.len(), 1);
}
