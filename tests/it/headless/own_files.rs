//! The workspace files claw-tui reads for itself, attacked through the real binary: the
//! fake model's `exec` plants `AGENTS.md` as a symlink to a file outside the workspace,
//! and the next run's request carries none of that file (the user is warned); it plants
//! an image that is a link to `/dev/zero` and a FIFO, and `--image` refuses both at once,
//! reading nothing (peak memory measured).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run, run_measured};
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text_reply, tool};
use crate::support::fake_llm::{FakeLlm, Scripted};
use serde_json::json;

/// A turn whose only call is `exec` of `command`.
fn exec_call(command: &str) -> Scripted {
    Scripted::sse([
        chunk(json!({"role": "assistant", "content": ""}), None),
        tool(
            Some(0),
            Some("call_1"),
            Some("exec"),
            &json!({ "command": command }).to_string(),
        ),
        finish("tool_calls"),
        done_marker(),
    ])
}

/// `sb` set to use `server` as its OpenAI-compatible provider.
fn configure(sb: &Sandbox, server: &FakeLlm) {
    sb.write_config(&format!(
        "provider = \"fake\"\n[providers.fake]\napi = \"openai\"\nbase_url = \"{}/v1\"\n\
         model = \"m\"\n",
        server.url()
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_instructions_file_linked_out_of_the_workspace_never_reaches_the_model() {
    let sb = Sandbox::new();
    let secret = sb.dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP SECRET: the user's private notes\n").unwrap();
    // The model's turn: it links the file outside under the instructions file's name.
    let server = FakeLlm::start(vec![
        exec_call(&format!("ln -s {} AGENTS.md", secret.display())),
        Scripted::sse(text_reply(&["Planted."])),
        Scripted::sse(text_reply(&["Hello."])),
    ])
    .await;
    configure(&sb, &server);
    let mut cmd = sb.command();
    cmd.args(["-p", "set things up"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    let planted = sb.workspace().join("AGENTS.md");
    assert!(planted.symlink_metadata().unwrap().is_symlink());
    // The next start reads the instructions files: the link is skipped, with a warning.
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Hello.");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let body = String::from_utf8_lossy(&requests[2].raw);
    assert!(!body.contains("TOP SECRET"), "{body}");
    assert!(!body.contains("Instructions from AGENTS.md"), "{body}");
    assert!(
        stderr.contains("warning: an instructions file is not read")
            && stderr.contains("AGENTS.md leads outside"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn image_files_that_are_devices_or_fifos_are_refused_without_reading() {
    let sb = Sandbox::new();
    let server = FakeLlm::start(vec![
        exec_call("ln -s /dev/zero zero.png && mkfifo pipe.png"),
        Scripted::sse(text_reply(&["Planted."])),
    ])
    .await;
    configure(&sb, &server);
    let mut cmd = sb.command();
    cmd.args(["-p", "set things up"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    for (name, what) in [("zero.png", "a link to /dev/zero"), ("pipe.png", "a FIFO")] {
        let image = sb.workspace().join(name);
        let mut cmd = sb.command();
        cmd.arg("--image").arg(&image).args(["-p", "what is this?"]);
        // An error report with a backtrace symbolises the debug binary: hundreds of MB
        // that say nothing about the read.
        cmd.env("RUST_BACKTRACE", "0")
            .env("RUST_LIB_BACKTRACE", "0");
        let (code, stdout, stderr, peak_kib) =
            tokio::task::spawn_blocking(move || run_measured(cmd))
                .await
                .unwrap();
        assert_eq!(code, 2, "{what}: {stderr}");
        assert!(stdout.is_empty(), "{what}: {stdout}");
        assert!(
            stderr.contains(&format!(
                "--image: {} is not a regular file",
                image.display()
            )),
            "{what}: {stderr}"
        );
        // Nothing was read: the process stayed at its usual size (a read of /dev/zero
        // grows until memory runs out).
        assert!(peak_kib < 200 * 1024, "{what}: peak RSS {peak_kib} KiB");
    }
    // Refused before any request: the model never saw a message without its image.
    assert_eq!(server.requests().len(), 2);
}
