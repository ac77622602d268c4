//! The `/mcp` overlay: each server, its state and tools, and what their definitions
//! cost per request (the question whether to start the workspace's `.mcp.json` servers
//! is the trust question, `trust.rs`).

use crate::dashboard::mcp::state_mark;
use crate::theme::{Theme, Token};
use crate::widgets::{centered, dialog, scrolled};
use crate::wrap::{StyledLine, clean, wrap};
use claw_runtime::mcp::McpServerInfo;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Span;

/// Draws `/mcp` from row `scroll` on.
pub(super) fn draw_servers(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    servers: &[McpServerInfo],
    scroll: u16,
) {
    let rect = centered(area, 90, area.height.saturating_sub(4));
    let body = dialog(
        theme,
        rect,
        " MCP servers · ↑↓ scroll · Esc closes ".into(),
        buf,
    );
    let mut lines = Vec::new();
    if servers.is_empty() {
        lines.push(StyledLine::plain(
            "No MCP servers configured. Add [mcp.servers.NAME] to config.toml, or a \
             .mcp.json to the workspace.",
            theme.dim(),
        ));
    }
    let total: u64 = servers.iter().map(McpServerInfo::definition_tokens).sum();
    if total > 0 {
        lines.push(StyledLine::plain(
            format!("Their tool definitions cost about {total} tokens in every request."),
            theme.dim(),
        ));
        lines.push(StyledLine::blank());
    }
    for server in servers {
        let (mark, token) = state_mark(&server.state);
        let mut head = vec![
            Span::styled(format!("{mark} "), theme.fg(token)),
            Span::styled(
                clean(&server.name),
                theme.text().add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!("  {} · {:?}", server.transport, server.origin).to_lowercase(),
                theme.dim(),
            ),
            Span::styled(
                format!("  {}", clean(&server.status_line())),
                theme.fg(token),
            ),
        ];
        if let Some(info) = server.server_info.as_deref().filter(|i| !i.is_empty()) {
            head.push(Span::styled(format!("  ({})", clean(info)), theme.dim()));
        }
        lines.push(StyledLine {
            spans: head,
            ..StyledLine::default()
        });
        if !server.tools.is_empty() {
            lines.push(StyledLine::plain(
                format!(
                    "  {} tool{} · ~{} tokens per request",
                    server.tools.len(),
                    if server.tools.len() == 1 { "" } else { "s" },
                    server.definition_tokens()
                ),
                theme.dim(),
            ));
        }
        for tool in &server.tools {
            let description = tool.description.lines().next().unwrap_or_default();
            lines.push(StyledLine {
                spans: vec![
                    Span::styled(format!("    {}", tool.name), theme.fg(Token::Tool)),
                    Span::styled(format!("  ~{} tok  ", tool.definition_tokens), theme.dim()),
                    Span::styled(clean(description), theme.text()),
                ],
                ..StyledLine::default()
            });
        }
        lines.push(StyledLine::blank());
    }
    scrolled(&wrap(&lines, body.width), body, scroll, buf);
}
