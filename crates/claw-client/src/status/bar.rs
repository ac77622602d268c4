//! The status bar: its parts in a fixed order, each with a priority. When the bar is
//! too narrow, whole parts go, least important first (the workspace, then the queue
//! modes, the model, the token counts, the turn); the state word, a session that is
//! not being saved, the context use and the cost stay. A hint comes after those: it is
//! shortened, never allowed to push them out.

use super::{Status, mode};
use crate::theme::{Theme, Token};
use crate::widgets::{compact, spinner};
use crate::wrap::str_width;
use claw_runtime::runtime::AgentMode;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// What separates two parts.
const SEP: &str = " │ ";
/// `⚠ session not saved` where the bar has no room for it.
const UNSAVED_SHORT: &str = "⚠ not saved";
/// A hint is shortened to no fewer cells than this (else it goes).
const MIN_HINT: usize = 12;

/// Which part of the bar a piece of text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartKind {
    /// `PLAN`: plan mode is on.
    Plan,
    /// Provider and model.
    Model,
    /// The one state word (with the spinner while running).
    State,
    /// The session cannot be written (`⚠ session not saved`).
    Unsaved,
    /// A short-lived hint.
    Hint,
    /// The session's turn number.
    Turn,
    /// Tokens in and out.
    Tokens,
    /// Context use.
    Context,
    /// The session's cost.
    Cost,
    /// Queue modes.
    Queues,
    /// The workspace, right-aligned.
    Workspace,
}

impl PartKind {
    /// Lower goes last.
    fn priority(self) -> u8 {
        match self {
            // Even the narrowest bar says that nothing will be changed.
            PartKind::Plan | PartKind::State => 0,
            PartKind::Unsaved => 1,
            PartKind::Context => 2,
            PartKind::Cost => 3,
            PartKind::Hint => 4,
            PartKind::Turn => 5,
            PartKind::Tokens => 6,
            PartKind::Model => 7,
            PartKind::Queues => 8,
            PartKind::Workspace => 9,
        }
    }
}

/// One part of the bar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BarPart {
    /// Which part.
    pub kind: PartKind,
    /// Its text.
    pub text: String,
}

impl Status {
    /// Every part of the bar, left to right (the workspace last), before fitting.
    pub fn bar_parts(&self, tools_running: bool, spinner_frame: usize) -> Vec<BarPart> {
        let usage = &self.totals.usage;
        let part = |kind, text: String| BarPart { kind, text };
        let state = if self.running {
            format!(
                "{} {}",
                spinner(spinner_frame),
                self.state_word(tools_running)
            )
        } else {
            self.state_word(tools_running).to_owned()
        };
        let mut parts = Vec::new();
        if self.mode == AgentMode::Plan {
            parts.push(part(PartKind::Plan, "PLAN".to_owned()));
        }
        parts.extend([
            part(
                PartKind::Model,
                format!("{} · {}", self.provider, self.model),
            ),
            part(PartKind::State, state),
        ]);
        // Right after the state word, and kept as long as it is.
        if self.unsaved().is_some() {
            parts.push(part(PartKind::Unsaved, super::UNSAVED.to_owned()));
        }
        if let Some((hint, _)) = &self.hint {
            parts.push(part(PartKind::Hint, hint.clone()));
        }
        parts.extend([
            part(PartKind::Turn, format!("turn {}", self.turn)),
            part(
                PartKind::Tokens,
                format!(
                    "↑{} ↓{}",
                    compact(usage.input + usage.cache_read + usage.cache_write),
                    compact(usage.output)
                ),
            ),
            part(PartKind::Context, self.context_text()),
            part(PartKind::Cost, self.cost_text()),
            part(
                PartKind::Queues,
                format!(
                    "queues steer:{} follow-up:{}",
                    mode(self.steering_mode),
                    mode(self.follow_up_mode)
                ),
            ),
            part(PartKind::Workspace, self.workspace.clone()),
        ]);
        parts
    }

    /// The status bar's text pieces, left to right, as a wide terminal shows them
    /// (without the hint and the workspace).
    pub fn parts(&self, tools_running: bool) -> Vec<String> {
        self.bar_parts(tools_running, 0)
            .into_iter()
            .filter(|p| !matches!(p.kind, PartKind::Hint | PartKind::Workspace))
            .map(|p| {
                if p.kind == PartKind::State {
                    self.state_word(tools_running).to_owned()
                } else {
                    p.text
                }
            })
            .collect()
    }

