//! A 200-turn session's request log stays under twice the size of its session file:
//! each request stores only what is new since the agent's previous one (every third
//! turn also calls a tool), on the chat completions and the Anthropic formats (whose
//! moving cache markers make a user turn's bytes change once).

use crate::support::compacting::{big_reader, call_reply, text_reply};
use crate::support::fake_llm::drive::{anthropic_config, openai_config};
use crate::support::fake_llm::{FakeLlm, Scripted, anthropic};
use crate::support::run;
use claw_tui::agent::Agent;
use claw_tui::inspect::format::BodyRef;
use claw_tui::inspect::{RequestLog, RequestRecorder, requests_path};
use claw_tui::llm::{Provider, RemoteProvider, RequestTap, WireConfig};
use claw_tui::session::SideLogReport;
use claw_tui::session::{SessionWriter, record_events};
use serde_json::json;
use std::sync::Arc;

const TURNS: usize = 200;

fn answer(turn: usize) -> String {
    format!(
        "Turn {turn}: I looked at the module and the change is small. The function keeps \
         its signature; only the loop that merges the ranges now sorts them first, so \
         overlapping ranges that arrive out of order are merged too."
    )
}

fn prompt(turn: usize) -> String {
    format!("Turn {turn}: now check that the merge also handles ranges that touch at an end.")
}

/// The script of the session: a tool call every third turn, then the answer.
fn script(
    tool_call: impl Fn(usize) -> Scripted,
    text: impl Fn(usize) -> Scripted,
) -> Vec<Scripted> {
    let mut script = Vec::new();
    for turn in 1..=TURNS {
        if turn % 3 == 0 {
            script.push(tool_call(turn));
        }
        script.push(text(turn));
    }
    script
}

async fn long_session(server: &FakeLlm, config: WireConfig) {
    let tap = RequestTap::default();
    let provider: Arc<dyn Provider> = Arc::new(RemoteProvider::new(config).unwrap());
    let agent = Agent::new(tap.tagged(provider, "main"), "claude-sonnet-4-5");
    agent.set_system_prompt(format!(
        "You are the test agent.\n\n{}",
        "Follow the project's rules. ".repeat(60)
    ));
    agent.set_tools(vec![big_reader(600)]);
    let dir = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(dir.path(), dir.path(), "test", "m").unwrap();
    let session = writer.path().to_path_buf();
    let recorder = RequestRecorder::start(&tap, &session, &agent, SideLogReport::unheard());
    let (finish, task) = record_events(&agent, writer);
    for turn in 1..=TURNS {
        run(&agent, &prompt(turn)).await;
    }
    recorder.close().await;
    let _ = agent.state();
    finish.send(()).unwrap();
    task.await.unwrap();

    let session_bytes = std::fs::metadata(&session).unwrap().len();
    let log_file = requests_path(&session);
    let log_bytes = std::fs::metadata(&log_file).unwrap().len();
    let log = RequestLog::load(&log_file).unwrap();
    assert_eq!(log.len(), TURNS + TURNS / 3);
    assert!(
        log.requests
            .iter()
            .all(|r| matches!(r.sent.body, BodyRef::Object { .. })),
        "every body is split"
    );
    let received = server.requests();
    let sent: u64 = received.iter().map(|r| r.raw.len() as u64).sum();
    for n in [0, log.len() / 2, log.len() - 1] {
        assert_eq!(log.body(n).unwrap().as_bytes(), &received[n].raw[..]);
    }
    eprintln!(
        "{} requests, {sent} bytes sent; session file {session_bytes} bytes, request log \
         {log_bytes} bytes ({:.2}×)",
        log.len(),
        log_bytes as f64 / session_bytes as f64
    );
    assert!(
        log_bytes < 2 * session_bytes,
        "request log {log_bytes} bytes, session file {session_bytes} bytes"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_200_turn_chat_completions_log_stays_under_twice_the_session_file() {
    let server = FakeLlm::start(script(
        |turn| {
            call_reply(
                &format!("c{turn}"),
                "read_file",
                json!({"path": "src/ranges.rs"}),
                900,
            )
        },
        |turn| text_reply(&answer(turn), 1_000),
    ))
    .await;
    long_session(&server, WireConfig::from(openai_config(&server))).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_200_turn_anthropic_log_stays_under_twice_the_session_file() {
    let server = FakeLlm::start(script(
        |turn| {
            let args = json!({"path": "src/ranges.rs"}).to_string();
            Scripted::sse(anthropic::reply(
                vec![anthropic::tool_block(
                    0,
                    &format!("c{turn}"),
                    "read_file",
                    &[&args],
                )],
                "tool_use",
            ))
        },
        |turn| Scripted::sse(anthropic::text_reply(&[&answer(turn)])),
    ))
    .await;
    long_session(&server, WireConfig::from(anthropic_config(&server))).await;
}
