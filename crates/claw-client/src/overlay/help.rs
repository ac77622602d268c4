//! The help overlay: every key as bound now, the keys of the panes, what the status bar
//! counts, the commands. It scrolls with the arrows and PgUp/PgDn, and says when there
//! is more above or below.

use crate::slash::COMMANDS;
use crate::theme::{Theme, Token};
use crate::widgets::{centered, dialog, scrolled};
use crate::wrap::{StyledLine, str_width, wrap};
use claw_runtime::keymap::{ACTIONS, Action, KeyMap};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

/// Width of the key column.
const KEY_COLUMN: usize = 24;

/// One line of the help before styling.
enum HelpLine {
    /// A section title.
    Head(&'static str),
    /// Keys and what they do.
    Row(String, String),
    /// A gap between sections.
    Blank,
}

/// Everything the help says, with the keys as `keymap` binds them.
fn content(keymap: &KeyMap) -> Vec<HelpLine> {
    use HelpLine::{Blank, Head, Row};
    let key = |a: Action| keymap.label(a);
    let mut lines = vec![Head("Keys")];
    for (action, _, what) in ACTIONS {
        let keys: Vec<String> = keymap.chords(action).iter().map(|c| c.label()).collect();
        lines.push(Row(keys.join(", "), what.to_owned()));
    }
    lines.push(Row("?".into(), "this help (empty message)".into()));
    lines.push(Row(
        "End".into(),
        "jump to the bottom of the chat (empty message)".into(),
    ));
    lines.extend([Blank, Head("While the agent works")]);
    lines.push(Row(
        key(Action::Interrupt),
        "with text: steer (goes in when the running tool finishes, or when the answer \
         ends); empty: interrupt the run"
            .into(),
    ));
    lines.push(Row(
        key(Action::InterruptTool),
        "stop the running tool now: its result says you interrupted it, the steer (typed \
         or queued) goes in at once, and the turn goes on"
            .into(),
    ));
    lines.extend([Blank, Head("In the panes")]);
    lines.push(Row(
        "Up/Down, Home/End".into(),
        "chat: scroll · tools: select a call · dashboard: select".into(),
    ));
    lines.push(Row(
        "[ / ]".into(),
        "chat: select the previous / next card or code block".into(),
    ));
    lines.push(Row(
        "c".into(),
        "chat: copy the selected code block (its original lines) or card output".into(),
    ));
    lines.push(Row(
        "o, Enter".into(),
        "chat: show all of the selected card's output, or fold it".into(),
    ));
    lines.push(Row(
        "Enter".into(),
        "tools: open the call's arguments, result and diff · dashboard: open a \
         subagent's conversation (read-only, Esc returns)"
            .into(),
    ));
    lines.push(Row(
        "Enter (empty)".into(),
        "plan mode, after a plan: offer to implement it".into(),
    ));
    lines.push(Row(
        "x / p / d".into(),
        "dashboard: cancel subagent · pause/resume job · delete job (x and d ask first)".into(),
    ));
    lines.push(Row(
        "Up/Down".into(),
        "message: history (on the first/last line)".into(),
    ));
    lines.push(Row(
        "@path".into(),
        "message: complete a workspace file with Tab".into(),
    ));
    lines.push(Row(
        "!cmd, !!cmd".into(),
        "message: run a shell command through the exec sandbox; !cmd adds its output to \
         your next message, !!cmd does not"
            .into(),
    ));
    lines.push(Row(
        format!("{} (find)", key(Action::Find)),
        "type to search · Enter / Shift+Enter: next / previous match · Esc closes".into(),
    ));
    lines.extend([Blank, Head("Status bar")]);
    lines.push(Row(
        "turn N".into(),
        "the Nth model call of this session (the Tools pane's Turn N)".into(),
    ));
    lines.push(Row(
        "↑ ↓".into(),
        "tokens sent and received in this session".into(),
    ));
    lines.push(Row(
        "ctx N%".into(),
        "how full the model's context window is (tokens when the window is unknown)".into(),
    ));
    lines.push(Row(
        "$ / cost n/a".into(),
        "the session's cost; n/a while the model's prices are unknown".into(),
    ));
    lines.extend([Blank, Head("Commands")]);
    for (name, args, what) in COMMANDS {
        lines.push(Row(format!("{name} {args}"), what.to_owned()));
    }
    lines
}

/// The help as styled lines (`theme` `None`: unstyled, for counting rows).
fn styled(keymap: &KeyMap, theme: Option<&Theme>) -> Vec<StyledLine> {
    let style = |f: &dyn Fn(&Theme) -> Style| theme.map_or(Style::default(), f);
    let head = style(&|t| t.fg(Token::Accent).add_modifier(Modifier::BOLD));
    let key_style = style(&|t| t.fg(Token::Tool));
    let text = style(&|t| t.text());
    let mut out = Vec::new();
    for line in content(keymap) {
        match line {
            HelpLine::Head(title) => out.push(StyledLine::plain(title, head)),
            HelpLine::Blank => out.push(StyledLine::blank()),
            HelpLine::Row(keys, what) => {
                let pad = " ".repeat(KEY_COLUMN);
                let description = StyledLine {
                    spans: vec![Span::styled(what, text)],
                    first_prefix: vec![Span::raw(pad.clone())],
                    rest_prefix: vec![Span::raw(pad)],
                    ..StyledLine::default()
                };
                let keys = format!("  {keys}");
                if str_width(&keys) + 1 < KEY_COLUMN {
                    let mut line = description;
                    line.first_prefix =
                        vec![Span::styled(format!("{keys:<KEY_COLUMN$}"), key_style)];
                    out.push(line);
                } else {
                    // A long key list gets its own line; the description goes below it.
                    out.push(StyledLine::plain(keys, key_style));
                    out.push(description);
                }
            }
        }
    }
    out
}

/// The dialog's box in a screen `area`.
fn frame(area: Rect) -> Rect {
    centered(area, 70, area.height.saturating_sub(4))
}

/// The inside of the dialog.
fn body(area: Rect) -> Rect {
    crate::layout::inner(frame(area))
}

/// The last row the help can scroll to in a screen `area`.
pub(super) fn max_scroll(area: Rect, keymap: &KeyMap) -> u16 {
    let body = body(area);
    let rows = wrap(&styled(keymap, None), body.width).len();
    u16::try_from(rows.saturating_sub(usize::from(body.height))).unwrap_or(u16::MAX)
}

/// Draws the help from row `scroll` on, with a sign where more is above or below.
pub(super) fn draw(area: Rect, buf: &mut Buffer, theme: &Theme, keymap: &KeyMap, scroll: u16) {
    let rect = frame(area);
    let body = dialog(theme, rect, " Help · Esc closes ".into(), buf);
    let lines = wrap(&styled(keymap, Some(theme)), body.width);
    let max = max_scroll(area, keymap);
    let scroll = scroll.min(max);
    scrolled(&lines, body, scroll, buf);
    let sign = theme.fg(Token::Accent).add_modifier(Modifier::BOLD);
    if scroll < max {
        let text = " ↓ more (PgDn) ";
        let x = rect.right().saturating_sub(str_width(text) as u16 + 2);
        buf.set_string(x, rect.bottom().saturating_sub(1), text, sign);
    }
    if scroll > 0 {
        let text = " ↑ more (PgUp) ";
        let x = rect.right().saturating_sub(str_width(text) as u16 + 2);
        buf.set_string(x, rect.y, text, sign);
    }
}
