//! Image decoding stays within one memory budget, measured on the real binary (its peak
//! RSS, `VmHWM`): the fake model reads a 2.5 MB PNG that decodes to 400 MB and is
//! refused before a pixel is decoded; it reads four PNGs of 144 MB of pixels each in one
//! parallel batch, and all four are scaled while the process never holds more than
//! the budget's worth, where four decodes at once would take several times that.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run_measured};
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text_reply, tool};
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::png_bomb::zero_png;
use serde_json::{Value, json};

/// A turn calling `read_file` on each of `paths`, in one batch.
fn reads(paths: &[&str]) -> Scripted {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for (i, path) in paths.iter().enumerate() {
        chunks.push(tool(
            Some(i),
            Some(&format!("call_{i}")),
            Some("read_file"),
            &json!({ "path": path }).to_string(),
        ));
    }
    chunks.push(finish("tool_calls"));
    chunks.push(done_marker());
    Scripted::sse(chunks)
}

/// The tool messages the model got back, in order.
fn tool_messages(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect()
}

/// Runs `-p` in `sb` against `server`: (exit code, stderr, peak RSS in MiB).
async fn run_print(sb: &Sandbox, server: &FakeLlm) -> (i32, String, u64) {
    sb.write_config(&format!(
        "provider = \"fake\"\n[providers.fake]\napi = \"openai\"\nbase_url = \"{}/v1\"\n\
         model = \"m\"\n",
        server.url()
    ));
    let mut cmd = sb.command();
    cmd.args(["-p", "look at the pictures"]);
    cmd.env("RUST_BACKTRACE", "0");
    let (code, _, stderr, peak) = tokio::task::spawn_blocking(move || run_measured(cmd))
        .await
        .unwrap();
    (code, stderr, peak / 1024)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decompression_bomb_is_refused_before_it_is_decoded() {
    let sb = Sandbox::new();
    let bomb = zero_png(10_000, 10_000);
    assert!(bomb.len() < 3 * 1024 * 1024, "{} bytes", bomb.len());
    std::fs::write(sb.workspace().join("bomb.png"), &bomb).unwrap();
    let server = FakeLlm::start(vec![
        reads(&["bomb.png"]),
        Scripted::sse(text_reply(&["Too big."])),
    ])
    .await;
    let (code, stderr, peak_mib) = run_print(&sb, &server).await;
    assert_eq!(code, 0, "{stderr}");
    let results = tool_messages(&server.requests()[1].body);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("decoding it would take") && results[0].contains("256 MB"),
        "{results:?}"
    );
    eprintln!("bomb refused: peak RSS {peak_mib} MiB");
    assert!(peak_mib < 150, "peak RSS {peak_mib} MiB");
}

#[tokio::test(flavor = "multi_thread")]
async fn parallel_reads_share_one_budget() {
    let sb = Sandbox::new();
    // 6,000×6,000 RGBA: 144 MB of pixels each, within the budget one at a time.
    let png = zero_png(6_000, 6_000);
    let names = ["a.png", "b.png", "c.png", "d.png"];
    for name in names {
        std::fs::write(sb.workspace().join(name), &png).unwrap();
    }
    let server = FakeLlm::start(vec![
        reads(&names),
        Scripted::sse(text_reply(&["Four black squares."])),
    ])
    .await;
    let (code, stderr, peak_mib) = run_print(&sb, &server).await;
    assert_eq!(code, 0, "{stderr}");
    let results = tool_messages(&server.requests()[1].body);
    assert_eq!(results.len(), 4, "{results:?}");
    for result in &results {
        assert!(result.contains("2048×2048"), "scaled: {result}");
    }
    // One decode holds about 165 MB (the pixels and the scaled copy); four at once
    // would hold over 600 MB, two over 330 MB.
    eprintln!("four parallel decodes: peak RSS {peak_mib} MiB");
    assert!(peak_mib < 320, "peak RSS {peak_mib} MiB");
}
