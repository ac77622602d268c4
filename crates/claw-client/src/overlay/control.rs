//! The overlays of the user's controls: the undo confirmation (files changed since),
//! the `/rewind` picker and its choice (files, conversation, both), the `/diff` view
//! and "Implement this plan?". Their keys and their drawing.

use crate::checkpoints::{self, PendingRewind};
use crate::diff;
use crate::highlight::HighlightCache;
use crate::msg::Effect;
use crate::part::Handled;
use crate::theme::{Theme, Token};
use crate::widgets::{centered, dialog, scrolled};
use crate::wrap::{StyledLine, WrapKind, clean, wrap};
use claw_runtime::checkpoint::{Confirmation, Conflicts, SessionFile};
use claw_runtime::runtime::AgentMode;
use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Span;

/// The prompt that starts implementing a plan.
pub const IMPLEMENT_PREFIX: &str = "Implement this plan:";

/// The effect that carries on an undo or rewind with `conflicts` decided.
fn carry_on(rewind: Option<&PendingRewind>, conflicts: Conflicts) -> Effect {
    match rewind {
        None => Effect::Checkpoints(checkpoints::Effect::Undo(conflicts)),
        Some(r) => Effect::Checkpoints(checkpoints::Effect::Rewind {
            turn: r.turn,
            files: true,
            conversation: r.conversation,
            conflicts,
        }),
    }
}

/// Keys of the undo confirmation (it closes on any key): y overwrites the files changed
/// since too, s or n skips them, anything else cancels.
pub(super) fn confirm_key(rewind: Option<&PendingRewind>, code: KeyCode) -> Handled {
    match code {
        KeyCode::Char('y' | 'Y') => Handled::changed().with(carry_on(rewind, Conflicts::Overwrite)),
        KeyCode::Char('s' | 'S' | 'n' | 'N') | KeyCode::Enter => {
            Handled::changed().with(carry_on(rewind, Conflicts::Skip))
        }
        _ => Handled::changed(),
    }
}

/// Keys of the rewind picker: move; Enter picks (the caller opens the choice).
pub(super) fn picker_key(count: usize, selected: &mut usize, code: KeyCode) -> Option<usize> {
    let last = count.saturating_sub(1);
    *selected = match code {
        KeyCode::Up | KeyCode::Char('k') => selected.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => (*selected + 1).min(last),
        KeyCode::Home => 0,
        KeyCode::End => last,
        KeyCode::Enter => return Some(*selected + 1),
        _ => *selected,
    };
    None
}

/// Keys of the rewind choice (it closes on any key): f files, c conversation, b or
/// Enter both.
pub(super) fn choice_key(turn: usize, code: KeyCode) -> Handled {
    let (files, conversation) = match code {
        KeyCode::Char('f' | 'F') => (true, false),
        KeyCode::Char('c' | 'C') => (false, true),
        KeyCode::Char('b' | 'B') | KeyCode::Enter => (true, true),
        _ => return Handled::changed(),
    };
    Handled::changed().with(Effect::Checkpoints(checkpoints::Effect::Rewind {
        turn,
        files,
        conversation,
        conflicts: Conflicts::Ask,
    }))
}

/// Keys of "Implement this plan?" (it closes on any key): y or Enter leaves plan mode
/// and sends the plan.
pub(super) fn implement_key(plan: &str, code: KeyCode) -> Handled {
    match code {
        KeyCode::Char('y' | 'Y') | KeyCode::Enter => Handled::changed()
            .with(Effect::SetMode(AgentMode::Default))
            .with(Effect::Prompt(format!(
                "{IMPLEMENT_PREFIX}\n\n{}",
                plan.trim()
            ))),
        _ => Handled::changed(),
    }
}

/// Draws the undo confirmation.
pub(super) fn draw_confirm(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    question: &Confirmation,
    rewind: Option<&PendingRewind>,
) {
    let rect = centered(area, 70, 12);
    let title = match rewind {
        None => " Undo: files changed since ".to_owned(),
        Some(r) => format!(" Rewind to prompt {}: files changed since ", r.turn),
    };
    let body = dialog(theme, rect, title, buf);
    let mut lines = vec![StyledLine::plain(
        question.message(),
        theme.fg(Token::Warning),
    )];
    if !question.clean.is_empty() {
        lines.push(StyledLine::plain(
            format!("Restored either way: {}.", question.clean.join(", ")),
            theme.text(),
        ));
    }
    lines.push(StyledLine::blank());
    lines.push(StyledLine::plain(
        "y: restore them too (their new content is lost) · s/Enter: leave them · Esc: cancel",
        theme.dim(),
    ));
    scrolled(&wrap(&lines, body.width), body, 0, buf);
}

