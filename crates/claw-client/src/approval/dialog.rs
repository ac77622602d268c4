//! The approval dialog's layout and drawing: a header that says who asks and how many
//! lines the command has, the command (or the arguments) as a scrolled part, and a
//! footer with the scroll position and the keys, which never scrolls away.

use crate::theme::{Theme, Token};
use crate::tool_tree::pretty_json;
use crate::widgets::{centered, dialog};
use crate::wrap::{StyledLine, WrapKind, clean, wrap};
use claw_tools::exec::ApprovalRequest;
use claw_tools::visible::visible;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

/// Share of the screen's width the dialog takes.
const WIDTH_PERCENT: u16 = 70;

/// The styles the dialog is drawn with; the plain set (no styles) serves to measure.
#[derive(Clone, Copy, Default)]
struct Paint {
    text: Style,
    dim: Style,
    code: Style,
    who: Style,
    allow: Style,
    session: Style,
    deny: Style,
}

impl Paint {
    fn of(theme: &Theme) -> Self {
        let key = |token| {
            theme
                .fg(token)
                .add_modifier(Modifier::REVERSED | Modifier::BOLD)
        };
        Self {
            text: theme.text(),
            dim: theme.dim(),
            code: theme.fg(Token::Code).add_modifier(Modifier::BOLD),
            who: theme.fg(Token::Warning).add_modifier(Modifier::BOLD),
            allow: key(Token::Success),
            session: key(Token::Warning),
            deny: key(Token::Error),
        }
    }
}

/// The dialog of one request on one screen, in rows.
struct Layout {
    /// Where the dialog goes.
    rect: Rect,
    title: String,
    /// Who asks and what for: never scrolled.
    header: Vec<Line<'static>>,
    /// The command or the arguments: scrolled.
    body: Vec<Line<'static>>,
    /// Rows of the inside the body may use.
    body_height: u16,
    /// The keys: always shown.
    keys: Vec<Line<'static>>,
    /// Whether the body is taller than its rows, so the footer tells the position.
    overflows: bool,
}

impl Layout {
    fn of(request: &ApprovalRequest, count: usize, area: Rect, paint: &Paint) -> Self {
        let width = (area.width * WIDTH_PERCENT / 100).max(30).min(area.width);
        let inner = width.saturating_sub(2);
        let (header_lines, body_lines) = content(request, paint);
        let mut header = wrap(&header_lines, inner);
        let body = wrap(&body_lines, inner);
        let keys = wrap(&[keys_line(paint)], inner);
        let room = usize::from(area.height.saturating_sub(2));
        let whole = header.len() + body.len() + 1 + keys.len();
        let overflows = whole > room;
        // Taller than the screen: the footer (position + keys) stays, the body keeps at
        // least one row, and the header gives way last.
        let footer = keys.len() + 1;
        if overflows {
            header.truncate(room.saturating_sub(footer + 1));
        }
        let body_height = if overflows {
            room.saturating_sub(header.len() + footer)
        } else {
            body.len()
        };
        let height = header.len() + body_height + footer;
        let title = if count > 1 {
            format!(" Approve {}? (1 of {count}) ", visible(&request.tool_name))
        } else {
            format!(" Approve {}? ", visible(&request.tool_name))
        };
        Self {
            rect: centered(
                area,
                WIDTH_PERCENT,
                u16::try_from(height + 2).unwrap_or(u16::MAX),
            ),
            title,
            header,
            body,
            body_height: u16::try_from(body_height).unwrap_or(u16::MAX),
            keys,
            overflows,
        }
    }

    /// The largest useful scroll: the last rows of the body fill its part.
    fn max_scroll(&self) -> u16 {
        let rows = u16::try_from(self.body.len()).unwrap_or(u16::MAX);
        rows.saturating_sub(self.body_height)
    }
}

/// How a request's dialog scrolls on a screen: what the keys need to know.
pub(super) struct Extent {
    /// Rows one page moves.
    pub page: u16,
    /// The largest scroll that still shows text.
    pub max_scroll: u16,
}

impl Extent {
    /// The extent of `request`'s dialog (one of `count` waiting) on `screen`.
    pub fn of(request: &ApprovalRequest, count: usize, screen: Rect) -> Self {
        let layout = Layout::of(request, count, screen, &Paint::default());
        Self {
            page: layout.body_height,
            max_scroll: layout.max_scroll(),
        }
    }
}

