//! The help overlay: every key as bound now, the keys of the panes, the commands.

use crate::tui::keymap::{ACTIONS, KeyMap};
use crate::tui::slash::COMMANDS;
use crate::tui::theme::{Theme, Token};
use crate::tui::widgets::{centered, dialog, scrolled};
use crate::tui::wrap::{StyledLine, str_width, wrap};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Span;

/// Draws the help from row `scroll` on.
pub(super) fn draw(area: Rect, buf: &mut Buffer, theme: &Theme, keymap: &KeyMap, scroll: u16) {
    let rect = centered(area, 70, area.height.saturating_sub(4));
    let body = dialog(theme, rect, " Help · Esc closes ".into(), buf);
    let head = theme.fg(Token::Accent).add_modifier(Modifier::BOLD);
    let key_style = theme.fg(Token::Tool);
    let mut lines = vec![StyledLine::plain("Keys", head)];
    const KEY_COLUMN: usize = 24;
    let row = |keys: String, what: &str| -> Vec<StyledLine> {
        let pad = " ".repeat(KEY_COLUMN);
        let description = StyledLine {
            spans: vec![Span::styled(what.to_owned(), theme.text())],
            first_prefix: vec![Span::raw(pad.clone())],
            rest_prefix: vec![Span::raw(pad)],
            ..StyledLine::default()
        };
        let keys = format!("  {keys}");
        if str_width(&keys) + 1 < KEY_COLUMN {
            let mut line = description;
            line.first_prefix = vec![Span::styled(format!("{keys:<KEY_COLUMN$}"), key_style)];
            vec![line]
        } else {
            // A long key list gets its own line; the description goes below it.
            vec![StyledLine::plain(keys, key_style), description]
        }
    };
    for (action, _, what) in ACTIONS {
        let keys: Vec<String> = keymap.chords(action).iter().map(|c| c.label()).collect();
        lines.extend(row(keys.join(", "), what));
    }
    lines.extend(row("?".into(), "this help (empty message)"));
    lines.push(StyledLine::blank());
    lines.push(StyledLine::plain("In the panes", head));
    lines.extend(row(
        "Up/Down, Home/End".into(),
        "chat: scroll · tools: select a call",
    ));
    lines.extend(row(
        "Enter".into(),
        "tools: open the call's arguments, result and diff",
    ));
    lines.extend(row(
        "Enter (empty)".into(),
        "plan mode, after a plan: offer to implement it",
    ));
    lines.extend(row(
        "x / p / d".into(),
        "dashboard: cancel subagent · pause/resume job · delete job",
    ));
    lines.extend(row(
        "Up/Down".into(),
        "message: history (on the first/last line)",
    ));
    lines.extend(row(
        "@path".into(),
        "message: complete a workspace file with Tab",
    ));
    lines.push(StyledLine::blank());
    lines.push(StyledLine::plain("Commands", head));
    for (name, args, what) in COMMANDS {
        lines.extend(row(format!("{name} {args}"), what));
    }
    scrolled(&wrap(&lines, body.width), body, scroll, buf);
}
