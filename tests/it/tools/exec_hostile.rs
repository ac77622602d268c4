#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! A hostile model through the whole program: the real binary (`-p --yes`) against a
//! fake OpenAI-compatible server whose scripted model calls `exec` to plant a git hook
//! and `core.fsmonitor`, create `.claw-tui/`, talk to a host unix socket and send UDP
//! to the host with `network = "deny"`. The test then asks the listeners and the file
//! system, and reads the tool result the model was sent back.

use crate::support::bin::{Sandbox, run};
use crate::support::exec::{printed, probe_line};
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text_reply, tool, usage};
use crate::support::fake_llm::{FakeLlm, Scripted};
use serde_json::json;
use std::net::UdpSocket;
use std::os::unix::net::UnixListener;

const CONFIG: &str = "[core]\n\tbare = false\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_scripted_model_cannot_plant_configuration_or_reach_host_services() {
    let host_dir = tempfile::tempdir().unwrap();
    let socket_path = host_dir.path().join("agent.sock");
    let host_socket = UnixListener::bind(&socket_path).unwrap();
    host_socket.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let command = probe_line("socket", "unix", &socket_path.display().to_string())
        + &probe_line("udp", "udp", &udp.local_addr().unwrap().to_string())
        + "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config\n\
           printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/post-checkout\n\
           mkdir -p .claw-tui && echo evil > .claw-tui/hooks.toml\n\
           echo finished";
    let call = Scripted::sse([
        chunk(json!({"role": "assistant", "content": null}), None),
        tool(
            Some(0),
            Some("call_1"),
            Some("exec"),
            &json!({ "command": command }).to_string(),
        ),
        finish("tool_calls"),
        usage(100, 20, 0),
        done_marker(),
    ]);
    let server = FakeLlm::start(vec![call, Scripted::sse(text_reply(&["All done."]))]).await;
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), CONFIG).unwrap();
    sandbox.write_config(&format!(
        "provider = \"local\"\n\n[exec]\nnetwork = \"deny\"\n\n[providers.local]\n\
         api = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"hostile\"\n",
        server.url()
    ));
    let mut cmd = sandbox.command();
    cmd.args(["--no-session", "-p", "--yes", "tidy up"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");

    // What the model was sent back: the tool result of its call.
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{stderr}");
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert!(result.contains("finished"), "the command ran: {result}");

    assert!(
        host_socket.accept().is_err(),
        "the host socket was reached: {result}"
    );
    assert!(
        udp.recv_from(&mut [0u8; 64]).is_err(),
        "UDP reached the host: {result}"
    );
    assert!(
        printed(&result, "socket").starts_with("refused"),
        "{result}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        CONFIG
    );
    assert!(!ws.join(".git/hooks/post-checkout").exists());
    assert!(!ws.join(".claw-tui").exists(), "{result}");
    assert!(result.contains("moved aside"), "{result}");
    let mounted = result.contains("Read-only file system");
    let fallback = result.contains("put back");
    assert!(mounted || fallback, "{result}");
}