/// Draws the rewind picker.
pub(super) fn draw_picker(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    prompts: &[String],
    selected: usize,
) {
    let height = (prompts.len() as u16 + 3).min(area.height.saturating_sub(2));
    let rect = centered(area, 80, height);
    let body = dialog(
        theme,
        rect,
        " Rewind to before which prompt? ↑↓ · Enter · Esc ".into(),
        buf,
    );
    let rows = usize::from(body.height);
    let top = (selected + 1).saturating_sub(rows);
    for (i, prompt) in prompts.iter().enumerate().skip(top).take(rows) {
        let first = clean(prompt.lines().next().unwrap_or_default());
        let text = format!("{:>3}. {first}", i + 1);
        let y = body.y + (i - top) as u16;
        let style = if i == selected {
            theme.selection()
        } else {
            theme.text()
        };
        buf.set_stringn(body.x, y, &text, usize::from(body.width), style);
        if i == selected {
            buf.set_style(Rect::new(body.x, y, body.width, 1), theme.selection());
        }
    }
}

/// Draws the rewind choice.
pub(super) fn draw_choice(area: Rect, buf: &mut Buffer, theme: &Theme, turn: usize, prompt: &str) {
    let rect = centered(area, 70, 9);
    let body = dialog(
        theme,
        rect,
        format!(" Rewind to before prompt {turn} "),
        buf,
    );
    let first = clean(prompt.lines().next().unwrap_or_default());
    let lines = vec![
        StyledLine::plain(format!("“{first}”"), theme.fg(Token::User)),
        StyledLine::blank(),
        StyledLine::plain(
            "f: files only — put back every file changed since (the chat stays)",
            theme.text(),
        ),
        StyledLine::plain(
            "c: conversation only — the chat and the model's history go back; the prompt \
             returns to the composer (files stay)",
            theme.text(),
        ),
        StyledLine::plain("b/Enter: both · Esc: cancel", theme.dim()),
    ];
    scrolled(&wrap(&lines, body.width), body, 0, buf);
}

/// Draws "Implement this plan?".
pub(super) fn draw_implement(area: Rect, buf: &mut Buffer, theme: &Theme, plan: &str) {
    let rect = centered(area, 70, 8);
    let body = dialog(theme, rect, " Implement this plan? ".into(), buf);
    let first = clean(plan.trim().lines().next().unwrap_or_default());
    let lines = vec![
        StyledLine::plain(format!("“{first}” …"), theme.fg(Token::Assistant)),
        StyledLine::blank(),
        StyledLine::plain(
            "y/Enter: leave plan mode and send the plan as the next prompt",
            theme.text(),
        ),
        StyledLine::plain("any other key: stay in plan mode", theme.dim()),
    ];
    scrolled(&wrap(&lines, body.width), body, 0, buf);
}

/// The lines of `/diff`: each file's header and its diff.
pub(crate) fn session_diff_lines(
    files: &[SessionFile],
    theme: &Theme,
    highlights: &HighlightCache,
    fold: bool,
) -> Vec<StyledLine> {
    let head = theme.fg(Token::Accent).add_modifier(Modifier::BOLD);
    let mut lines = Vec::new();
    for (i, file) in files.iter().enumerate() {
        if i > 0 {
            lines.push(StyledLine::blank());
        }
        let mut spans = vec![Span::styled(format!("{} ", file.change.path), head)];
        spans.extend(diff::stat_spans(&file.change, theme));
        if file.changed_outside {
            spans.push(Span::styled(
                "  (changed since by something else)",
                theme.fg(Token::Warning),
            ));
        }
        lines.push(StyledLine {
            spans,
            wrap: WrapKind::Char,
            ..StyledLine::default()
        });
        let highlighted = diff::highlighted(&file.change, theme, highlights);
        lines.extend(diff::diff_lines(&file.change, theme, highlighted, fold));
    }
    lines
}

/// Draws `/diff` from row `scroll` on.
pub(super) fn draw_session_diff(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    files: &[SessionFile],
    highlights: &HighlightCache,
    (scroll, unfolded): (u16, bool),
) {
    let rect = centered(area, 90, area.height.saturating_sub(2));
    let (added, removed) = files.iter().fold((0, 0), |(a, r), f| {
        (a + f.change.added, r + f.change.removed)
    });
    let title = format!(
        " Session diff: {} file(s) +{added} −{removed} · ↑↓ scroll · f folds · Esc closes ",
        files.len()
    );
    let body = dialog(theme, rect, title, buf);
    let lines = session_diff_lines(files, theme, highlights, !unfolded);
    scrolled(&wrap(&lines, body.width), body, scroll, buf);
}
