//! The real client in a pseudo-terminal against the fake server speaking the Anthropic
//! API: the status bar's token count and cost include the prompt cache's reads and
//! writes, priced at the cache prices.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::Sandbox;
use crate::support::fake_llm::anthropic::cached_reply;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::pty::{Tui, status_line};

#[test]
fn the_status_bar_counts_and_prices_cache_reads_and_writes() {
    let sandbox = Sandbox::new();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let model = "claude-sonnet-4-5";
    let server = runtime.block_on(FakeLlm::start(vec![
        // The first turn writes the prefix to the cache, the second reads it back.
        Scripted::sse(cached_reply(model, 100, 0, 5_000)),
        Scripted::sse(cached_reply(model, 120, 5_000, 300)),
    ]));
    sandbox.write_config(&format!(
        "provider = \"claude\"\n[providers.claude]\napi = \"anthropic\"\nbase_url = \"{}\"\n\
         model = \"{model}\"\n",
        server.url()
    ));
    let mut tui = Tui::in_sandbox(sandbox.dir.path(), &[], &[], (140, 40));
    tui.wait_text("Welcome to claw-tui");
    tui.wait_for("the idle state", |s| status_line(s).contains("idle"));

    tui.send("one\r");
    // 100 uncached + 5,000 written to the cache, 10 out. Sonnet 4 prices per 1M tokens:
    // $3 in, $15 out, $0.30 cache read, $3.75 cache write: (300 + 150 + 18,750) / 1M.
    tui.wait_for("the first turn's tokens and cost", |s| {
        let status = status_line(s);
        status.contains("idle") && status.contains("↑5.1k ↓10 ") && status.contains("$0.0192")
    });

    tui.send("two\r");
    // (220 × 3 + 20 × 15 + 5,000 × 0.30 + 5,300 × 3.75) / 1M = $0.022335; without the
    // cache tokens it would be $0.0010.
    tui.wait_for("both turns' tokens and cost", |s| {
        let status = status_line(s);
        status.contains("idle") && status.contains("↑10.5k ↓20 ") && status.contains("$0.0223")
    });

    tui.send("\x03");
    tui.wait_text("again to quit");
    tui.send("\x03");
    tui.wait_exit();
    assert_eq!(server.requests().len(), 2);
}
