//! Every request the runtime's agents send is recorded byte for byte: the main agent
//! and a subagent on each wire format, and the requests around a compaction; the key
//! appears nowhere in the log; each breakdown adds up to the reported input tokens.

use crate::support::compacting::{self, big_reader, call_reply, text_reply};
use crate::support::fake_llm::drive::{anthropic_config, openai_config, responses_config};
use crate::support::fake_llm::responses::Script;
use crate::support::fake_llm::{FakeLlm, Scripted, anthropic};
use claw_tui::session::SideLogReport;

use crate::support::run;
use crate::support::runtime::settings;
use claw_tui::agent::Agent;
use claw_tui::inspect::{RequestLog, RequestRecorder, breakdown, requests_path};
use claw_tui::llm::{Provider, RemoteProvider, RequestTap, Secret, WireConfig};
use claw_tui::setup::start_runtime_with;
use claw_tui::tools::exec::Approver;
use claw_tui::tools::message::MessageSender;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

const SECRET: &str = "sk-SECRET-inspect-4242";
const TASK: &str = "count the files";

fn spawn_args() -> String {
    json!({"task": TASK, "label": "counter"}).to_string()
}

/// The bodies the server received equal the log's, as sets (the main agent and the
/// subagent send at the same time), and the log holds each agent's requests in order.
fn assert_recorded(server: &FakeLlm, log_file: &Path) -> RequestLog {
    let log = RequestLog::load(log_file).unwrap();
    assert_eq!(log.damaged, 0);
    let mut received: Vec<Vec<u8>> = server.requests().iter().map(|r| r.raw.to_vec()).collect();
    let mut recorded: Vec<Vec<u8>> = (0..log.len())
        .map(|n| log.body(n).unwrap().into_bytes())
        .collect();
    assert_eq!(recorded.len(), received.len());
    received.sort();
    recorded.sort();
    assert!(
        recorded == received,
        "a recorded body differs from what was sent"
    );
    let text = std::fs::read_to_string(log_file).unwrap();
    assert!(!text.contains(SECRET), "the key is in the log");
    assert!(text.contains("[redacted]"), "{text}");
    for n in 0..log.len() {
        let response = log.requests[n].response.as_ref().unwrap();
        assert_eq!(response.status, Some(200));
        let parts = breakdown(&log, n).unwrap();
        assert!(!parts.estimated);
        assert_eq!(parts.tokens, response.input_total());
        assert_eq!(
            parts.parts.iter().map(|p| p.tokens).sum::<u64>(),
            parts.tokens
        );
    }
    log
}

