//! The client's MCP parts: the dashboard's MCP section, `/mcp` with each server's
//! tools and their token cost, and the question about a workspace's `.mcp.json`
//! (its keys and the effect that answers it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::mcp::{McpServerInfo, McpServerState, McpToolInfo, Origin};
use claw_tui::tui::{Effect, Msg};
use crossterm::event::KeyCode;

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

fn ask(app: &mut claw_tui::tui::App) {
    app.update(Msg::AskMcpTrust {
        file: "~/project/.mcp.json".into(),
        servers: vec!["files: npx -y @modelcontextprotocol/server-filesystem .".into()],
    });
}

#[test]
fn the_trust_question_is_answered_with_y_or_n() {
    let mut app = app();
    ask(&mut app);
    let screen = draw(&mut app).backend().to_string();
    assert!(
        screen.contains("Start this workspace's MCP servers?"),
        "{screen}"
    );
    assert!(
        screen.contains("files: npx -y @modelcontextprotocol/server-filesystem ."),
        "{screen}"
    );
    insta::assert_snapshot!("mcp_trust_question", draw(&mut app).backend());
    // Other keys do not answer it (nor reach the composer).
    assert!(app.update(key(KeyCode::Char('x'))).is_empty());
    assert!(
        draw(&mut app)
            .backend()
            .to_string()
            .contains("MCP servers?")
    );
    assert_eq!(
        app.update(key(KeyCode::Char('y'))),
        vec![Effect::TrustProjectMcp(true)]
    );
    assert!(
        !draw(&mut app)
            .backend()
            .to_string()
            .contains("MCP servers?")
    );

    let mut app = fresh();
    ask(&mut app);
    assert_eq!(
        app.update(key(KeyCode::Char('n'))),
        vec![Effect::TrustProjectMcp(false)]
    );
    // Esc puts it off: nothing is remembered, the next start asks again.
    let mut app = fresh();
    ask(&mut app);
    assert!(app.update(key(KeyCode::Esc)).is_empty());
    assert!(
        !draw(&mut app)
            .backend()
            .to_string()
            .contains("MCP servers?")
    );
}
