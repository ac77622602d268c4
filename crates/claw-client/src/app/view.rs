//! The pure view: lays out the frame and has each part draw itself into its area,
//! handing it what it needs from the others. It never changes the app.

use super::App;
use crate::chat::ChatView;
use crate::composer::ComposerView;
use crate::dashboard::DashboardView;
use crate::layout::{Focus, MIN_HEIGHT, MIN_WIDTH, Tab};
use crate::overlay::OverlayView;
use crate::theme::Token;
use crate::tool_tree::TreeView;
use claw_runtime::keymap::Action;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

/// Draws the whole app.
pub fn view(app: &App, frame: &mut Frame<'_>) {
    let area = frame.area();
    let buf = frame.buffer_mut();
    draw(app, area, buf);
}

/// Draws the whole app into `buf`.
fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    let areas = app.areas_in(area);
    if areas.too_small {
        let text = format!(
            "Terminal too small: {}×{} (min {MIN_WIDTH}×{MIN_HEIGHT})",
            area.width, area.height
        );
        // Wrapped, so that the sizes stay readable however narrow the terminal is.
        Paragraph::new(text)
            .style(theme.fg(Token::Warning))
            .wrap(Wrap { trim: true })
            .render(area, buf);
        return;
    }
    let focused = |pane: Focus| app.focus == pane;
    let tools_running = app.tools.any_running();
    if let Some(tabs) = areas.tabs {
        draw_tabs(app, tabs, buf);
    }
    if let Some(chat) = areas.chat {
        let bottom_key = app.keymap.label(Action::ScrollBottom);
        let title = app.subagents.title(app.dashboard.subagents());
        let view = ChatView {
            focused: focused(Focus::Chat),
            bottom_key: &bottom_key,
            title: &title,
        };
        app.subagents.chat(&app.chat).draw(chat, buf, theme, &view);
    }
    if let Some(tree) = areas.tree {
        let view = TreeView {
            focused: focused(Focus::Tree),
            spinner: app.spinner,
            now: app.now,
        };
        app.tools.draw(tree, buf, theme, &view);
    }
    if let Some(dashboard) = areas.dashboard {
        let view = DashboardView {
            focused: focused(Focus::Dashboard),
            spinner: app.spinner,
            now: app.now,
            wall: app.wall(),
        };
        app.dashboard.draw(dashboard, buf, theme, &view);
    }
    let running = app.tools.running_names();
    let stop_key = app.keymap.label(Action::InterruptTool);
    app.status.draw_queue(
        areas.queue,
        buf,
        theme,
        (running.first().map(String::as_str), &stop_key),
    );
    let hint = app.key_hint();
    let composer = ComposerView {
        focused: focused(Focus::Composer),
        hint: &hint,
    };
    app.composer.draw(areas.composer, buf, theme, &composer);
    app.status
        .draw(areas.status, buf, theme, tools_running, app.spinner);
    app.composer
        .draw_completion(areas.composer, buf, theme, composer.focused);
    let status = match app.overlays.top() {
        Some(crate::overlay::Overlay::Status { .. }) => app.status_rows(),
        Some(crate::overlay::Overlay::Settings { .. }) => app.settings_rows(),
        _ => Vec::new(),
    };
    let overlays = OverlayView {
        status: &status,
        keymap: &app.keymap,
        tools: &app.tools,
        highlights: app.highlights.cache(),
        now: app.now,
        wall: app.wall(),
        session_id: app.session_id(),
        mcp: app.dashboard.mcp_servers(),
    };
    app.overlays.draw(area, buf, theme, &overlays);
    app.approvals.draw(area, buf, theme);
}

fn draw_tabs(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
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
    let key = app.keymap.label(Action::FocusNext);
    spans.push(Span::styled(format!("({key} switches)"), theme.dim()));
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}