    /// The parts that fit `width` cells, whole, in their order (a hint shortened).
    pub fn fit(&self, width: usize, tools_running: bool, spinner_frame: usize) -> Vec<BarPart> {
        let mut parts = self.bar_parts(tools_running, spinner_frame);
        // One leading space; the workspace has a space on either side instead of a bar.
        let used = |parts: &[BarPart]| -> usize {
            1 + parts
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let sep = if i == 0 {
                        0
                    } else if p.kind == PartKind::Workspace {
                        3
                    } else {
                        str_width(SEP)
                    };
                    sep + str_width(&p.text)
                })
                .sum::<usize>()
        };
        while used(&parts) > width {
            let Some(drop) = parts
                .iter()
                .enumerate()
                .filter(|(_, p)| p.kind.priority() > PartKind::Hint.priority())
                .max_by_key(|(_, p)| p.kind.priority())
                .map(|(i, _)| i)
            else {
                break;
            };
            parts.remove(drop);
        }
        if used(&parts) > width
            && let Some(i) = parts.iter().position(|p| p.kind == PartKind::Hint)
        {
            let over = used(&parts) - width;
            let room = str_width(&parts[i].text).saturating_sub(over + 1);
            if room >= MIN_HINT {
                let cut: String = parts[i].text.chars().take(room).collect();
                parts[i].text = format!("{cut}…");
            } else {
                parts.remove(i);
            }
        }
        if used(&parts) > width
            && let Some(unsaved) = parts.iter_mut().find(|p| p.kind == PartKind::Unsaved)
        {
            unsaved.text = UNSAVED_SHORT.to_owned();
        }
        while used(&parts) > width && parts.len() > 1 {
            // Narrower than the three that matter: the least of them goes too.
            let last = parts
                .iter()
                .enumerate()
                .max_by_key(|(_, p)| p.kind.priority())
                .map_or(0, |(i, _)| i);
            parts.remove(last);
        }
        parts
    }

    /// Draws the bar into `area` (one row); `tools_running` and the spinner frame are
    /// the tool tree's and the root's.
    pub(crate) fn draw(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        tools_running: bool,
        spinner_frame: usize,
    ) {
        let base = theme.status();
        buf.set_style(area, base);
        let parts = self.fit(usize::from(area.width), tools_running, spinner_frame);
        let sep = Span::styled(SEP, base.patch(theme.dim()));
        let mut spans = vec![Span::styled(" ", base)];
        let mut workspace = None;
        for (i, part) in parts.into_iter().enumerate() {
            if part.kind == PartKind::Workspace {
                workspace = Some(part.text);
                continue;
            }
            if i > 0 {
                spans.push(sep.clone());
            }
            spans.push(Span::styled(
                part.text,
                self.style_of(part.kind, base, theme),
            ));
        }
        let line = Line::from(spans);
        buf.set_line(area.x, area.y, &line, area.width);
        if let Some(workspace) = workspace {
            let shown = format!(" {workspace} ");
            let x = area.right().saturating_sub(str_width(&shown) as u16);
            buf.set_stringn(
                x,
                area.y,
                &shown,
                usize::from(area.width),
                base.patch(theme.dim()),
            );
        }
    }

    fn style_of(&self, kind: PartKind, base: Style, theme: &Theme) -> Style {
        match kind {
            PartKind::Plan => theme
                .fg(Token::Warning)
                .add_modifier(Modifier::REVERSED | Modifier::BOLD),
            PartKind::State => {
                let token = match (self.running, self.retrying || self.compacting) {
                    (false, _) => Token::Success,
                    (true, true) => Token::Warning,
                    (true, false) => Token::Tool,
                };
                base.patch(theme.fg(token)).add_modifier(Modifier::BOLD)
            }
            PartKind::Unsaved => base
                .patch(theme.fg(Token::Error))
                .add_modifier(Modifier::BOLD),
            PartKind::Hint => base
                .patch(theme.fg(Token::Warning))
                .add_modifier(Modifier::BOLD),
            // The next request compacts first: the figure warns.
            PartKind::Context if self.context_usage().above_threshold() => base
                .patch(theme.fg(Token::Warning))
                .add_modifier(Modifier::BOLD),
            PartKind::Cost if !self.cost_known() => base.patch(theme.dim()),
            _ => base,
        }
    }
}
