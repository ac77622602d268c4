//! The pure view: draws an `&App` into a frame and never changes it.

pub mod chat;
pub mod composer;
pub mod dashboard;
pub mod overlay;
pub mod sessions;
pub mod status;
pub mod tool_tree;

use super::app::App;
use super::layout::{Focus, MIN_HEIGHT, MIN_WIDTH, Tab};
use super::theme::Token;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

/// Draws the whole app.
pub fn view(app: &App, frame: &mut Frame<'_>) {
    let area = frame.area();
    let buf = frame.buffer_mut();
    draw(app, area, buf);
}

/// Draws the whole app into `buf` (what `view` does, usable without a terminal).
pub fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    let areas = app.areas_in(area);
    if areas.too_small {
        let text = format!(
            "Terminal too small: {}×{} (min {MIN_WIDTH}×{MIN_HEIGHT})",
            area.width, area.height
        );
        buf.set_stringn(
            area.x,
            area.y,
            text,
            usize::from(area.width),
            theme.fg(Token::Warning),
        );
        return;
    }
    if let Some(tabs) = areas.tabs {
        draw_tabs(app, tabs, buf);
    }
    if let Some(chat) = areas.chat {
        chat::draw(app, chat, buf);
    }
    if let Some(tree) = areas.tree {
        tool_tree::draw(app, tree, buf);
    }
    if let Some(dashboard) = areas.dashboard {
        dashboard::draw(app, dashboard, buf);
    }
    composer::draw_queue(app, areas.queue, buf);
    composer::draw(app, areas.composer, buf);
    status::draw(app, areas.status, buf);
    composer::draw_completion(app, areas.composer, buf);
    overlay::draw(app, area, buf);
}

/// Draws a pane's frame: rounded border and title, brighter when focused. Only the
/// border cells are touched (a `Block` would restyle every cell of the pane).
pub fn pane_frame(app: &App, area: Rect, title: &str, focused: bool, buf: &mut Buffer) {
    if area.width < 2 || area.height < 2 {
        return;
    }
    let theme = app.theme();
    let border = theme.border(focused);
    let (left, right, top, bottom) = (area.left(), area.right() - 1, area.top(), area.bottom() - 1);
    let mut put = |x: u16, y: u16, c: char| {
        if let Some(cell) = buf.cell_mut((x, y)) {
            cell.set_char(c).set_style(border);
        }
    };
    for x in left + 1..right {
        put(x, top, '─');
        put(x, bottom, '─');
    }
    for y in top + 1..bottom {
        put(left, y, '│');
        put(right, y, '│');
    }
    put(left, top, '╭');
    put(right, top, '╮');
    put(left, bottom, '╰');
    put(right, bottom, '╯');
    let mut title_style = theme.fg(Token::Accent);
    if focused {
        title_style = title_style.add_modifier(Modifier::BOLD);
    }
    let title = Line::from(Span::styled(title.to_owned(), title_style));
    put_line(buf, left + 1, top, &title, area.width.saturating_sub(2));
}

fn draw_tabs(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    let current = Tab::of(app.focus);
    let mut spans = Vec::new();
    for (tab, label) in [
        (Tab::Chat, " Chat "),
        (Tab::Tools, " Tools "),
        (Tab::Dashboard, " Dashboard "),
    ] {
        let style = if tab == current {
            theme.selection().add_modifier(Modifier::BOLD)
        } else {
            theme.dim()
        };
        spans.push(Span::styled(label, style));
        spans.push(Span::raw(" "));
    }
    let key = app.config.keymap.label(super::keymap::Action::FocusNext);
    spans.push(Span::styled(format!("({key} switches)"), theme.dim()));
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}

/// Writes a line like `Buffer::set_line`, with a fast path for ASCII spans: they need
/// no grapheme segmentation, which is most of the cost of drawing a screen of text.
pub fn put_line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, max_width: u16) {
    let right = x.saturating_add(max_width).min(buf.area.right());
    let mut col = x;
    for span in &line.spans {
        if col >= right {
            break;
        }
        let style = line.style.patch(span.style);
        let text: &str = &span.content;
        if text.is_ascii() {
            for b in text.bytes() {
                if col >= right {
                    break;
                }
                if b < 0x20 || b == 0x7f {
                    continue;
                }
                if let Some(cell) = buf.cell_mut((col, y)) {
                    cell.set_char(char::from(b)).set_style(style);
                }
                col += 1;
            }
        } else {
            col = buf
                .set_stringn(col, y, text, usize::from(right - col), style)
                .0;
        }
    }
}

/// Whether `pane` has focus (the composer counts as the chat's in the narrow layout).
pub fn focused(app: &App, pane: Focus) -> bool {
    app.focus == pane
}
