//! A streamable HTTP server gets its `headers` (with `${VAR}` from claw-tui's
//! environment) and the bearer token `bearer_token_env` names; the token is never
//! printed or logged, and a token variable that is not set is a clear failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::{Sandbox, run};
use crate::support::mcp::server_line;
use crate::support::mcp::{HttpFixture, http_table, log_lines};

const TOKEN: &str = "tok-fixture-5b1e9d";

#[test]
fn headers_and_the_bearer_token_reach_the_server_and_nowhere_else() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("fixture.log");
    let http = HttpFixture::start(&log);
    sb.write_config(&format!(
        "{}{}",
        http_table(
            "web",
            &http.url,
            "headers = { \"X-Team\" = \"${FIXTURE_TEAM}\" }\nbearer_token_env = \"FIXTURE_TOKEN\""
        ),
        http_table(
            "nokey",
            &http.url,
            "bearer_token_env = \"FIXTURE_UNSET_TOKEN\""
        ),
    ));
    let mut cmd = sb.command();
    cmd.args(["mcp", "list"])
        .env("FIXTURE_TOKEN", TOKEN)
        .env("FIXTURE_TEAM", "blue")
        .env_remove("FIXTURE_UNSET_TOKEN");
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 1, "one server failed; stderr: {stderr}");
    let line = |name: &str| server_line(&stdout, name);
    assert!(line("web").contains("ready · 10 tools"), "{stdout}");
    assert!(
        line("nokey")
            .contains("failed: bearer_token_env names FIXTURE_UNSET_TOKEN, which is not set"),
        "{stdout}"
    );
    let seen: Vec<String> = log_lines(&log)
        .into_iter()
        .filter(|l| l.starts_with("headers "))
        .collect();
    assert_eq!(
        seen,
        [format!("headers authorization=Bearer {TOKEN} x-team=blue")],
        "only the server with a token connected, and it got both"
    );
    let logged = std::fs::read_to_string(sb.dir.path().join("state/claw-tui/claw-tui.log"))
        .unwrap_or_default();
    for (what, text) in [
        ("stdout", &stdout),
        ("stderr", &stderr),
        ("the log", &logged),
    ] {
        assert!(!text.contains(TOKEN), "the token is in {what}: {text}");
    }
}
