//! The `/sessions` picker and the "open a copy?" prompt: their keys and drawing.

use crate::part::{Handled, Intent};
use crate::sessions::SessionRow;
use crate::theme::{Theme, Token};
use crate::widgets::{centered, dialog};
use crate::wrap::{clean, str_width};
use claw_agent::NoticeLevel;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use std::path::PathBuf;
use std::time::SystemTime;

/// What a key in the picker did: moved the highlight, or chose a row (the picker
/// closes).
pub(super) enum PickerKey {
    /// The highlight moved (or the key did nothing).
    Stay(Handled),
    /// The picker closes with this outcome.
    Close(Handled),
}

/// The picker's state, as the overlay holds it.
pub(super) struct Picker<'a> {
    /// Every session, most recent first.
    pub rows: &'a [SessionRow],
    /// The highlighted row among those shown.
    pub selected: &'a mut usize,
    /// The filter typed so far.
    pub query: &'a mut String,
}

/// The rows `query` lets through (all when it is empty): those whose id, name, first
/// or last prompt holds it, in any letter case.
pub(super) fn matching<'a>(rows: &'a [SessionRow], query: &str) -> Vec<&'a SessionRow> {
    let needle = query.trim().to_lowercase();
    if needle.is_empty() {
        return rows.iter().collect();
    }
    let holds = |text: Option<&str>| text.is_some_and(|t| t.to_lowercase().contains(&needle));
    rows.iter()
        .filter(|r| {
            r.id.starts_with(&needle)
                || holds(r.name.as_deref())
                || holds(r.first_prompt.as_deref())
                || holds(r.last.prompt.as_deref())
        })
        .collect()
}

/// Keys in the picker: typing filters, arrows move, Enter opens; `page` is the rows it
/// shows, `current` the session shown now.
pub(super) fn picker_key(
    picker: Picker<'_>,
    key: &KeyEvent,
    page: usize,
    current: Option<&str>,
) -> PickerKey {
    let Picker {
        rows,
        selected,
        query,
    } = picker;
    let typed = !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(c) if typed => {
            query.push(c);
            *selected = 0;
            return PickerKey::Stay(Handled::changed());
        }
        KeyCode::Backspace => {
            query.pop();
            *selected = 0;
            return PickerKey::Stay(Handled::changed());
        }
        _ => {}
    }
    let shown = matching(rows, query);
    let last = shown.len().saturating_sub(1);
    *selected = match key.code {
        KeyCode::Up => selected.saturating_sub(1),
        KeyCode::Down => (*selected + 1).min(last),
        KeyCode::PageUp => selected.saturating_sub(page),
        KeyCode::PageDown => (*selected + page).min(last),
        KeyCode::Home => 0,
        KeyCode::End => last,
        KeyCode::Enter => {
            let Some(row) = shown.get(*selected) else {
                return PickerKey::Stay(Handled::unchanged());
            };
            let chosen = if Some(row.id.as_str()) == current {
                Intent::Notice(NoticeLevel::Info, "That is the current session.".into())
            } else {
                Intent::OpenSession {
                    path: row.path.clone(),
                    fork: false,
                }
            };
            return PickerKey::Close(Handled::changed().ask(chosen));
        }
        // Esc and Ctrl+C close the picker before it gets here.
        _ => return PickerKey::Stay(Handled::unchanged()),
    };
    PickerKey::Stay(Handled::changed())
}

/// Keys in the "open a copy?" prompt (it closes on any key): y or Enter opens the copy.
pub(super) fn fork_key(path: PathBuf, code: KeyCode) -> Handled {
    match code {
        KeyCode::Char('y' | 'Y') | KeyCode::Enter => {
            Handled::changed().ask(Intent::OpenSession { path, fork: true })
        }
        _ => Handled::changed(),
    }
}

/// `just now`, `5 min ago`, `3 h ago`, `2 days ago`.
pub fn ago(now: SystemTime, at: SystemTime) -> String {
    let s = now.duration_since(at).map_or(0, |d| d.as_secs());
    match s {
        0..=59 => "just now".into(),
        60..=3599 => format!("{} min ago", s / 60),
        3600..=86_399 => format!("{} h ago", s / 3600),
        86_400..=172_799 => "1 day ago".into(),
        _ => format!("{} days ago", s / 86_400),
    }
}

/// Rows the preview of the highlighted session takes under the list.
const PREVIEW_ROWS: u16 = 3;

