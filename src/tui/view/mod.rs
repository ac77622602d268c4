//! The pure view: draws an `&App` into a frame and never changes it.

pub mod chat;
pub mod composer;
pub mod dashboard;
pub mod overlay;
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
use ratatui::widgets::{Block, BorderType, Borders};

/// Draws the whole app.
pub fn view(app: &App, frame: &mut Frame<'_>) {
    let area = frame.area();
    let buf = frame.buffer_mut();
    draw(app, area, buf);
}

/// Draws the whole app into `buf` (what `view` does, usable without a terminal).
pub fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    buf.set_style(area, theme.text());
    let areas = app.areas();
    if areas.too_small {
        let text = format!(
            "Terminal too small: {}×{} (min {MIN_WIDTH}×{MIN_HEIGHT})",
            area.width, area.height
        );
        buf.set_stringn(area.x, area.y, text, usize::from(area.width), theme.fg(Token::Warning));
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

/// A pane's frame: rounded border, title, brighter when focused.
pub fn pane_block(app: &App, title: String, focused: bool) -> Block<'static> {
    let theme = app.theme();
    let mut title_style = theme.fg(Token::Accent);
    if focused {
        title_style = title_style.add_modifier(Modifier::BOLD);
    }
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.border(focused))
        .title(Span::styled(title, title_style))
}

fn draw_tabs(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    let current = Tab::of(app.focus);
    let mut spans = Vec::new();
    for (tab, label) in [(Tab::Chat, " Chat "), (Tab::Tools, " Tools "), (Tab::Dashboard, " Dashboard ")] {
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

/// Whether `pane` has focus (the composer counts as the chat's in the narrow layout).
pub fn focused(app: &App, pane: Focus) -> bool {
    app.focus == pane
}
