//! `/export` never writes through a link the model planted: the fake model's `exec`
//! makes `claw-tui-session-<id>.html` a symlink to `~/.bashrc` (a throw-away HOME), and
//! the export is refused with the target untouched; once the user removes the link,
//! the page is written as a private (0600) regular file.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text_reply, tool};
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::pty::{Tui, status_line};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

const BASHRC: &str = "# the user's own shell setup\n";

#[tokio::test(flavor = "multi_thread")]
async fn export_refuses_a_planted_symlink_and_writes_a_private_file() {
    let sb = Sandbox::new();
    let home = sb.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".bashrc"), BASHRC).unwrap();
    // A session to resume, so the model knows the name the export will take.
    let mut first = sb.command();
    first.args(["--provider", "demo", "-p", "hello"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(first))
        .await
        .unwrap();
    assert_eq!(code, 0, "{stderr}");
    let session = sb.only_session();
    // Files are named `<stamp>_<id>.jsonl`.
    let stem = session.file_stem().unwrap().to_string_lossy().into_owned();
    let id = stem.rsplit('_').next().unwrap().to_owned();
    let short: String = id.chars().take(8).collect();
    let page = sb
        .workspace()
        .join(format!("claw-tui-session-{short}.html"));

    let plant = format!(
        "ln -s {} {}",
        home.join(".bashrc").display(),
        page.display()
    );
    let server = FakeLlm::start(vec![
        Scripted::sse([
            chunk(json!({"role": "assistant", "content": ""}), None),
            tool(
                Some(0),
                Some("call_1"),
                Some("exec"),
                &json!({ "command": plant }).to_string(),
            ),
            finish("tool_calls"),
            done_marker(),
        ]),
        Scripted::sse(text_reply(&["Linked it."])),
    ])
    .await;
    let root = sb.dir.path().to_path_buf();
    let url = server.url();
    let home_text = home.display().to_string();
    let page_for_tui = page.clone();
    tokio::task::spawn_blocking(move || {
        let base_url = format!("{url}/v1");
        let mut tui = Tui::in_sandbox(
            &root,
            &[
                "--provider",
                "openai",
                "--base-url",
                &base_url,
                "--model",
                "gpt-test",
                "--session",
                &id,
            ],
            &[("HOME", &home_text)],
            (120, 40),
        );
        tui.wait_for("the idle state", |s| status_line(s).contains("idle"));
        tui.send("tidy up\r");
        tui.wait_text("Linked it.");
        assert!(
            page_for_tui.symlink_metadata().unwrap().is_symlink(),
            "the model's link is in place"
        );
        tui.send("/export\r");
        let screen = tui.wait_text("cannot export");
        assert!(screen.contains("symlink"), "{screen}");
        // The user removes the link; the next export is a file of its own.
        std::fs::remove_file(&page_for_tui).unwrap();
        tui.send("/export\r");
        tui.wait_text("Exported the session to");
        tui.send("/quit\r");
    })
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        BASHRC
    );
    let meta = page.symlink_metadata().unwrap();
    assert!(meta.is_file(), "a regular file");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .contains("<!DOCTYPE html>")
    );
}
