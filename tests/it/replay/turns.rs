//! One turn numbering: a turn is one model call of the main agent and its tool calls.
//! A session run by the real binary numbers its requests so (RPC `get_requests`,
//! `claw-tui inspect --turn N`), and its replay's turn N shows, and opens in the
//! inspector, that same request.

use crate::support::fake_llm::anthropic::{reply, text_reply, tool_block};
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::rpc::{Rpc, is_type};
use crate::support::tui::config;
use claw_tui::inspect::{RequestLog, requests_path};
use claw_tui::replay::{PlayOptions, Replay, Timeline};
use std::sync::Arc;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread")]
async fn inspect_turn_n_and_the_replays_turn_n_are_the_same_request() {
    let read = reply(
        vec![tool_block(
            0,
            "t1",
            "read_file",
            &[r#"{"path": "notes.txt"}"#],
        )],
        "tool_use",
    );
    let server = FakeLlm::start(vec![
        Scripted::sse(read),
        Scripted::sse(text_reply(&["The notes say alpha."])),
        Scripted::sse(text_reply(&["You are welcome."])),
    ])
    .await;
    let config_text = format!(
        "provider = \"claude\"\n[providers.claude]\napi = \"anthropic\"\nbase_url = \"{}\"\n\
         model = \"claude-sonnet-4-5\"\napi_key = \"sk-ant-turns\"\n",
        server.url()
    );
    let (sandbox, rows) = tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_with(0, &config_text);
        // Two prompts, three model calls: the first prompt's read and its answer.
        for text in ["what do the notes say?", "thanks"] {
            rpc.send(&format!(r#"{{"type":"prompt","content":"{text}"}}"#));
            rpc.until_all(&[&|l| is_type(l, "agent_end"), &|l| is_type(l, "response")]);
        }
        rpc.send(r#"{"type":"get_requests"}"#);
        let rows = rpc.response("get_requests")["requests"].clone();
        let exited = rpc.close_and_wait_all();
        assert_eq!(exited.code, 0, "{}", exited.stderr);
        (exited.sandbox, rows)
    })
    .await
    .unwrap();
    let received = server.requests();
    assert_eq!(received.len(), 3);
    let turns: Vec<u64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["turn"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, [1, 2, 3], "one turn per model call: {rows}");

    let inspect = |turn: &str| {
        let output = sandbox
            .command()
            .args(["inspect", "--raw", "--turn", turn])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        output.stdout
    };
    // Turn 2 is the answer after the read: the read's result in its body.
    let turn_2 = inspect("2");
    assert_eq!(turn_2, received[1].raw.to_vec());

    let session = sandbox.only_session();
    let timeline = Arc::new(Timeline::load(&session).unwrap());
    assert_eq!(timeline.turn_count(), 3);
    let options = PlayOptions {
        speed: 1.0,
        real_time: false,
    };
    let now = Instant::now();
    let mut replay = Replay::new(timeline, config(), options, (120, 40), now);
    for (turn, raw) in [(1, inspect("1")), (2, turn_2), (3, inspect("3"))] {
        replay.seek_turn(turn, now);
        assert_eq!(replay.turn(), turn);
        assert!(
            replay.bar().contains(&format!("turn {turn}/3")),
            "{}",
            replay.bar()
        );
        assert_eq!(
            replay.app().status().turn(),
            u32::try_from(turn).unwrap(),
            "the replayed status bar counts the same turns"
        );
        replay.open_inspector(now);
        let opened = replay.app().inspector().unwrap().opened().unwrap();
        let log = RequestLog::load(&requests_path(&session)).unwrap();
        assert_eq!(log.body(opened).unwrap().into_bytes(), raw, "turn {turn}");
        replay.handle(
            crossterm::event::Event::Key(crossterm::event::KeyEvent::from(
                crossterm::event::KeyCode::Esc,
            )),
            now,
        );
        replay.handle(
            crossterm::event::Event::Key(crossterm::event::KeyEvent::from(
                crossterm::event::KeyCode::Esc,
            )),
            now,
        );
        assert!(replay.app().inspector().is_none());
    }
}
