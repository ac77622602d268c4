//! The `/sessions` picker and the "open a copy?" prompt: their keys and drawing.

use crate::part::{Handled, Intent};
use crate::sessions::SessionRow;
use crate::theme::{Theme, Token};
use crate::widgets::{centered, dialog};
use crate::wrap::{clean, str_width};
use claw_agent::NoticeLevel;
use crossterm::event::KeyCode;
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

/// Keys in the picker: move, Enter opens; `page` is the rows it shows, `current` the
/// session shown now.
pub(super) fn picker_key(
    rows: &[SessionRow],
    selected: &mut usize,
    code: KeyCode,
    page: usize,
    current: Option<&str>,
) -> PickerKey {
    let last = rows.len().saturating_sub(1);
    *selected = match code {
        KeyCode::Up | KeyCode::Char('k') => selected.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => (*selected + 1).min(last),
        KeyCode::PageUp => selected.saturating_sub(page),
        KeyCode::PageDown => (*selected + page).min(last),
        KeyCode::Home => 0,
        KeyCode::End => last,
        KeyCode::Enter => {
            let Some(row) = rows.get(*selected) else {
                return PickerKey::Close(Handled::changed());
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
        // Esc, q and Ctrl+C close the picker before it gets here.
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

/// Draws the picker: one row per session, the highlighted one kept in view; `current`
/// (the session shown now) is marked.
pub(super) fn draw_picker(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    (rows, selected): (&[SessionRow], usize),
    current: Option<&str>,
    now: SystemTime,
) {
    let height = (rows.len() as u16).saturating_add(3).min(area.height);
    let rect = centered(area, 80, height);
    let waiting = rows.iter().filter(|r| r.waiting > 0).count();
    let title = if waiting > 0 {
        format!(
            " Sessions ({}) · ◆ results waiting in {waiting} · Enter opens · Esc closes ",
            rows.len()
        )
    } else {
        format!(" Sessions ({}) · Enter opens · Esc closes ", rows.len())
    };
    let body = dialog(theme, rect, title, buf);
    if body.height == 0 || body.width == 0 {
        return;
    }
    let visible = usize::from(body.height.saturating_sub(1)).max(1);
    let top = selected.saturating_sub(visible - 1);
    let header = Line::from(Span::styled(
        format!(
            "  {:<8} {:<13} {:>5}  first prompt",
            "id", "last active", "msgs"
        ),
        theme.dim(),
    ));
    buf.set_line(body.x, body.y, &header, body.width);
    for (i, row) in rows.iter().enumerate().skip(top).take(visible) {
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
        let room = usize::from(body.width).saturating_sub(str_width(&fixed));
        let prompt: String = prompt.chars().take(room).collect();
        let style = if i == selected {
            theme.selection().add_modifier(Modifier::BOLD)
        } else {
            theme.text()
        };
        let line = Line::from(vec![
            Span::styled(fixed, style),
            Span::styled(prompt, if i == selected { style } else { theme.dim() }),
        ]);
        let y = body.y + 1 + (i - top) as u16;
        buf.set_style(Rect::new(body.x, y, body.width, 1), style);
        buf.set_line(body.x, y, &line, body.width);
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
