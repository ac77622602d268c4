//! The client's MCP parts: the dashboard's MCP section, `/mcp` with each server's
//! tools and their token cost, and the trust question (a workspace's `.mcp.json`
//! servers, each entry whole, and changed workspace files that run outside the
//! sandbox: what it shows, its keys and the effect that answers it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::mcp::{McpServerInfo, McpServerState, McpToolInfo, Origin};
use claw_tui::trust::{FileQuestion, PinnedFile, ServerEntry, TrustRequest};
use claw_tui::tui::{Effect, Msg};
use crossterm::event::KeyCode;
use std::path::PathBuf;

fn server(name: &str, state: McpServerState, tools: &[&str]) -> McpServerInfo {
    McpServerInfo {
        name: name.into(),
        origin: Origin::User,
        transport: "stdio".into(),
        state,
        server_info: Some("mcp-fixture 1.0.0".into()),
        tools: tools
            .iter()
            .map(|t| McpToolInfo {
                name: format!("mcp__{name}__{t}"),
                remote_name: (*t).into(),
                description: format!("Does {t}."),
                definition_tokens: 40,
            })
            .collect(),
    }
}

fn servers(app: &mut claw_tui::tui::App) {
    app.update(Msg::McpServer(server(
        "files",
        McpServerState::Ready,
        &["read", "write"],
    )));
    app.update(Msg::McpServer(server("web", McpServerState::Starting, &[])));
    app.update(Msg::McpServer(server(
        "db",
        McpServerState::Failed {
            reason: "cannot start `pg-mcp`: No such file or directory (os error 2)".into(),
            retry_in_secs: Some(4),
        },
        &[],
    )));
    app.update(Msg::McpServer(server(
        "tracker",
        McpServerState::Restarting {
            reason: "the server closed the connection".into(),
            retry_in_secs: 8,
        },
        &["issues"],
    )));
}

#[test]
fn the_dashboard_shows_each_servers_state() {
    let mut app = app();
    servers(&mut app);
    // A later report replaces the server's line.
    app.update(Msg::McpServer(server(
        "web",
        McpServerState::Ready,
        &["fetch"],
    )));
    for _ in 0..3 {
        app.update(key(KeyCode::Tab));
    }
    let screen = draw(&mut app).backend().to_string();
    assert!(screen.contains("MCP (4)"), "{screen}");
    assert!(screen.contains("files  ready · 2 tools"), "{screen}");
    assert!(screen.contains("web  ready · 1 tool"), "{screen}");
    assert!(screen.contains("db  failed: cannot start"), "{screen}");
    assert!(screen.contains("tracker  restarting in 8 s"), "{screen}");
    insta::assert_snapshot!("dashboard_mcp", draw(&mut app).backend());
}

#[test]
fn slash_mcp_lists_tools_and_their_cost() {
    let mut app = app();
    servers(&mut app);
    typed(&mut app, "/mcp");
    app.update(key(KeyCode::Esc));
    app.update(key(KeyCode::Enter));
    let screen = draw(&mut app).backend().to_string();
    assert!(screen.contains("MCP servers"), "{screen}");
    assert!(
        screen.contains("about 120 tokens in every request"),
        "{screen}"
    );
    assert!(
        screen.contains("mcp__files__read  ~40 tok  Does read."),
        "{screen}"
    );
    assert!(
        screen.contains("2 tools · ~80 tokens per request"),
        "{screen}"
    );
    insta::assert_snapshot!("mcp_overlay", draw(&mut app).backend());
    app.update(key(KeyCode::Esc));
    assert!(!draw(&mut app).backend().to_string().contains("MCP servers"));
}

fn fresh() -> claw_tui::tui::App {
    app()
}

fn pinned(path: &str, size: u64) -> PinnedFile {
    PinnedFile {
        path: PathBuf::from(path),
        sha256: Some("3f2a9c0b7d41e5a6b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5".into()),
        size,
    }
}

fn field(key: &str, value: &str) -> (String, String) {
    (key.into(), value.into())
}

