//! The dashboard pane: subagents, cron jobs and pending notifications.

use super::{focused, pane_frame};
use crate::tui::app::{App, SPINNER};
use crate::tui::entry::format_duration;
use crate::tui::layout::{Focus, inner};
use crate::tui::msg::{CronRunStatus, SubagentStatus};
use crate::tui::theme::Token;
use crate::tui::wrap::clean;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use std::time::{Duration, SystemTime};

/// Draws the dashboard into `area`.
pub fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    let is_focused = focused(app, Focus::Dashboard);
    pane_frame(app, area, " Dashboard ", is_focused, buf);
    let body = inner(area);
    let mut lines: Vec<(Line<'static>, bool)> = Vec::new();
    let header = |text: String| {
        Line::from(Span::styled(
            text,
            theme.fg(Token::Accent).add_modifier(Modifier::BOLD),
        ))
    };
    lines.push((
        header(format!("Subagents ({})", app.subagents.len())),
        false,
    ));
    if app.subagents.is_empty() {
        lines.push((Line::from(Span::styled("  none", theme.dim())), false));
    }
    for (i, s) in app.subagents.iter().enumerate() {
        let selected = is_focused && app.dashboard_selected == i;
        for line in subagent_lines(app, i, s) {
            lines.push((line, selected));
        }
    }
    lines.push((Line::default(), false));
    lines.push((header(format!("Cron ({})", app.cron.len())), false));
    if app.cron.is_empty() {
        lines.push((
            Line::from(Span::styled("  no scheduled jobs", theme.dim())),
            false,
        ));
    }
    for (i, job) in app.cron.iter().enumerate() {
        let selected = is_focused && app.dashboard_selected == app.subagents.len() + i;
        for line in cron_lines(app, job) {
            lines.push((line, selected));
        }
    }
    lines.push((Line::default(), false));
    let pending = app.pending_notifications;
    let style = if pending > 0 {
        theme.fg(Token::Notify)
    } else {
        theme.dim()
    };
    lines.push((
        Line::from(Span::styled(
            format!("Pending notifications: {pending}"),
            style,
        )),
        false,
    ));
    if is_focused {
        lines.push((
            Line::from(Span::styled(
                "x cancel subagent · p pause/resume · d delete job",
                theme.dim(),
            )),
            false,
        ));
    }
    let height = usize::from(body.height);
    let selected_at = lines.iter().rposition(|(_, s)| *s).unwrap_or(0);
    let top = (selected_at + 1).saturating_sub(height);
    for (i, (line, selected)) in lines.iter().skip(top).take(height).enumerate() {
        let y = body.y + i as u16;
        buf.set_line(body.x, y, line, body.width);
        if *selected {
            buf.set_style(Rect::new(body.x, y, body.width, 1), theme.selection());
        }
    }
}

fn subagent_lines(app: &App, i: usize, s: &crate::tui::msg::SubagentRow) -> [Line<'static>; 2] {
    let theme = app.theme();
    let (symbol, token) = match s.status {
        SubagentStatus::Queued => ("○", Token::Dim),
        SubagentStatus::Running => (SPINNER[app.spinner % SPINNER.len()], Token::Tool),
        SubagentStatus::Done => ("✓", Token::Success),
        SubagentStatus::Failed => ("✗", Token::Error),
        SubagentStatus::Cancelled | SubagentStatus::TurnLimit => ("⊘", Token::Warning),
    };
    let elapsed = app.subagent_elapsed(i);
    let first = Line::from(vec![
        Span::styled(format!("  {symbol} "), theme.fg(token)),
        Span::styled(clean(&s.label), theme.text().add_modifier(Modifier::BOLD)),
        Span::styled(format!("  {}", s.id), theme.dim()),
    ]);
    let mut details = vec![Span::styled(
        format!(
            "    {} · {} turns · {} tok · {}",
            s.status.label(),
            s.turns,
            compact(s.tokens),
            format_duration(Duration::from_secs(elapsed.as_secs()))
        ),
        theme.dim(),
    )];
    if let Some(tool) = &s.current_tool {
        details.push(Span::styled(format!(" · {tool}"), theme.fg(Token::Tool)));
    }
    [first, Line::from(details)]
}

fn cron_lines(app: &App, job: &crate::tui::msg::CronRow) -> [Line<'static>; 2] {
    let theme = app.theme();
    let (last, token) = match job.last_status {
        CronRunStatus::Never => ("not run yet", Token::Dim),
        CronRunStatus::Firing => ("firing now", Token::Tool),
        CronRunStatus::Ok => ("last ok", Token::Success),
        CronRunStatus::Missed => ("last missed", Token::Warning),
        CronRunStatus::Failed => ("last failed", Token::Error),
    };
    let next = if job.paused {
        "paused".to_owned()
    } else if job.done {
        "done".to_owned()
    } else {
        match job.next_fire {
            Some(at) => format!("next {} ({})", relative(app.wall(), at), clock(app, at)),
            None => "no next run".to_owned(),
        }
    };
    let first = Line::from(vec![
        Span::styled("  ◷ ", theme.fg(Token::Accent)),
        Span::styled(clean(&job.name), theme.text().add_modifier(Modifier::BOLD)),
        Span::styled(format!("  {}", job.id), theme.dim()),
    ]);
    let second = Line::from(vec![
        Span::styled(format!("    {} · {next} · ", job.schedule), theme.dim()),
        Span::styled(last, theme.fg(token)),
    ]);
    [first, second]
}

/// `in 4m 10s`, `in 2h 5m`, `due`.
pub fn relative(now: SystemTime, at: SystemTime) -> String {
    let Ok(ahead) = at.duration_since(now) else {
        return "due".into();
    };
    let s = ahead.as_secs();
    match s {
        0 => "due".into(),
        1..=59 => format!("in {s}s"),
        60..=3599 => format!("in {}m {:02}s", s / 60, s % 60),
        3600..=86_399 => format!("in {}h {:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("in {}d {}h", s / 86_400, (s % 86_400) / 3600),
    }
}

fn clock(app: &App, at: SystemTime) -> String {
    let utc: chrono::DateTime<chrono::Utc> = at.into();
    let same_day = |a: chrono::NaiveDate, b: chrono::NaiveDate| a == b;
    match app.config.time_zone {
        Some(tz) => {
            let t = utc.with_timezone(&tz);
            let today = chrono::DateTime::<chrono::Utc>::from(app.wall())
                .with_timezone(&tz)
                .date_naive();
            if same_day(t.date_naive(), today) {
                t.format("%H:%M:%S").to_string()
            } else {
                t.format("%b %d %H:%M").to_string()
            }
        }
        None => {
            let t = utc.with_timezone(&chrono::Local);
            let today = chrono::DateTime::<chrono::Utc>::from(app.wall())
                .with_timezone(&chrono::Local)
                .date_naive();
            if same_day(t.date_naive(), today) {
                t.format("%H:%M:%S").to_string()
            } else {
                t.format("%b %d %H:%M").to_string()
            }
        }
    }
}

/// `950`, `12.3k`, `4.1M`.
pub fn compact(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1000..=999_999 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}
