//! A long request whose body is written while it is sent is recorded as the same
//! request sent whole would be: the same lines in the request log (blobs, edits,
//! references to the previous request), bar the clock's.

use crate::support::fake_llm::drive::{anthropic_config, collect, done, responses_config};
use crate::support::fake_llm::long::{long_history, request_of, shared};
use crate::support::fake_llm::{FakeLlm, Scripted, anthropic, responses};
use claw_tui::agent::{Agent, AssistantMessage, Block, History, Message, StopReason};
use claw_tui::inspect::{RequestLog, RequestRecorder, requests_path};
use claw_tui::llm::{Provider, RemoteProvider, RequestTap, WireConfig};
use claw_tui::session::SideLogReport;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Two requests of one conversation: a long history, then the same with an answer
/// and a new question (the Anthropic cache markers move, so elements are edited).
fn conversation() -> [Arc<History>; 2] {
    let first = long_history(120);
    let mut second = first.to_vec();
    let mut answer = AssistantMessage::empty("m");
    answer.content = vec![Block::Text {
        text: "It merges them.".into(),
    }];
    answer.stop_reason = StopReason::Stop;
    second.push(Message::Assistant(answer));
    second.push(Message::user("thanks; and the tests?"));
    [Arc::new(first), Arc::new(History::from(second))]
}

/// The lines of the request log of `conversation` sent by `config`'s provider, whole
/// or written as sent, without the clock's fields and the server's port; checks each body as recorded is the
/// one the server received.
async fn log_lines(
    config: fn(&FakeLlm) -> WireConfig,
    reply: Vec<String>,
    written: bool,
) -> Vec<Value> {
    let server = FakeLlm::start(vec![Scripted::sse(reply.clone()), Scripted::sse(reply)]).await;
    let tap = RequestTap::default();
    let remote: Arc<dyn Provider> = Arc::new(RemoteProvider::new(config(&server)).unwrap());
    let provider = tap.tagged(remote, "main");
    let agent = Agent::new(provider.clone(), "claude-sonnet-4-5");
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("s.jsonl");
    let recorder = RequestRecorder::start(&tap, &session, &agent, SideLogReport::unheard());
    for history in conversation() {
        let cancel = CancellationToken::new();
        let stream = if written {
            provider.stream_shared(shared(&history), cancel, None)
        } else {
            provider.stream(request_of(&history), cancel)
        };
        done(&collect(stream).await);
    }
    recorder.close().await;
    let log_file = requests_path(&session);
    let log = RequestLog::load(&log_file).unwrap();
    let received = server.requests();
    assert_eq!(log.len(), 2);
    for (n, request) in received.iter().enumerate() {
        assert!(
            log.body(n).unwrap().as_bytes() == &request.raw[..],
            "request {n}"
        );
        assert_eq!(log.requests[n].sent.bytes, request.raw.len());
    }
    std::fs::read_to_string(&log_file)
        .unwrap()
        .lines()
        .map(|line| {
            // Each log's server listens on a port of its own.
            let line = line.replace(&server.url(), "http://server");
            let mut line: Value = serde_json::from_str(&line).unwrap();
            for (kind, clock) in [
                ("request", "time_ms"),
                ("response", "duration_ms"),
                ("response", "ttft_ms"),
                ("response", "output_tokens_per_s"),
            ] {
                if let Some(Value::Object(fields)) = line.get_mut(kind) {
                    fields.remove(clock);
                }
            }
            line
        })
        .collect()
}

async fn the_same_lines(config: fn(&FakeLlm) -> WireConfig, reply: Vec<String>) {
    let whole = log_lines(config, reply.clone(), false).await;
    let written = log_lines(config, reply, true).await;
    // Blobs for every element of the first request, a few for the second.
    assert!(whole.len() > 400, "{} lines", whole.len());
    assert_eq!(whole.len(), written.len());
    for (n, (a, b)) in whole.iter().zip(&written).enumerate() {
        let (a, b) = (a.to_string(), b.to_string());
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let around = |s: &str| {
            s.get(at.saturating_sub(80)..(at + 80).min(s.len()))
                .unwrap_or(s)
                .to_owned()
        };
        assert!(
            a == b,
            "line {n} differs at byte {at}:\n…{}…\n…{}…",
            around(&a),
            around(&b)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_anthropic_request_written_as_sent_is_logged_as_one_sent_whole() {
    the_same_lines(
        |server| WireConfig::from(anthropic_config(server)),
        anthropic::text_reply(&["ok"]),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_responses_request_written_as_sent_is_logged_as_one_sent_whole() {
    the_same_lines(
        |server| WireConfig::from(responses_config(server)),
        responses::text_reply("claude-sonnet-4-5", &["ok"]),
    )
    .await;
}
