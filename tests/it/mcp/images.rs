//! An MCP image result on the wire, through the binary and a fake OpenAI server: a
//! model that takes images gets the server's PNG as an image block; a text-only model
//! gets a note naming it instead.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::binary::call;
use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::text_reply;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::mcp::stdio_table;

/// The start of the fixture's 1×1 PNG, base64.
const PNG_BASE64_START: &str = "data:image/png;base64,iVBORw0KGgo";

/// The body of the request that carries the image tool's result, for `model`.
async fn second_request(model: &str) -> String {
    let server = FakeLlm::start(vec![
        call("mcp__fixture__image", "{}"),
        Scripted::sse(text_reply(&["Seen."])),
    ])
    .await;
    let sb = Sandbox::new();
    let log = sb.dir.path().join("fixture.log");
    sb.write_config(&format!(
        "provider = \"fake\"\n[providers.fake]\napi = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"{model}\"\n\n{}",
        server.url(),
        stdio_table("fixture", &log, "")
    ));
    let mut cmd = sb.command();
    cmd.args(["-p", "show me the image"]);
    let (code, _stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "stderr: {stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    requests[1].body.to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_result_reaches_a_model_that_takes_images() {
    let body = second_request("gpt-4o").await;
    assert!(body.contains(PNG_BASE64_START), "{body}");
    assert!(
        body.contains("[image image-1: image/png, 1×1, 70 B]"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_text_only_model_gets_a_note_instead() {
    let body = second_request("gpt-3.5-turbo").await;
    assert!(!body.contains(PNG_BASE64_START), "{body}");
    assert!(
        body.contains("not sent, the model gpt-3.5-turbo cannot see images"),
        "{body}"
    );
}