/// A question about three project servers (stdio with an env value, HTTP with header
/// values, one hiding a second line; a stdio server running a workspace script) and a
/// hook script that changed.
fn request() -> TrustRequest {
    TrustRequest {
        workspace: PathBuf::from("/home/u/project"),
        project_file: Some("~/project/.mcp.json".into()),
        servers: vec![
            ServerEntry {
                name: "files".into(),
                fields: vec![
                    field(
                        "args",
                        r#"["-y","@modelcontextprotocol/server-filesystem","."]"#,
                    ),
                    field("command", "npx"),
                    field("env.GITHUB_TOKEN", "${GITHUB_TOKEN}"),
                ],
                variables: vec!["GITHUB_TOKEN: from your environment ([mcp] project_env)".into()],
                files: vec![],
                fingerprint: "aa".into(),
            },
            ServerEntry {
                name: "tracker".into(),
                fields: vec![
                    field("headers.Authorization", "Bearer ${OPENAI_API_KEY}"),
                    field("headers.X-Team", "core\nX-Forwarded-For: 10.0.0.1"),
                    field("type", "http"),
                    field("url", "https://mcp.example.com/mcp"),
                ],
                variables: vec!["OPENAI_API_KEY: left empty (not in [mcp] project_env)".into()],
                files: vec![],
                fingerprint: "bb".into(),
            },
            ServerEntry {
                name: "local".into(),
                fields: vec![
                    field("args", r#"["tools/server.js"]"#),
                    field("command", "node"),
                ],
                variables: vec![],
                files: vec![pinned("/home/u/project/tools/server.js", 2150)],
                fingerprint: "cc".into(),
            },
        ],
        files: vec![FileQuestion {
            file: pinned("/home/u/project/.claw-tui/hooks/no-rm.sh", 412),
            run_by: vec!["the hook `sh .claw-tui/hooks/no-rm.sh`".into()],
            changed: true,
        }],
    }
}

fn ask(app: &mut claw_tui::tui::App) {
    app.update(Msg::AskTrust(request()));
}

#[test]
fn the_trust_question_shows_each_entry_whole_and_is_answered_with_y_or_n() {
    let mut app = app();
    ask(&mut app);
    let screen = draw(&mut app).backend().to_string();
    for shown in [
        "Trust what runs outside the sandbox?",
        "~/project/.mcp.json asks to start these servers",
        r#"["-y","@modelcontextprotocol/server-filesystem","."]"#,
        "env.GITHUB_TOKEN  ${GITHUB_TOKEN}",
        "headers.Authorization  Bearer ${OPENAI_API_KEY}",
        // The hidden second line is shown as an escape, on the same row.
        r"headers.X-Team         core\nX-Forwarded-For: 10.0.0.1",
        "url                    https://mcp.example.com/mcp",
        "${OPENAI_API_KEY}: left empty (not in [mcp] project_env)",
        "runs     tools/server.js · sha256 3f2a9c0b7d41 · 2.1 KiB",
        ".claw-tui/hooks/no-rm.sh · changed since you trusted it · sha256 3f2a9c0b7d41",
        "run by the hook `sh .claw-tui/hooks/no-rm.sh`",
        "y: trust and run them",
    ] {
        assert!(screen.contains(shown), "{shown}\n{screen}");
    }
    insta::assert_snapshot!("trust_question", draw(&mut app).backend());
    // Other keys do not answer it (nor reach the composer).
    assert!(app.update(key(KeyCode::Char('x'))).is_empty());
    assert!(
        draw(&mut app)
            .backend()
            .to_string()
            .contains("outside the sandbox?")
    );
    assert_eq!(
        app.update(key(KeyCode::Char('y'))),
        vec![Effect::AnswerTrust {
            trusted: true,
            request: request()
        }]
    );
    assert!(
        !draw(&mut app)
            .backend()
            .to_string()
            .contains("outside the sandbox?")
    );

    let mut app = fresh();
    ask(&mut app);
    assert_eq!(
        app.update(key(KeyCode::Char('n'))),
        vec![Effect::AnswerTrust {
            trusted: false,
            request: request()
        }]
    );
    // Esc puts it off: nothing is remembered, the next start asks again.
    let mut app = fresh();
    ask(&mut app);
    assert!(app.update(key(KeyCode::Esc)).is_empty());
    assert!(
        !draw(&mut app)
            .backend()
            .to_string()
            .contains("outside the sandbox?")
    );
}

#[test]
fn a_long_question_scrolls_under_keys_that_stay() {
    let mut app = sized(80, 16);
    ask(&mut app);
    let first = draw(&mut app).backend().to_string();
    assert!(first.contains("y: trust and run them"), "{first}");
    assert!(!first.contains("run by the hook"), "{first}");
    for _ in 0..30 {
        app.update(key(KeyCode::Down));
    }
    let last = draw(&mut app).backend().to_string();
    assert!(last.contains("run by the hook"), "{last}");
    assert!(last.contains("y: trust and run them"), "{last}");
    insta::assert_snapshot!("trust_question_scrolled", draw(&mut app).backend());
}

#[test]
fn a_question_that_arrives_while_one_is_open_joins_it() {
    let mut app = app();
    ask(&mut app);
    let later = FileQuestion {
        file: pinned("/home/u/project/scripts/fmt.sh", 99),
        run_by: vec!["the hook `sh scripts/fmt.sh`".into()],
        changed: false,
    };
    app.update(Msg::AskTrust(TrustRequest {
        workspace: PathBuf::from("/home/u/project"),
        files: vec![later.clone()],
        ..TrustRequest::default()
    }));
    let mut joined = request();
    joined.files.insert(0, later);
    assert_eq!(
        app.update(key(KeyCode::Char('y'))),
        vec![Effect::AnswerTrust {
            trusted: true,
            request: joined
        }]
    );
    assert!(
        !draw(&mut app)
            .backend()
            .to_string()
            .contains("outside the sandbox?")
    );
}
