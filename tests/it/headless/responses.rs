//! The real binary with `--api openai-responses`, `-p` and `--image` against the fake
//! server: the image goes as `input_image`, the model reasons and calls `read_file`,
//! the next request replays the reasoning with its encrypted content and carries the
//! tool output; the session keeps the image once beside its file. Bad `--image` use is a
//! usage error that says what to do.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::responses::{Script, text_reply};
use crate::support::fake_llm::{FakeLlm, Scripted};
use serde_json::json;

fn png() -> Vec<u8> {
    let mut bytes = std::io::Cursor::new(Vec::new());
    image::DynamicImage::new_rgb8(16, 9)
        .write_to(&mut bytes, image::ImageFormat::Png)
        .unwrap();
    bytes.into_inner()
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_over_the_responses_api_with_an_image_reasoning_and_a_tool_call() {
    let first = Script::new("gpt-5")
        .reasoning(0, &[&["Read the notes first."]], "ENCRYPTED-REASONING")
        .call(
            1,
            "call_notes",
            "read_file",
            &["{\"path\":", "\"notes.txt\"}"],
        )
        .completed(1_200, 1_024, 60, 40);
    let second = text_reply("gpt-5", &["The notes say: ship it."]);
    let server = FakeLlm::start(vec![Scripted::sse(first), Scripted::sse(second)]).await;
    let sb = Sandbox::new();
    std::fs::write(sb.workspace().join("notes.txt"), "ship it\n").unwrap();
    let shot = sb.dir.path().join("shot.png");
    std::fs::write(&shot, png()).unwrap();
    sb.write_config(&format!(
        "provider = \"local\"\n\n[providers.local]\napi = \"openai\"\nbase_url = \"{}/v1\"\n\
         model = \"gpt-5\"\napi_key_env = \"LOCAL_KEY\"\n",
        server.url()
    ));
    let mut cmd = sb.command();
    cmd.env("LOCAL_KEY", "sk-local-test")
        .args([
            "--api",
            "openai-responses",
            "--thinking",
            "high",
            "-p",
            "what do the notes say?",
        ])
        .arg("--image")
        .arg(&shot);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(stdout.trim(), "The notes say: ship it.");
    assert!(stderr.contains("read_file"), "{stderr}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/responses");
    assert_eq!(requests[0].headers["authorization"], "Bearer sk-local-test");
    let first_input = &requests[0].body["input"][0];
    assert_eq!(first_input["content"][0]["text"], "what do the notes say?");
    assert_eq!(first_input["content"][1]["type"], "input_image");
    let url = first_input["content"][1]["image_url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,iVBOR"), "{url}");
    assert_eq!(requests[0].body["reasoning"]["effort"], "high");
    let input = requests[1].body["input"].as_array().unwrap();
    assert!(
        input.contains(
            &json!({"type": "reasoning", "encrypted_content": "ENCRYPTED-REASONING",
        "summary": [{"type": "summary_text", "text": "Read the notes first."}]})
        ),
        "{input:?}"
    );
    let output = input
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["call_id"], "call_notes");
    assert!(
        output["output"].as_str().unwrap().contains("ship it"),
        "{output}"
    );
    // The same key routes both requests to the same cache.
    assert_eq!(
        requests[0].body["prompt_cache_key"],
        requests[1].body["prompt_cache_key"]
    );

    // The session stored the image once, beside its file.
    let sessions = sb.stored_images();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(std::fs::read(&sessions[0]).unwrap(), png());
}

#[test]
fn a_missing_or_unusable_image_is_a_usage_error() {
    let sb = Sandbox::new();
    let notes = sb.workspace().join("notes.txt");
    std::fs::write(&notes, "text").unwrap();
    for (path, says) in [
        (sb.dir.path().join("nope.png"), "cannot read"),
        (notes, "is not a PNG, JPEG, GIF or WebP image"),
    ] {
        let mut cmd = sb.command();
        cmd.args(["-p", "look"]).arg("--image").arg(&path);
        let (code, stdout, stderr) = run(cmd);
        assert_eq!(code, 2, "{stderr}");
        assert!(stdout.is_empty());
        assert!(
            stderr.contains("--image") && stderr.contains(says),
            "{stderr}"
        );
    }
    let mut cmd = sb.command();
    cmd.args(["--image", "x.png"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains("write @path instead"), "{stderr}");
}
