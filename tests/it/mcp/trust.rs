//! What trusting a server covers, through the real binary (`-p`, which cannot ask): a
//! `.mcp.json` entry trusted as the client's "yes" records it, then changed in one header
//! value, never reaches its server again (the server's own log of each connection is
//! the listener's view); a project file gets only the variables `[mcp] project_env`
//! allows, never a provider key; a server whose script lives in the workspace (a project
//! one, or the user's own) does not start once the script changed, nor before it was
//! ever trusted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::binary::config;
use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::text_reply;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::mcp::{HttpFixture, fixture_bin, log_lines};
use claw_tui::mcp::config::read_project_file;
use claw_tui::mcp::trust::{ProjectEnv, entry_view, fingerprints};
use claw_tui::trust::{PinnedFile, ProjectAnswer, TrustDecision, TrustStore};
use serde_json::json;
use std::path::{Path, PathBuf};

const SECRET: &str = "sk-provider-key-never-for-projects";
const ALLOWED: &str = "ghp-allowed-value";

/// Records "yes" for the workspace's `.mcp.json` as it is now, as the client does: the
/// fingerprint of each entry (and the files it runs), and those files' content.
fn trust_project_file(sb: &Sandbox) {
    let ws = sb.workspace().canonicalize().unwrap();
    let entries: Vec<_> = read_project_file(&ws)
        .servers
        .iter()
        .map(|spec| entry_view(spec, &ws, &ProjectEnv::default()))
        .collect();
    store(sb)
        .update(&ws, |w| {
            w.project_mcp = Some(ProjectAnswer {
                decision: TrustDecision::Trusted,
                servers: fingerprints(&entries),
            });
            for file in entries.iter().flat_map(|e| &e.files) {
                w.files
                    .insert(file.path.clone(), file.sha256.clone().unwrap());
            }
        })
        .unwrap();
}

fn store(sb: &Sandbox) -> TrustStore {
    TrustStore::new(&sb.dir.path().join("data/claw-tui"))
}

/// Runs `-p hello` against a fresh fake model; returns stderr.
async fn run_once(sb: &Sandbox, env: &[(&str, &str)]) -> String {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["Hi."]))]).await;
    sb.write_config(&config(
        &server,
        "[mcp]\nproject_env = [\"GITHUB_TOKEN\", \"OPENAI_API_KEY\"]\n",
    ));
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    for (name, value) in env {
        cmd.env(name, value);
    }
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "stderr: {stderr}");
    stderr
}

fn connections(log: &Path) -> Vec<String> {
    log_lines(log)
        .into_iter()
        .filter(|l| l.starts_with("headers "))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_header_value_after_trust_never_reaches_the_server() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("http.log");
    let http = HttpFixture::start(&log);
    let write = |team: &str| {
        let project = json!({"mcpServers": {"tracker": {
            "type": "http",
            "url": http.url,
            "headers": {"Authorization": "Bearer ${OPENAI_API_KEY}", "X-Team": team},
        }}});
        std::fs::write(sb.workspace().join(".mcp.json"), project.to_string()).unwrap();
    };
    write("${GITHUB_TOKEN}");
    trust_project_file(&sb);
    let env = [("OPENAI_API_KEY", SECRET), ("GITHUB_TOKEN", ALLOWED)];

    // Trusted as it is: it connects, with the variable the user allowed and without
    // the provider key, however the file asks for it.
    let stderr = run_once(&sb, &env).await;
    let seen = connections(&log);
    assert_eq!(seen.len(), 1, "{seen:?}\n{stderr}");
    assert!(seen[0].contains(&format!("x-team={ALLOWED}")), "{seen:?}");
    assert!(!seen[0].contains(SECRET), "{seen:?}");
    assert!(
        stderr.contains("[mcp] project_env names OPENAI_API_KEY, a provider's API key"),
        "{stderr}"
    );

    // One header value changed: the old "yes" does not cover it.
    write("${GITHUB_TOKEN}-and-more");
    let stderr = run_once(&sb, &env).await;
    assert_eq!(connections(&log).len(), 1, "the changed entry connected");
    assert!(
        stderr.contains("skipped MCP server \"tracker\""),
        "{stderr}"
    );
}

/// A workspace script that starts the fixture server, logging to `log`.
fn server_script(ws: &Path, log: &Path, comment: &str) -> PathBuf {
    let path = ws.join("server.sh");
    std::fs::write(
        &path,
        format!(
            "# {comment}\nexec '{}' --log '{}'\n",
            fixture_bin().display(),
            log.display()
        ),
    )
    .unwrap();
    path
}

fn starts(log: &Path) -> usize {
    log_lines(log)
        .iter()
        .filter(|l| l.starts_with("start"))
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_server_whose_script_changed_after_trust_does_not_start() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("project.log");
    let project = json!({"mcpServers": {"local": {"command": "sh", "args": ["server.sh"]}}});
    std::fs::write(sb.workspace().join(".mcp.json"), project.to_string()).unwrap();
    server_script(&sb.workspace(), &log, "as reviewed");
    trust_project_file(&sb);

    let stderr = run_once(&sb, &[]).await;
    assert_eq!(
        starts(&log),
        1,
        "the trusted server did not start: {stderr}"
    );

    // The entry is the same; the script it runs is not.
    server_script(&sb.workspace(), &log, "changed since");
    let stderr = run_once(&sb, &[]).await;
    assert_eq!(starts(&log), 1, "the changed script ran: {stderr}");
    assert!(stderr.contains("skipped MCP server \"local\""), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_users_own_server_running_a_workspace_script_is_pinned_too() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("user.log");
    let script = server_script(&sb.workspace(), &log, "first");
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["Hi."]))]).await;
    let run_with_server = |sb: &Sandbox, server: &FakeLlm| {
        sb.write_config(&config(
            server,
            "[mcp.servers.mine]\ncommand = \"sh\"\nargs = [\"server.sh\"]\n",
        ));
        let mut cmd = sb.command();
        cmd.args(["-p", "hello"]);
        cmd
    };

    // Never trusted: it does not start, and -p says which file and why.
    let cmd = run_with_server(&sb, &server);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(starts(&log), 0, "an untrusted script ran");
    assert!(
        stderr.contains("the MCP server \"mine\" will not run")
            && stderr.contains("server.sh was never trusted"),
        "{stderr}"
    );

    // Trusted (as the client's "yes" records it): it starts.
    let ws = sb.workspace().canonicalize().unwrap();
    let pinned = PinnedFile::read(&ws.join("server.sh"));
    store(&sb)
        .update(&ws, |w| {
            w.files
                .insert(pinned.path.clone(), pinned.sha256.clone().unwrap());
        })
        .unwrap();
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["Hi."]))]).await;
    let cmd = run_with_server(&sb, &server);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(starts(&log), 1, "{stderr}");

    // Changed: refused again.
    server_script(&sb.workspace(), &log, "second");
    assert_ne!(PinnedFile::read(&script), pinned);
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["Hi."]))]).await;
    let cmd = run_with_server(&sb, &server);
    let (_, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(starts(&log), 1, "the changed script ran: {stderr}");
    assert!(stderr.contains("changed since you trusted it"), "{stderr}");
}
