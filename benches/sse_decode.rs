//! Decoding throughput: a 20,000-token streamed reply, as raw response bytes in 4 KiB
//! reads, through the providers' own decode path (`decode_body`: SSE parsing, JSON,
//! deltas, the final message) in all three wire formats. Target: at least 50 MB/s. And one
//! event of 10 MB (a huge tool-call argument or text delta) in 16 KiB reads, which must
//! decode in linear time: well under 0.2 s.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use bytes::Bytes;
use claw_tui::llm::{
    AnthropicConfig, AnthropicProvider, LlmEvent, LlmStream, OpenAiConfig, OpenAiProvider,
    ResponsesConfig, ResponsesProvider,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use serde_json::json;
use std::convert::Infallible;
use tokio_util::sync::CancellationToken;

const TOKENS: usize = 20_000;
const READ_SIZE: usize = 4096;

/// The text of token `i`: mostly words, with the escapes real text has.
fn token(i: usize) -> String {
    match i % 50 {
        0 => "\n\n".to_owned(),
        1 => " \"quoted\"".to_owned(),
        2 => " naïve".to_owned(),
        _ => format!(" word{}", i % 997),
    }
}

fn anthropic_body() -> Vec<u8> {
    let event = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
    let mut out = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_bench", "type": "message",
               "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
               "stop_reason": null, "usage": {"input_tokens": 1200, "output_tokens": 1}}}),
    );
    out += &event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    );
    for i in 0..TOKENS {
        out += &event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": token(i)}}),
        );
    }
    out += &event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    );
    out += &event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": TOKENS}}),
    );
    out += &event("message_stop", json!({"type": "message_stop"}));
    out.into_bytes()
}

fn openai_body() -> Vec<u8> {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let c = json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk",
                       "created": 1_700_000_000, "model": "gpt-4o-2024-08-06",
                       "system_fingerprint": "fp_bench",
                       "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let mut out = chunk(json!({"role": "assistant", "content": ""}), None);
    for i in 0..TOKENS {
        out += &chunk(json!({"content": token(i)}), None);
    }
    out += &chunk(json!({}), Some("stop"));
    out += &format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "choices": [],
               "usage": {"prompt_tokens": 1200, "completion_tokens": TOKENS}})
    );
    out += "data: [DONE]\n\n";
    out.into_bytes()
}

/// A Responses API stream as OpenAI sends it: `event:` lines, sequence numbers, item
/// ids and obfuscation padding on every delta; a short reasoning summary first.
fn responses_body() -> Vec<u8> {
    let mut seq = 0;
    let mut event = |data: serde_json::Value| {
        let mut data = data;
        data["sequence_number"] = json!(seq);
        seq += 1;
        format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap_or_default()
        )
    };
    let response = |status: &str| {
        json!({"id": "resp_bench", "object": "response", "created_at": 1_700_000_000,
               "status": status, "model": "gpt-5-2025-08-07", "output": [], "store": false,
               "usage": null})
    };
    let mut out = event(json!({"type": "response.created", "response": response("in_progress")}));
    out += &event(
        json!({"type": "response.output_item.added", "output_index": 0,
                         "item": {"id": "rs_bench", "type": "reasoning", "summary": []}}),
    );
    for i in 0..20 {
        out += &event(
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_bench",
                             "output_index": 0, "summary_index": 0, "delta": token(i),
                             "obfuscation": "Zx9"}),
        );
    }
    out += &event(
        json!({"type": "response.output_item.done", "output_index": 0,
                         "item": {"id": "rs_bench", "type": "reasoning", "summary": [],
                                  "encrypted_content": "gAAAAB".repeat(200)}}),
    );
    out += &event(
        json!({"type": "response.output_item.added", "output_index": 1,
                         "item": {"id": "msg_bench", "type": "message", "status": "in_progress",
                                  "content": [], "role": "assistant"}}),
    );
    for i in 0..TOKENS {
        out += &event(
            json!({"type": "response.output_text.delta", "item_id": "msg_bench",
                             "output_index": 1, "content_index": 0, "delta": token(i),
                             "logprobs": [], "obfuscation": "a1b2c3"}),
        );
    }
    let mut done = response("completed");
    done["usage"] = json!({"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1024},
                           "output_tokens": TOKENS, "output_tokens_details": {"reasoning_tokens": 20},
                           "total_tokens": 1200 + TOKENS});
    out += &event(json!({"type": "response.completed", "response": done}));
    out.into_bytes()
}

