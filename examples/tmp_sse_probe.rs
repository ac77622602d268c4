// Throwaway probe (deleted after use): fixed-work decode loop for instruction counts.
#![allow(clippy::unwrap_used)]
use bytes::Bytes;
use claw_tui::llm::{AnthropicConfig, AnthropicProvider, LlmEvent};
use futures::StreamExt;
use serde_json::json;
use std::convert::Infallible;
use tokio_util::sync::CancellationToken;

fn main() {
    let event = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
    let mut body = event("message_start", json!({"type":"message_start","message":{"model":"m","usage":{"input_tokens":1}}}));
    body += &event("content_block_start", json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}));
    for i in 0..20_000 {
        body += &event("content_block_delta", json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":format!(" word{}", i % 997)}}));
    }
    body += &event("message_stop", json!({"type":"message_stop"}));
    let reads: Vec<Bytes> = body.as_bytes().chunks(4096).map(Bytes::copy_from_slice).collect();
    let provider = AnthropicProvider::new(AnthropicConfig::default()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let start = std::time::Instant::now();
    let n = 40;
    rt.block_on(async {
        for _ in 0..n {
            let s = futures::stream::iter(reads.iter().cloned().map(Ok::<_, Infallible>).collect::<Vec<_>>());
            let mut events = provider.decode_body("m", s, CancellationToken::new());
            let mut k = 0;
            while let Some(e) = events.next().await { if matches!(e, LlmEvent::Delta(_)) { k += 1; } }
            assert!(k >= 20_000);
        }
    });
    let secs = start.elapsed().as_secs_f64();
    println!("{:.1} MiB/s wall", (body.len() * n) as f64 / secs / 1048576.0);
}
