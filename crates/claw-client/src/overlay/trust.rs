//! The trust question: everything that would run outside the sandbox and waits for the
//! user's "yes", shown whole. Each `.mcp.json` server with every key of its entry as
//! written (env and header values included, `${VAR}` unexpanded, with what each
//! variable becomes), the workspace files it runs with their hashes; each new or
//! changed workspace file a hook or server runs, with what runs it. Control characters
//! in any of it are shown as escapes, so a value cannot hide a second line; the keys
//! stay on the last row however far the text scrolls.

use crate::theme::{Theme, Token};
use crate::widgets::{centered, dialog, scrolled};
use crate::wrap::{StyledLine, wrap};
use claw_runtime::trust::{PinnedFile, ServerEntry, TrustRequest};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Span;

/// `text` with every control character written as its escape (`\n`, `\u{1b}`).
fn visible(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A file with its hash and size, and whether it changed.
fn file_line(request: &TrustRequest, file: &PinnedFile, note: &str) -> String {
    format!(
        "{}{note} · sha256 {} · {}",
        visible(&request.shown(&file.path)),
        file.short_hash(),
        claw_text::byte_size(file.size)
    )
}

fn server_lines(request: &TrustRequest, server: &ServerEntry, theme: &Theme) -> Vec<StyledLine> {
    let mut lines = vec![StyledLine {
        spans: vec![
            Span::raw("  "),
            Span::styled(
                visible(&server.name),
                theme.fg(Token::Tool).add_modifier(Modifier::BOLD),
            ),
        ],
        ..StyledLine::default()
    }];
    let width = server
        .fields
        .iter()
        .map(|(key, _)| key.chars().count())
        .max()
        .unwrap_or(0)
        .max("runs".len());
    for (key, value) in &server.fields {
        lines.push(StyledLine {
            spans: vec![
                Span::styled(format!("    {:width$}  ", visible(key)), theme.dim()),
                Span::styled(visible(value), theme.text()),
            ],
            ..StyledLine::default()
        });
    }
    for file in &server.files {
        lines.push(StyledLine {
            spans: vec![
                Span::styled(format!("    {:width$}  ", "runs"), theme.dim()),
                Span::styled(file_line(request, file, ""), theme.text()),
            ],
            ..StyledLine::default()
        });
    }
    for variable in &server.variables {
        let (name, becomes) = variable.split_once(": ").unwrap_or((variable, ""));
        lines.push(StyledLine::plain(
            format!("    ${{{}}}: {}", visible(name), visible(becomes)),
            theme.dim(),
        ));
    }
    lines
}

/// The text of the question, before wrapping.
fn lines(request: &TrustRequest, theme: &Theme) -> Vec<StyledLine> {
    let mut lines = Vec::new();
    if !request.servers.is_empty() {
        let file = request.project_file.as_deref().unwrap_or(".mcp.json");
        lines.push(StyledLine::plain(
            format!(
                "{} asks to start these servers (each entry as written):",
                visible(file)
            ),
            theme.text(),
        ));
        lines.push(StyledLine::blank());
        for server in &request.servers {
            lines.extend(server_lines(request, server, theme));
            lines.push(StyledLine::blank());
        }
    }
    if !request.files.is_empty() {
        lines.push(StyledLine::plain(
            "These workspace files run outside the sandbox, and hold content you have not \
             trusted:",
            theme.text(),
        ));
        lines.push(StyledLine::blank());
        for question in &request.files {
            let note = if question.changed {
                " · changed since you trusted it"
            } else {
                " · new"
            };
            lines.push(StyledLine::plain(
                format!("  {}", file_line(request, &question.file, note)),
                theme.fg(Token::Tool),
            ));
            for runner in &question.run_by {
                lines.push(StyledLine::plain(
                    format!("    run by {}", visible(runner)),
                    theme.dim(),
                ));
            }
        }
        lines.push(StyledLine::blank());
    }
    lines.push(StyledLine::plain(
        "They run as you, outside the sandbox, and the model can write files in this \
         workspace: say yes only if you know what they hold. A yes covers exactly what is \
         shown; any change is asked about again.",
        theme.fg(Token::Warning),
    ));
    lines
}

/// Draws the question from row `scroll` of its text on.
pub(super) fn draw(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    request: &TrustRequest,
    scroll: u16,
) {
    let most = centered(area, 90, area.height.saturating_sub(2));
    let wrapped = wrap(&lines(request, theme), most.width.saturating_sub(2));
    // The text, a blank row and (at most two rows of) keys, inside the border.
    let wanted = u16::try_from(wrapped.len())
        .unwrap_or(u16::MAX)
        .saturating_add(5);
    let rect = centered(area, 90, wanted.min(most.height));
    let body = dialog(
        theme,
        rect,
        " Trust what runs outside the sandbox? ".into(),
        buf,
    );
    let keys = "y: trust and run them · n: no (servers: never for this file) · Esc: ask \
                again next time · ↑↓ PgUp PgDn: scroll";
    let legend = wrap(&[StyledLine::plain(keys, theme.dim())], body.width);
    let legend_rows = u16::try_from(legend.len()).unwrap_or(u16::MAX);
    let text = Rect {
        height: body.height.saturating_sub(legend_rows + 1),
        ..body
    };
    scrolled(&wrapped, text, scroll, buf);
    let first = body.y + body.height.saturating_sub(legend_rows);
    for (row, line) in (first..).zip(&legend) {
        buf.set_line(body.x, row, line, body.width);
    }
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn control_characters_are_shown_as_escapes() {
        assert_eq!(
            visible("Bearer x\n\n\u{1b}]52;c;evil\u{7}\u{9b}"),
            "Bearer x\\n\\n\\u{1b}]52;c;evil\\u{7}\\u{9b}"
        );
        assert_eq!(visible("plain ${TOKEN}"), "plain ${TOKEN}");
    }
}