/// The body as the separate reads a socket would deliver.
fn reads(body: &[u8]) -> Vec<Bytes> {
    body.chunks(READ_SIZE).map(Bytes::copy_from_slice).collect()
}

fn body_stream(
    reads: &[Bytes],
) -> futures::stream::Iter<std::vec::IntoIter<Result<Bytes, Infallible>>> {
    futures::stream::iter(reads.iter().cloned().map(Ok).collect::<Vec<_>>())
}

/// Drains the stream; checks every token arrived and the message completed.
async fn drain(mut stream: LlmStream) -> usize {
    let mut deltas = 0;
    while let Some(event) = stream.next().await {
        match event {
            LlmEvent::Delta(_) => deltas += 1,
            LlmEvent::Done(message) => assert!(message.text().len() > TOKENS),
            LlmEvent::Error(message) => panic!("decode failed: {:?}", message.error_message),
            _ => {}
        }
    }
    assert!(deltas >= TOKENS, "{deltas} deltas");
    deltas
}

fn sse_decode(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let anthropic = AnthropicProvider::new(AnthropicConfig::default()).unwrap();
    let openai = OpenAiProvider::new(OpenAiConfig::default()).unwrap();
    let responses = ResponsesProvider::new(ResponsesConfig::default()).unwrap();
    let anthropic_reads = reads(&anthropic_body());
    let openai_reads = reads(&openai_body());
    let responses_reads = reads(&responses_body());

    let mut group = c.benchmark_group("sse_decode_20k_tokens");
    group.sample_size(20);

    let size: usize = anthropic_reads.iter().map(Bytes::len).sum();
    group.throughput(Throughput::Bytes(size as u64));
    group.bench_function("anthropic", |b| {
        b.to_async(&runtime).iter(|| {
            let body = body_stream(&anthropic_reads);
            drain(anthropic.decode_body("claude-sonnet-4-5", body, CancellationToken::new()))
        });
    });

    let size: usize = openai_reads.iter().map(Bytes::len).sum();
    group.throughput(Throughput::Bytes(size as u64));
    group.bench_function("openai", |b| {
        b.to_async(&runtime).iter(|| {
            let body = body_stream(&openai_reads);
            drain(openai.decode_body("gpt-4o", body, CancellationToken::new()))
        });
    });

    let size: usize = responses_reads.iter().map(Bytes::len).sum();
    group.throughput(Throughput::Bytes(size as u64));
    group.bench_function("responses", |b| {
        b.to_async(&runtime).iter(|| {
            let body = body_stream(&responses_reads);
            drain(responses.decode_body("gpt-5", body, CancellationToken::new()))
        });
    });
    group.finish();
}

/// One OpenAI chunk whose text delta is `mb` MiB, then the finish chunk and `[DONE]`.
fn one_huge_event(mb: usize) -> Vec<u8> {
    let text = "word ".repeat((mb << 20) / 5);
    let chunk = json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk",
                       "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                                    "finish_reason": null}]});
    let finish = json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    format!("data: {chunk}\n\ndata: {finish}\n\ndata: [DONE]\n\n").into_bytes()
}

fn sse_one_huge_event(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let openai = OpenAiProvider::new(OpenAiConfig::default()).unwrap();
    let body = one_huge_event(10);
    let reads: Vec<Bytes> = body.chunks(16 * 1024).map(Bytes::copy_from_slice).collect();
    let mut group = c.benchmark_group("sse_decode_one_event");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("openai_10_mb", |b| {
        b.to_async(&runtime).iter(|| async {
            let mut stream =
                openai.decode_body("gpt-4o", body_stream(&reads), CancellationToken::new());
            let mut text = 0;
            while let Some(event) = stream.next().await {
                match event {
                    LlmEvent::Done(message) => text = message.text().len(),
                    LlmEvent::Error(message) => {
                        panic!("decode failed: {:?}", message.error_message)
                    }
                    _ => {}
                }
            }
            assert_eq!(text, 10 << 20);
        });
    });
    group.finish();
}

criterion_group!(benches, sse_decode, sse_one_huge_event);
criterion_main!(benches);