/// Draws `request` (one of `count` waiting) over `area`, its body from row `scroll`.
pub(super) fn draw(
    request: &ApprovalRequest,
    count: usize,
    scroll: u16,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let paint = Paint::of(theme);
    let layout = Layout::of(request, count, area, &paint);
    let inside = dialog(theme, layout.rect, layout.title.clone(), buf);
    let top = usize::from(scroll.min(layout.max_scroll()));
    let shown = layout
        .body
        .iter()
        .skip(top)
        .take(usize::from(layout.body_height));
    let position = if layout.overflows {
        let last = (top + usize::from(layout.body_height)).min(layout.body.len());
        Line::from(Span::styled(
            format!(
                "↑↓ PgUp PgDn Home End: scroll · rows {}–{last} of {}{}",
                top + 1,
                layout.body.len(),
                if last < layout.body.len() {
                    " · more below"
                } else {
                    ""
                }
            ),
            paint.who,
        ))
    } else {
        Line::default()
    };
    let rows = layout
        .header
        .iter()
        .chain(shown)
        .chain(std::iter::once(&position))
        .chain(&layout.keys);
    for (i, row) in rows.take(usize::from(inside.height)).enumerate() {
        let y = inside.y + u16::try_from(i).unwrap_or(u16::MAX);
        buf.set_line(inside.x, y, row, inside.width);
    }
}

/// The header (who asks, how many lines) and the body (the command's lines, numbered
/// when there are several, then its working directory and time limit; or the
/// arguments) of `request`.
fn content(request: &ApprovalRequest, paint: &Paint) -> (Vec<StyledLine>, Vec<StyledLine>) {
    let mut header = Vec::new();
    // A subagent works unseen; say which one asks and for what task, so the user can
    // judge the command by the job it is meant for.
    let who = match &request.subagent {
        Some(sub) => {
            header.push(StyledLine::plain(
                format!("Subagent {} \"{}\"", sub.id, clean(&visible(&sub.label))),
                paint.who,
            ));
            header.push(StyledLine::plain(
                format!("  task: {}", task_summary(&sub.task)),
                paint.dim,
            ));
            "The subagent"
        }
        None => "The agent",
    };
    let mut body = Vec::new();
    match request.args.get("command").and_then(Value::as_str) {
        Some(command) => {
            let lines: Vec<&str> = command.split('\n').collect();
            let count = lines.len();
            header.push(StyledLine::plain(
                if count == 1 {
                    format!("{who} wants to run:")
                } else {
                    format!("{who} wants to run {count} lines:")
                },
                paint.text,
            ));
            let digits = count.to_string().len();
            for (i, text) in lines.iter().enumerate() {
                let gutter = if count == 1 {
                    "  $ ".to_owned()
                } else {
                    format!("{:>digits$} │ ", i + 1)
                };
                body.push(
                    StyledLine {
                        spans: vec![Span::styled(clean(&visible(text)), paint.code)],
                        wrap: WrapKind::Char,
                        ..StyledLine::default()
                    }
                    .with_prefix(vec![Span::styled(gutter, paint.dim)]),
                );
            }
            for (key, label) in [("cwd", "in"), ("timeout", "timeout (s)")] {
                if let Some(v) = request.args.get(key).filter(|v| !v.is_null()) {
                    let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                    body.push(StyledLine::plain(
                        format!("  {label}: {}", clean(&visible(&v))),
                        paint.dim,
                    ));
                }
            }
        }
        None => {
            header.push(StyledLine::plain("With the arguments:", paint.text));
            for text in pretty_json(&request.args).split('\n') {
                body.push(StyledLine {
                    spans: vec![Span::styled(clean(&visible(text)), paint.code)],
                    wrap: WrapKind::Char,
                    ..StyledLine::default()
                });
            }
        }
    }
    (header, body)
}

/// The keys and what they do.
fn keys_line(paint: &Paint) -> StyledLine {
    let key = |k: &str, what: &str, style: Style| {
        vec![
            Span::styled(format!(" {k} "), style),
            Span::styled(format!(" {what}   "), paint.text),
        ]
    };
    let mut spans = key("y", "allow once", paint.allow);
    spans.extend(key("a", "allow for this session", paint.session));
    spans.extend(key("n/Esc", "deny", paint.deny));
    StyledLine {
        spans,
        ..StyledLine::default()
    }
}

/// A subagent's task on one line, cut at 160 characters.
fn task_summary(task: &str) -> String {
    const MAX: usize = 160;
    let flat = clean(&visible(task))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if flat.chars().count() <= MAX {
        return flat;
    }
    let cut: String = flat.chars().take(MAX - 1).collect();
    format!("{cut}…")
}
