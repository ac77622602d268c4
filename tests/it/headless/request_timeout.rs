//! `-p` against a server that keeps the stream alive with comments and never answers:
//! the whole-call deadline (`[agent] request_timeout_secs`, 1 s here) ends the run with
//! an error that names the setting, instead of waiting forever.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::{FakeLlm, Scripted, Step};
use bytes::Bytes;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_gives_up_on_a_stream_of_keep_alives_and_names_the_setting() {
    let keep_alive = Step::Every(Duration::from_millis(50), Bytes::from_static(b": ping\n\n"));
    let server = FakeLlm::start(vec![Scripted::sse([": hello\n\n"]).then(keep_alive)]).await;
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "provider = \"local\"\n\n[agent]\nrequest_timeout_secs = 1\nidle_timeout_secs = 60\n\n\
         [providers.local]\napi = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"slow-model\"\n",
        server.url()
    ));
    let mut cmd = sandbox.command();
    cmd.args(["-p", "hello"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    for part in [
        "within 1 s ([agent] request_timeout_secs)",
        "only keep-alives",
        "raise [agent] request_timeout_secs",
    ] {
        assert!(stderr.contains(part), "{part:?} in {stderr}");
    }
    assert_eq!(
        server.requests().len(),
        1,
        "a timed-out call is not retried"
    );
}
