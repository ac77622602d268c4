//! `get_state` over `--mode rpc` sums what the calls reported, cache reads and writes
//! included, against the fake server speaking the Anthropic API.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::fake_llm::FakeLlm;
use crate::support::fake_llm::anthropic::sonnet_cached_reply;
use crate::support::rpc::{Rpc, is_type};

#[tokio::test(flavor = "multi_thread")]
async fn get_state_totals_include_cache_reads_and_writes() {
    let server = FakeLlm::start(vec![
        sonnet_cached_reply(100, 0, 5_000),
        sonnet_cached_reply(120, 5_000, 300),
    ])
    .await;
    let config = format!(
        "provider = \"claude\"\n[providers.claude]\napi = \"anthropic\"\nbase_url = \"{}\"\n\
         model = \"claude-sonnet-4-5\"\n",
        server.url()
    );
    let state = tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_with(0, &config);
        for text in ["one", "two"] {
            rpc.send(&format!(r#"{{"type":"prompt","content":"{text}"}}"#));
            rpc.until_all(&[&|l| is_type(l, "agent_end"), &|l| is_type(l, "response")]);
        }
        rpc.send(r#"{"type":"get_state"}"#);
        let state = rpc.response("get_state");
        rpc.close_and_wait();
        state
    })
    .await
    .unwrap();
    let usage = &state["state"]["usage"];
    assert_eq!(usage["input"], 220);
    assert_eq!(usage["output"], 20);
    assert_eq!(usage["cache_read"], 5_000);
    assert_eq!(usage["cache_write"], 5_300);
    // Sonnet 4 list prices: $3 in, $15 out, $0.30 cache read, $3.75 cache write per 1M.
    let expected = (220.0 * 3.0 + 20.0 * 15.0 + 5_000.0 * 0.3 + 5_300.0 * 3.75) / 1e6;
    let cost = usage["cost"].as_f64().unwrap();
    assert!((cost - expected).abs() < 1e-9, "{cost} vs {expected}");
    // The second request read from the cache what the first wrote: same prefix.
    let requests = server.requests();
    assert_eq!(requests[0].body["system"], requests[1].body["system"]);
}
