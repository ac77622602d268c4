//! The dashboard's MCP section: one line per server with its state (`starting`,
//! `ready · 12 tools`, `failed: <reason>`, `restarting in 8 s`).

use crate::theme::{Theme, Token};
use crate::wrap::clean;
use claw_runtime::mcp::{McpServerInfo, McpServerState};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

/// The symbol and colour of a state.
pub(crate) fn state_mark(state: &McpServerState) -> (&'static str, Token) {
    match state {
        McpServerState::Starting => ("◌", Token::Tool),
        McpServerState::Ready => ("●", Token::Success),
        McpServerState::Failed { .. } => ("✗", Token::Error),
        McpServerState::Restarting { .. } => ("↻", Token::Warning),
        McpServerState::Untrusted => ("?", Token::Warning),
        McpServerState::Disabled | McpServerState::Stopped => ("○", Token::Dim),
    }
}

/// The section's lines (nothing when no server is configured).
pub(super) fn lines(servers: &[McpServerInfo], theme: &Theme) -> Vec<Line<'static>> {
    if servers.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![
        Line::default(),
        Line::from(Span::styled(
            format!("MCP ({})", servers.len()),
            theme.fg(Token::Accent).add_modifier(Modifier::BOLD),
        )),
    ];
    for server in servers {
        let (mark, token) = state_mark(&server.state);
        lines.push(Line::from(vec![
            Span::styled(format!("  {mark} "), theme.fg(token)),
            Span::styled(
                clean(&server.name),
                theme.text().add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!("  {}", clean(&server.status_line())),
                theme.fg(token),
            ),
        ]));
    }
    lines
}