async fn main_and_subagent(config: fn(&FakeLlm) -> WireConfig, script: Vec<Scripted>) {
    let server = FakeLlm::start(script).await;
    let mut config = config(&server);
    let remote = match &mut config {
        WireConfig::Anthropic(c) => &mut c.remote,
        WireConfig::ChatCompletions(c) => &mut c.remote,
        WireConfig::Responses(c) => &mut c.remote,
    };
    remote.api_key = Some(Secret::new(SECRET));
    let provider: Arc<dyn Provider> = Arc::new(RemoteProvider::new(config).unwrap());
    let (_home, settings) = settings("");
    let outbound: MessageSender = Arc::new(|_| {});
    let main = start_runtime_with(&settings, provider, outbound, Approver::Nobody).unwrap();
    let session = settings.data_dir.join("s.jsonl");
    std::fs::create_dir_all(&settings.data_dir).unwrap();
    let recorder = RequestRecorder::start(
        &main.requests,
        &session,
        &main.agent,
        SideLogReport::unheard(),
    );
    main.supervisor.submit("spawn a counter");
    // Main: spawn, its answer, then the subagent's report; the subagent: its answer.
    server.until_requests(4).await;
    main.subagents.wait_all().await;
    main.agent.wait_for_idle().await;
    recorder.close().await;
    main.subagents.shutdown().await;
    main.supervisor.stop().await;
    let log = assert_recorded(&server, &requests_path(&session));
    let agents: Vec<&str> = log.requests.iter().map(|r| r.sent.agent.as_str()).collect();
    assert_eq!(
        agents.iter().filter(|a| **a == "main").count(),
        3,
        "{agents:?}"
    );
    assert_eq!(agents.iter().filter(|a| **a == "subagent-1").count(), 1);
    // A turn is one model call of the main agent and its tool calls: the spawn (1), the
    // answer after it (2), the report's (3); the subagent's request carries the main
    // turn it was sent in (the spawn's tool call, or the answer's model call).
    let main_turns: Vec<u32> = log
        .requests
        .iter()
        .filter(|r| r.sent.agent == "main")
        .map(|r| r.sent.turn)
        .collect();
    assert_eq!(main_turns, [1, 2, 3]);
    let sub = log
        .requests
        .iter()
        .position(|r| r.sent.agent == "subagent-1")
        .unwrap();
    let sub_turn = log.requests[sub].sent.turn;
    let main_before = log.requests[..sub]
        .iter()
        .rev()
        .find(|r| r.sent.agent == "main");
    let main_after = log.requests[sub..].iter().find(|r| r.sent.agent == "main");
    assert!(
        main_before.is_some_and(|m| m.sent.turn <= sub_turn)
            && main_after.is_none_or(|m| sub_turn <= m.sent.turn)
            && (1..=2).contains(&sub_turn),
        "the subagent's request is in turn {sub_turn}, between the main agent's around it"
    );
    let indexes: Vec<usize> = log.requests.iter().map(|r| r.sent.index).collect();
    assert_eq!(indexes, [1, 2, 3, 4]);
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_requests_of_main_and_subagent_are_recorded_byte_for_byte() {
    let spawn = anthropic::reply(
        vec![anthropic::tool_block(0, "t1", "spawn", &[&spawn_args()])],
        "tool_use",
    );
    main_and_subagent(
        |server| WireConfig::from(anthropic_config(server)),
        vec![
            Scripted::sse(spawn),
            Scripted::sse(anthropic::text_reply(&["started"])),
            Scripted::sse(anthropic::text_reply(&["started"])),
            Scripted::sse(anthropic::text_reply(&["noted"])),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_completions_requests_of_main_and_subagent_are_recorded_byte_for_byte() {
    main_and_subagent(
        |server| WireConfig::from(openai_config(server)),
        vec![
            call_reply(
                "t1",
                "spawn",
                json!({"task": TASK, "label": "counter"}),
                300,
            ),
            text_reply("started", 320),
            text_reply("started", 320),
            text_reply("noted", 400),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn responses_requests_of_main_and_subagent_are_recorded_byte_for_byte() {
    let model = "gpt-5";
    let text = |t: &str| {
        Scripted::sse(
            Script::new(model)
                .message(0, &[t])
                .completed(200, 50, 10, 0),
        )
    };
    main_and_subagent(
        |server| WireConfig::from(responses_config(server)),
        vec![
            Scripted::sse(
                Script::new(model)
                    .call(0, "t1", "spawn", &[&spawn_args()])
                    .completed(150, 0, 20, 0),
            ),
            text("started"),
            text("started"),
            text("noted"),
        ],
    )
    .await;
}

#[tokio::test]
async fn the_requests_around_a_compaction_are_recorded_byte_for_byte() {
    let server = FakeLlm::start(vec![
        call_reply("c1", "read_file", json!({"path": "a.txt"}), 600),
        call_reply("c2", "read_file", json!({"path": "b.txt"}), 4_500),
        text_reply("## Goal\nCompare a.txt and b.txt (summary-one)", 900),
        text_reply("done", 3_000),
    ])
    .await;
    let mut config = openai_config(&server);
    config.remote.api_key = Some(Secret::new(SECRET));
    let tap = RequestTap::default();
    let provider = tap.tagged(Arc::new(RemoteProvider::new(config).unwrap()), "main");
    let agent = Agent::new(provider, "test-model");
    agent.set_system_prompt("You are the test agent.");
    agent.configure(|c| {
        c.context_window = Some(compacting::WINDOW);
        c.compaction = compacting::settings();
    });
    agent.set_tools(vec![big_reader(8_000)]);
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("s.jsonl");
    let recorder = RequestRecorder::start(&tap, &session, &agent, SideLogReport::unheard());
    let events = run(&agent, "compare a.txt and b.txt").await;
    assert_eq!(compacting::compaction_ends(&events).len(), 1);
    recorder.close().await;
    let log = assert_recorded(&server, &requests_path(&session));
    assert_eq!(log.len(), 4);
    // The request after the compaction: its breakdown has the summary as a part.
    let after = breakdown(&log, 3).unwrap();
    assert!(
        after.parts.iter().any(|p| p.label == "compaction summary"),
        "{after:?}"
    );
}
