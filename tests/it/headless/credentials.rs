//! Credentials in a provider's base URL (`user:password@`, `?key=`) never reach what
//! claw-tui writes or shows: through the real binary, a run that works leaves them out
//! of the request log and the session, and runs that fail (HTTP 404, nothing listening)
//! leave them out of the error on stderr, the session and the log file.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::text_reply;
use crate::support::fake_llm::{FakeLlm, Scripted};
use serde_json::json;

const USER: &str = "alice-user";
const PASSWORD: &str = "hunter2-pass";
const KEY: &str = "SECRETKEY123";

fn with_credentials(host: &str) -> String {
    format!("http://{USER}:{PASSWORD}@{host}/v1?key={KEY}")
}

/// Every file under the sandbox's data and state dirs, as text.
fn written(sb: &Sandbox) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![sb.dir.path().join("data"), sb.dir.path().join("state")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                out.push((path.display().to_string(), text));
            }
        }
    }
    out
}

fn assert_clean(what: &str, text: &str) {
    for secret in [USER, PASSWORD, KEY] {
        assert!(!text.contains(secret), "{secret} in {what}: {text}");
    }
}

fn configure(sb: &Sandbox, base_url: &str) {
    sb.write_config(&format!(
        "provider = \"gw\"\n[providers.gw]\napi = \"openai\"\nbase_url = \"{base_url}\"\n\
         model = \"m\"\n"
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn base_url_credentials_stay_out_of_the_request_log_errors_and_logs() {
    let server = FakeLlm::start(vec![
        Scripted::sse(text_reply(&["Hello."])),
        Scripted::json(404, json!({"error": {"message": "no such model"}})),
    ])
    .await;
    let sb = Sandbox::new();
    configure(&sb, &with_credentials(&server.addr.to_string()));

    // A run that works: the request log holds the URL without its credentials.
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Hello.");
    // The credentials did go to the server, as the user meant them to.
    let sent = &server.requests()[0];
    assert!(
        sent.headers["authorization"].starts_with("Basic "),
        "{sent:?}"
    );
    let session = sb.only_session();
    let log = std::fs::read_to_string(session.with_extension("requests.jsonl")).unwrap();
    assert!(log.contains("[redacted]@"), "{log}");
    assert!(log.contains("key=[redacted]"), "{log}");

    // A run the server refuses: the error names the URL, without them.
    let mut cmd = sb.command();
    cmd.args(["-p", "again"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("HTTP 404"), "{stderr}");
    assert!(stderr.contains("[redacted]@"), "{stderr}");
    assert_clean("the 404 error", &stderr);

    // Nothing listening: reqwest's own error names the URL too.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    configure(&sb, &with_credentials(&format!("127.0.0.1:{port}")));
    let mut cmd = sb.command();
    cmd.args(["-p", "once more"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("Could not reach"), "{stderr}");
    assert_clean("the connection error", &stderr);

    for (path, text) in written(&sb) {
        assert_clean(&path, &text);
    }
}
