//! Drawing the dashboard: its sections (subagents, cron jobs, MCP servers, who is
//! attached, what waits elsewhere), each row in the theme's words and colours, with
//! the selected row marked. Reads the part; changes nothing.

use super::{Dashboard, DashboardView, mcp};
use crate::msg::{CronRow, CronRunStatus};
use crate::subagents::SubagentRow;
use crate::theme::{Theme, Token};
use crate::widgets::{compact, format_duration, pane_frame, spinner};
use crate::wrap::clean;
use claw_runtime::runtime::SubagentStatus;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use std::time::{Duration, SystemTime};

impl Dashboard {
    /// Draws the dashboard into `area`.
    pub(crate) fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme, view: &DashboardView) {
        pane_frame(theme, area, " Dashboard ", view.focused, buf);
        let body = crate::layout::inner(area);
        let mut lines: Vec<(Line<'static>, bool)> = Vec::new();
        let header = |text: String| {
            Line::from(Span::styled(
                text,
                theme.fg(Token::Accent).add_modifier(Modifier::BOLD),
            ))
        };
        lines.push((
            header(format!("Subagents ({})", self.subagents.len())),
            false,
        ));
        if self.subagents.is_empty() {
            lines.push((Line::from(Span::styled("  none", theme.dim())), false));
        }
        for (i, s) in self.subagents.iter().enumerate() {
            let selected = view.focused && self.selected == i;
            for line in self.subagent_lines(i, s, theme, view) {
                lines.push((line, selected));
            }
        }
        lines.push((Line::default(), false));
        lines.push((header(format!("Cron ({})", self.cron.len())), false));
        if self.cron.is_empty() {
            lines.push((
                Line::from(Span::styled("  no scheduled jobs", theme.dim())),
                false,
            ));
        }
        for (i, job) in self.cron.iter().enumerate() {
            let selected = view.focused && self.selected == self.subagents.len() + i;
            for line in self.cron_lines(job, theme, view.wall) {
                lines.push((line, selected));
            }
        }
        lines.extend(mcp::lines(&self.mcp, theme).into_iter().map(|l| (l, false)));
        lines.push((Line::default(), false));
        let pending = self.pending_notifications;
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
        if !self.elsewhere.is_empty() {
            let total: usize = self.elsewhere.iter().map(|(_, n)| n).sum();
            lines.push((
                Line::from(vec![
                    Span::styled(
                        format!("  + {total} waiting in other sessions"),
                        theme.fg(Token::Notify),
                    ),
                    Span::styled(" (/sessions)", theme.dim()),
                ]),
                false,
            ));
            for (id, n) in &self.elsewhere {
                lines.push((
                    Line::from(Span::styled(
                        format!("    {}  {n}", &id[..id.len().min(8)]),
                        theme.text(),
                    )),
                    false,
                ));
            }
        }
        if !self.attached.is_empty() {
            lines.push((Line::default(), false));
            lines.push((header(format!("Attached ({})", self.attached.len())), false));
            for client in &self.attached {
                lines.push((
                    Line::from(Span::styled(
                        format!("  {}", client.describe()),
                        theme.text(),
                    )),
                    false,
                ));
            }
        }
        if view.focused {
            lines.push((
                Line::from(Span::styled(
                    "Enter open subagent · x cancel it · p pause/resume · d delete job",
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

    fn subagent_lines(
        &self,
        i: usize,
        s: &SubagentRow,
        theme: &Theme,
        view: &DashboardView,
    ) -> [Line<'static>; 2] {
        let (symbol, token) = match s.status {
            SubagentStatus::Queued => ("○", Token::Dim),
            SubagentStatus::Running => (spinner(view.spinner), Token::Tool),
            SubagentStatus::Done => ("✓", Token::Success),
            SubagentStatus::Failed => ("✗", Token::Error),
            SubagentStatus::Cancelled | SubagentStatus::TurnLimit => ("⊘", Token::Warning),
        };
        let elapsed = self.elapsed(i, view.now);
        let first = Line::from(vec![
            Span::styled(format!("  {symbol} "), theme.fg(token)),
            Span::styled(clean(&s.label), theme.text().add_modifier(Modifier::BOLD)),
            Span::styled(format!("  {}", s.id), theme.dim()),
        ]);
        let mut details = vec![Span::styled(
            format!(
                "    {} · {} turn{} · {} tok · {}",
                status_word(s.status),
                s.turns,
                if s.turns == 1 { "" } else { "s" },
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

    fn cron_lines(&self, job: &CronRow, theme: &Theme, wall: SystemTime) -> [Line<'static>; 2] {
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
                Some(at) => format!(
                    "next {} ({})",
                    relative(wall, at),
                    clock(self.time_zone, wall, at)
                ),
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
}

/// The word the dashboard shows for a subagent's state.
fn status_word(status: SubagentStatus) -> &'static str {
    match status {
        SubagentStatus::Queued => "queued",
        SubagentStatus::Running => "working",
        SubagentStatus::Done => "done",
        SubagentStatus::Failed => "failed",
        SubagentStatus::Cancelled => "cancelled",
        SubagentStatus::TurnLimit => "stopped at its turn limit",
    }
}

/// `in 4m 10s`, `in 2h 5m`, `due`.
fn relative(now: SystemTime, at: SystemTime) -> String {
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

/// `at` as a clock time (`14:05:00`), with the date when it is not today.
fn clock(time_zone: Option<chrono::FixedOffset>, wall: SystemTime, at: SystemTime) -> String {
    fn format<Tz: chrono::TimeZone>(tz: &Tz, wall: SystemTime, at: SystemTime) -> String
    where
        Tz::Offset: std::fmt::Display,
    {
        let t = chrono::DateTime::<chrono::Utc>::from(at).with_timezone(tz);
        let today = chrono::DateTime::<chrono::Utc>::from(wall)
            .with_timezone(tz)
            .date_naive();
        if t.date_naive() == today {
            t.format("%H:%M:%S").to_string()
        } else {
            t.format("%b %d %H:%M").to_string()
        }
    }
    match time_zone {
        Some(tz) => format(&tz, wall, at),
        None => format(&chrono::Local, wall, at),
    }
}
