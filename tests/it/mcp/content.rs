//! The content parts of MCP tool results, through the real runtime and real servers: one
//! part of each kind the spec names (from the rmcp fixture's `kinds`) reaches the model
//! as its own line (the image as an image block), and parts a client cannot use (a type
//! MCP does not define, an image without its media type, a part without a type: the
//! hand-written server's `odd_content`) are each named in the result and listed in its
//! details, the parts around them kept; a result that is no tool result fails its call
//! with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::setup::McpEnv;
use crate::support::mcp::{fixture_bin, raw_table};
use crate::support::{Reply, sent_results, tool_results};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn one_part_of_each_kind_the_spec_names_reaches_the_model() {
    let table = format!(
        "[mcp.servers.fixture]\ncommand = {:?}\nargs = [\"--content-kinds\"]\n",
        fixture_bin().display().to_string()
    );
    let env = McpEnv::with_tables(
        &table,
        &["fixture"],
        vec![
            Reply::tool_calls(&[("k1", "mcp__fixture__kinds", json!({}))]),
            Reply::text(&["Seen them all."]),
        ],
    )
    .await;
    let events = env.run("show every kind").await;
    let sent = sent_results(&env.provider.requests()[1]);
    assert_eq!(sent.len(), 1);
    let result = &sent[0];
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(
        result.content.lines().collect::<Vec<_>>(),
        [
            "hello",
            "[image kinds-1: image/png, 1×1, 70 B]",
            "[audio: audio/wav, 4 B; not passed to the model, which takes no audio]",
            "[resource link: notes.txt <file:///notes.txt>] The notes",
            "[resource <test://doc/1>]",
            "embedded text",
            "[resource <test://doc/2>: application/octet-stream, 3 B]",
        ]
    );
    assert_eq!(result.images.len(), 1);
    assert_eq!((result.images[0].width, result.images[0].height), (1, 1));
    let details = &tool_results(&events)[0].details;
    assert_eq!(
        details["binary"],
        json!([
            {"type": "image", "mime_type": "image/png", "bytes": 70, "width": 1, "height": 1},
            {"type": "audio", "mime_type": "audio/wav", "bytes": 4},
            {"type": "resource", "uri": "test://doc/2", "mime_type": "application/octet-stream",
             "bytes": 3}
        ])
    );
    assert!(details.get("unsupported").is_none(), "{details}");
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn parts_a_client_cannot_use_are_named_the_rest_kept_and_a_non_result_fails_its_call() {
    let env = McpEnv::with_tables(
        &raw_table("raw", "bad-replies", ""),
        &["raw"],
        vec![
            Reply::tool_calls(&[
                ("o1", "mcp__raw__odd_content", json!({})),
                ("o2", "mcp__raw__not_a_result", json!({})),
            ]),
            Reply::text(&["Noted."]),
        ],
    )
    .await;
    let events = env.run("call it").await;
    let sent = sent_results(&env.provider.requests()[1]);
    assert_eq!(sent.len(), 2);
    let result = &sent[0];
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(
        result.content.lines().collect::<Vec<_>>(),
        [
            "before",
            "[content of unknown type \"video\" left out]",
            "[content of type \"image\" left out: missing field `mimeType`]",
            "[content without a type left out]",
            "after",
        ]
    );
    assert!(result.images.is_empty());
    let details = &tool_results(&events)[0].details;
    assert_eq!(
        details["unsupported"],
        json!([
            {"type": "video", "reason": "unknown type"},
            {"type": "image", "reason": "missing field `mimeType`"},
            {"type": null, "reason": "no type"}
        ])
    );
    let refused = &sent[1];
    assert!(refused.is_error);
    assert!(
        refused.content.starts_with(
            "MCP server \"raw\" answered the call to not_a_result, but its reply could not \
             be read: it is not a tool result (invalid type: string \"just text\", expected a \
             sequence"
        ),
        "{}",
        refused.content
    );
    env.stop().await;
}