/// Draws the picker: one row per session the filter lets through (its name, else its
/// first prompt), the highlighted one kept in view, `current` (the session shown now)
/// marked, and under them the highlighted session's last exchange.
pub(super) fn draw_picker(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    (rows, selected, query): (&[SessionRow], usize, &str),
    current: Option<&str>,
    now: SystemTime,
) {
    let shown = matching(rows, query);
    let listed = shown.len().max(1) as u16;
    let height = listed.saturating_add(3 + PREVIEW_ROWS).min(area.height);
    let rect = centered(area, 80, height);
    let waiting = rows.iter().filter(|r| r.waiting > 0).count();
    let mut title = if query.is_empty() {
        format!(" Sessions ({}) · type to filter", rows.len())
    } else {
        format!(" Sessions: \"{query}\" ({} of {})", shown.len(), rows.len())
    };
    if waiting > 0 {
        title.push_str(&format!(" · ◆ results waiting in {waiting}"));
    }
    title.push_str(" · Enter opens · Esc closes ");
    let body = dialog(theme, rect, title, buf);
    if body.height == 0 || body.width == 0 {
        return;
    }
    // The header, at least one row, then the preview.
    let preview_rows = if body.height >= PREVIEW_ROWS + 2 {
        PREVIEW_ROWS
    } else {
        0
    };
    let visible = usize::from(body.height.saturating_sub(1 + preview_rows)).max(1);
    let top = selected.saturating_sub(visible - 1);
    let header = Line::from(Span::styled(
        format!(
            "  {:<8} {:<13} {:>5}  name or first prompt",
            "id", "last active", "msgs"
        ),
        theme.dim(),
    ));
    buf.set_line(body.x, body.y, &header, body.width);
    if shown.is_empty() {
        let none = Line::from(Span::styled(
            "  no session matches (Backspace edits the filter)",
            theme.dim(),
        ));
        buf.set_line(body.x, body.y + 1, &none, body.width);
    }
    for (i, row) in shown.iter().enumerate().skip(top).take(visible) {
        let y = body.y + 1 + (i - top) as u16;
        draw_row(buf, theme, body, y, (row, i == selected), current, now);
    }
    if let Some(row) = shown.get(selected).filter(|_| preview_rows > 0) {
        let y = body.y + body.height - preview_rows;
        draw_preview(
            buf,
            theme,
            Rect::new(body.x, y, body.width, preview_rows),
            row,
        );
    }
}

/// One session's row: marker, id, age, messages, then its name (bold) or first prompt.
fn draw_row(
    buf: &mut Buffer,
    theme: &Theme,
    body: Rect,
    y: u16,
    (row, highlighted): (&SessionRow, bool),
    current: Option<&str>,
    now: SystemTime,
) {
    let marker = if current == Some(row.id.as_str()) {
        "● "
    } else if row.waiting > 0 {
        "◆ "
    } else {
        "  "
    };
    let mut prompt = row.first_prompt.as_deref().map_or_else(
        || "(no prompt yet)".to_owned(),
        |p| clean(p).replace('\n', " "),
    );
    if row.waiting > 0 && current != Some(row.id.as_str()) {
        prompt = format!("{} waiting · {prompt}", row.waiting);
    }
    let fixed = format!(
        "{marker}{:<8} {:<13} {:>5}  ",
        &row.id[..row.id.len().min(8)],
        ago(now, row.last_activity),
        row.message_count
    );
    let style = if highlighted {
        theme.selection().add_modifier(Modifier::BOLD)
    } else {
        theme.text()
    };
    let rest = if highlighted { style } else { theme.dim() };
    let mut room = usize::from(body.width).saturating_sub(str_width(&fixed));
    let mut spans = vec![Span::styled(fixed, style)];
    if let Some(name) = &row.name {
        let name: String = clean(name).chars().take(room).collect();
        room = room.saturating_sub(str_width(&name) + 3);
        spans.push(Span::styled(name, style.add_modifier(Modifier::BOLD)));
        if room > 0 {
            spans.push(Span::styled(" · ", rest));
        }
    }
    spans.push(Span::styled(
        prompt.chars().take(room).collect::<String>(),
        rest,
    ));
    buf.set_style(Rect::new(body.x, y, body.width, 1), style);
    buf.set_line(body.x, y, &Line::from(spans), body.width);
}

/// The highlighted session's last exchange: a rule, its last prompt, its last answer.
fn draw_preview(buf: &mut Buffer, theme: &Theme, area: Rect, row: &SessionRow) {
    let one_line = |text: &str| claw_text::one_line(&clean(text), usize::from(area.width));
    let rule = "─".repeat(usize::from(area.width));
    buf.set_line(
        area.x,
        area.y,
        &Line::from(Span::styled(rule, theme.dim())),
        area.width,
    );
    let prompt = row.last.prompt.as_deref().map_or_else(
        || "(no prompt yet)".to_owned(),
        |p| format!("› {}", one_line(p)),
    );
    let answer = row
        .last
        .answer
        .as_deref()
        .map_or_else(|| "(no answer yet)".to_owned(), one_line);
    let lines = [
        Line::from(Span::styled(prompt, theme.fg(Token::User))),
        Line::from(Span::styled(answer, theme.dim())),
    ];
    for (i, line) in lines.iter().enumerate().take(usize::from(area.height) - 1) {
        buf.set_line(area.x, area.y + 1 + i as u16, line, area.width);
    }
}

/// Draws "this session is open elsewhere: continue in a copy?".
pub(super) fn draw_fork(area: Rect, buf: &mut Buffer, theme: &Theme, id: &str) {
    let rect = centered(area, 60, 6);
    let body = dialog(theme, rect, " Session in use ".into(), buf);
    let short = &id[..id.len().min(8)];
    let lines = [
        Line::from(Span::styled(
            format!("Session {short} is open in another claw-tui process."),
            theme.text(),
        )),
        Line::from(Span::styled(
            "Continue in a new session that starts from a copy of its history?",
            theme.text(),
        )),
        Line::from(vec![
            Span::styled("y/Enter", theme.fg(Token::Accent)),
            Span::styled(": open a copy · any other key: stay here", theme.dim()),
        ]),
    ];
    for (i, line) in lines.iter().enumerate().take(usize::from(body.height)) {
        buf.set_line(body.x, body.y + i as u16, line, body.width);
    }
}
