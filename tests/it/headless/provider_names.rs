//! Errors and start-up words name the provider the user configured: a gateway that
//! speaks Anthropic's format is not called "Anthropic", and a key variable named in the
//! config but not set is said once at start.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::{FakeLlm, Scripted};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_gateways_error_names_the_entry_and_host_and_an_unset_key_variable_is_said() {
    let server = FakeLlm::start(vec![Scripted::json(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "model group not found"}}),
    )])
    .await;
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "provider = \"litellm\"\n\n[providers.litellm]\napi = \"anthropic\"\n\
         base_url = \"{}\"\nmodel = \"claude-via-proxy\"\napi_key_env = \"LITELLM_KEY\"\n",
        server.url()
    ));
    let mut cmd = sandbox.command();
    cmd.env_remove("LITELLM_KEY").args(["-p", "hello"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    let host = server.url().split_once("://").unwrap().1.to_owned();
    assert!(
        stderr.contains(&format!("litellm ({host})")) && stderr.contains("model group not found"),
        "{stderr}"
    );
    assert!(!stderr.contains("Anthropic"), "{stderr}");
    assert!(
        stderr.contains("[providers.litellm] api_key_env names LITELLM_KEY, which is not set"),
        "{stderr}"
    );
}
