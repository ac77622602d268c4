//! A 12 MB MCP result (the fixture's `echo`, repeated) through the real binary: the
//! model gets its first 50 KB and a note naming the file that keeps the whole result
//! (private, 0600), and a later run reads the rest of it with `read_file`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::binary::{call, config};
use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::text_reply;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::mcp::stdio_table;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;

/// One line of the result: 64 bytes.
const LINE: &str = "a line of a very large MCP result, 64 bytes long with newline..\n";
const LINES: u64 = 200_000;

fn tool_message(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_12_mb_result_is_capped_and_kept_whole_for_read_file() {
    assert_eq!(LINE.len(), 64);
    let args = json!({"text": LINE, "repeat": LINES}).to_string();
    let server = FakeLlm::start(vec![
        call("mcp__fixture__echo", &args),
        Scripted::sse(text_reply(&["It is long."])),
    ])
    .await;
    let sb = Sandbox::new();
    let log = sb.dir.path().join("fixture.log");
    sb.write_config(&config(&server, &stdio_table("fixture", &log, "")));
    let mut cmd = sb.command();
    cmd.args(["-p", "get the big one"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    let result = tool_message(&server.requests()[1].body);
    assert!(
        result.len() < 52 * 1024,
        "{} bytes reached the model",
        result.len()
    );
    assert!(result.starts_with(LINE), "{}", &result[..200]);
    assert!(
        result.contains("[The result is 12.2 MiB; only its first 50 KiB"),
        "{}",
        &result[result.len() - 400..]
    );
    let kept = result
        .split("The whole result is in ")
        .nth(1)
        .and_then(|rest| rest.split(": read it with read_file").next())
        .unwrap_or_else(|| panic!("no file named: {}", &result[result.len() - 400..]))
        .to_owned();
    let meta = std::fs::metadata(&kept).unwrap();
    assert_eq!(meta.len(), 64 * LINES);
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(kept.starts_with(&sb.dir.path().join("data").display().to_string()));

    // A later run: the model pages to the last line of the kept result.
    let reader = FakeLlm::start(vec![
        call(
            "read_file",
            &json!({"path": kept, "offset": LINES, "limit": 1}).to_string(),
        ),
        Scripted::sse(text_reply(&["Read it."])),
    ])
    .await;
    sb.write_config(&config(&reader, ""));
    let mut cmd = sb.command();
    cmd.args(["-p", "read the end"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("✓ read_file"), "{stderr}");
    let read = tool_message(&reader.requests()[1].body);
    assert_eq!(read, LINE.trim_end(), "the last of {LINES} lines");
}
