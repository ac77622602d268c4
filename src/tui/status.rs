//! The status part: the run as the user follows it (the one state word, turn, tokens,
//! context use, cost), the settings that apply to the next run (model, thinking, queue
//! modes, tool mode), the queued messages, a short hint, and whether the session is
//! being saved. Drawn as the status bar and the queue strip above the composer.

use super::widgets::{compact, spinner};
use super::wrap::{clean, str_width};
use crate::agent::compaction::resolve_window;
use crate::agent::{
    CompactionSettings, ContextBudget, ContextUsage, QueueKind, QueueMode, ThinkingLevel,
    ToolExecution, Usage,
};
use crate::tui::theme::{Theme, Token};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use std::time::Instant;

/// Token and cost totals of the session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    /// Sum of the assistant messages' usage.
    pub usage: Usage,
    /// Tokens the next request uses (the latest call's size, then what the agent
    /// reports after each turn and compaction).
    pub context_tokens: u64,
}

/// The run, its settings and the queues.
#[derive(Clone, Debug)]
pub struct Status {
    provider: String,
    model: String,
    context_window: Option<u64>,
    compaction: CompactionSettings,
    workspace: String,
    running: bool,
    compacting: bool,
    retrying: bool,
    turn: u32,
    totals: Totals,
    queued_steering: Vec<String>,
    queued_follow_up: Vec<String>,
    steering_mode: QueueMode,
    follow_up_mode: QueueMode,
    tool_execution: ToolExecution,
    thinking: ThinkingLevel,
    hint: Option<(String, Instant)>,
    /// Why the session is not being saved, while it is not.
    unsaved: Option<String>,
}

/// The status bar's part while the session cannot be written.
const UNSAVED: &str = "⚠ session not saved";

/// What the status part starts with.
pub(crate) struct StatusConfig {
    /// Provider name.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// The provider's configured context window; `None`: the built-in table's.
    pub context_window: Option<u64>,
    /// The compaction settings (the threshold the `ctx` figure warns above).
    pub compaction: CompactionSettings,
    /// The workspace as shown.
    pub workspace: String,
    /// Thinking level.
    pub thinking: ThinkingLevel,
    /// Tool execution mode.
    pub tool_execution: ToolExecution,
}

impl Status {
    /// Idle, with the settings of `config`.
    pub(crate) fn new(config: StatusConfig) -> Self {
        Self {
            provider: config.provider,
            model: config.model,
            context_window: config.context_window,
            compaction: config.compaction,
            workspace: config.workspace,
            running: false,
            compacting: false,
            retrying: false,
            turn: 0,
            totals: Totals::default(),
            queued_steering: Vec::new(),
            queued_follow_up: Vec::new(),
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            tool_execution: config.tool_execution,
            thinking: config.thinking,
            hint: None,
            unsaved: None,
        }
    }

    /// Whether a run is active.
    pub fn running(&self) -> bool {
        self.running
    }

    /// The model the next run uses.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Turn number within the current (or last) run.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Tokens and cost of the session.
    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// Pending steering and follow-up messages.
    pub fn queued(&self) -> (&[String], &[String]) {
        (&self.queued_steering, &self.queued_follow_up)
    }

    /// The steering and follow-up queue modes.
    pub fn queue_modes(&self) -> (QueueMode, QueueMode) {
        (self.steering_mode, self.follow_up_mode)
    }

    /// The thinking level of the next run.
    pub fn thinking(&self) -> ThinkingLevel {
        self.thinking
    }

    /// How the next run executes tool calls.
    pub fn tool_execution(&self) -> ToolExecution {
        self.tool_execution
    }

    /// The hint shown now, if any.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_ref().map(|(text, _)| text.as_str())
    }

    /// When the hint goes away.
    pub(crate) fn hint_until(&self) -> Option<Instant> {
        self.hint.as_ref().map(|(_, until)| *until)
    }

    /// Shows `text` until `until`.
    pub(crate) fn set_hint(&mut self, text: String, until: Instant) {
        self.hint = Some((text, until));
    }

    /// Drops a hint whose time is up; returns whether one was.
    pub(crate) fn expire_hint(&mut self, now: Instant) -> bool {
        if self.hint.as_ref().is_some_and(|(_, until)| *until <= now) {
            self.hint = None;
            return true;
        }
        false
    }

    /// How full the context window is for the next request, for the current model.
    pub fn context_usage(&self) -> ContextUsage {
        let window = resolve_window(self.context_window, &self.model);
        let budget = ContextBudget::new(window, &self.compaction);
        ContextUsage::new(self.totals.context_tokens, &budget)
    }

    /// Why the session is not being saved, while it is not.
    pub fn unsaved(&self) -> Option<&str> {
        self.unsaved.as_deref()
    }

    /// Saving the session failed (`Some(why)`) or works again (`None`); returns whether
    /// the bar changed.
    pub(crate) fn set_unsaved(&mut self, why: Option<String>) -> bool {
        let changed = self.unsaved.is_some() != why.is_some();
        self.unsaved = why;
        changed
    }

    /// The exactly-one state word (`tools_running`: a tool call executes).
    pub fn state_word(&self, tools_running: bool) -> &'static str {
        if !self.running {
            "idle"
        } else if self.compacting {
            "compacting"
        } else if self.retrying {
            "retrying"
        } else if tools_running {
            "running tools"
        } else {
            "streaming"
        }
    }

    /// A run began.
    pub(crate) fn run_started(&mut self) {
        self.running = true;
        self.retrying = false;
        self.turn = 0;
    }

    /// The agent is idle again.
    pub(crate) fn run_ended(&mut self) {
        self.running = false;
        self.retrying = false;
        self.compacting = false;
    }

    /// A compaction began (`true`) or ended.
    pub(crate) fn set_compacting(&mut self, compacting: bool) {
        self.compacting = compacting;
    }

    /// The size of the next request, as the agent reports it.
    pub(crate) fn set_context_tokens(&mut self, tokens: u64) {
        self.totals.context_tokens = tokens;
    }

    /// Turn `turn` of the run began.
    pub(crate) fn set_turn(&mut self, turn: u32) {
        self.turn = turn;
    }

    /// A failed request waits to be retried (`true`), or the retry began (`false`).
    pub(crate) fn set_retrying(&mut self, retrying: bool) {
        self.retrying = retrying;
    }

    /// Adds an answer's usage; its size is the context of the latest call.
    pub(crate) fn add_usage(&mut self, usage: &Usage) {
        self.totals.usage.add(usage);
        let context = usage.input + usage.cache_read + usage.cache_write + usage.output;
        if context > 0 {
            self.totals.context_tokens = context;
        }
    }

    /// Adds what a call that is not an answer cost (a summary request) to the totals,
    /// leaving the context size alone.
    pub(crate) fn add_cost(&mut self, usage: &Usage) {
        self.totals.usage.add(usage);
    }

    /// Forgets the totals and the turn (another session).
    pub(crate) fn reset_totals(&mut self) {
        self.totals = Totals::default();
        self.turn = 0;
    }

    /// The queues' contents.
    pub(crate) fn set_queues(&mut self, steering: Vec<String>, follow_up: Vec<String>) {
        self.queued_steering = steering;
        self.queued_follow_up = follow_up;
    }

    /// Rows the queue strip needs.
    pub(crate) fn queue_rows(&self) -> u16 {
        u16::try_from(self.queued_steering.len() + self.queued_follow_up.len()).unwrap_or(u16::MAX)
    }

    /// The model of the next run.
    pub(crate) fn set_model(&mut self, model: String) {
        self.model = model;
    }

    /// The thinking level of the next run.
    pub(crate) fn set_thinking(&mut self, level: ThinkingLevel) {
        self.thinking = level;
    }

    /// How a queue delivers its messages.
    pub(crate) fn set_queue_mode(&mut self, kind: QueueKind, mode: QueueMode) {
        match kind {
            QueueKind::Steering => self.steering_mode = mode,
            QueueKind::FollowUp => self.follow_up_mode = mode,
        }
    }

    /// How the next run executes tool calls.
    pub(crate) fn set_tool_execution(&mut self, mode: ToolExecution) {
        self.tool_execution = mode;
    }

    /// Follows a setting changed by anyone (a command, an RPC client, a resume); returns
    /// the new model when it was the model that changed.
    pub(crate) fn setting(&mut self, key: &str, value: serde_json::Value) -> Option<String> {
        use serde_json::from_value;
        match key {
            "model" => {
                let model = value.as_str()?.to_owned();
                self.model.clone_from(&model);
                return Some(model);
            }
            "thinking" => {
                if let Ok(level) = from_value(value) {
                    self.thinking = level;
                }
            }
            "steering_mode" => {
                if let Ok(mode) = from_value(value) {
                    self.steering_mode = mode;
                }
            }
            "follow_up_mode" => {
                if let Ok(mode) = from_value(value) {
                    self.follow_up_mode = mode;
                }
            }
            "tool_execution" => {
                if let Ok(mode) = from_value(value) {
                    self.tool_execution = mode;
                }
            }
            _ => {}
        }
        None
    }

    /// The status bar's text pieces, left to right.
    pub fn parts(&self, tools_running: bool) -> Vec<String> {
        let usage = &self.totals.usage;
        let mut parts = vec![
            format!("{} · {}", self.provider, self.model),
            self.state_word(tools_running).to_owned(),
            format!("turn {}", self.turn),
            format!(
                "↑{} ↓{}",
                compact(usage.input + usage.cache_read + usage.cache_write),
                compact(usage.output)
            ),
        ];
        parts.push(format!("ctx {}%", self.context_usage().percent));
        parts.push(format!("${:.4}", usage.cost));
        parts.push(format!(
            "queues steer:{} follow-up:{}",
            mode(self.steering_mode),
            mode(self.follow_up_mode)
        ));
        // Right after the state word, so narrow terminals show it too.
        if self.unsaved.is_some() {
            parts.insert(2, UNSAVED.to_owned());
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
        let word = self.state_word(tools_running);
        let sep = Span::styled(" │ ", base.patch(theme.dim()));
        let mut spans = Vec::new();
        for (i, part) in self.parts(tools_running).into_iter().enumerate() {
            if i > 0 {
                spans.push(sep.clone());
            }
            if part == UNSAVED {
                spans.push(Span::styled(
                    part,
                    base.patch(theme.fg(Token::Error))
                        .add_modifier(Modifier::BOLD),
                ));
            } else if i == 1 {
                let token = match word {
                    "idle" => Token::Success,
                    "retrying" | "compacting" => Token::Warning,
                    _ => Token::Tool,
                };
                let spinner = if self.running {
                    format!("{} ", spinner(spinner_frame))
                } else {
                    String::new()
                };
                spans.push(Span::styled(
                    format!("{spinner}{part}"),
                    base.patch(theme.fg(token)).add_modifier(Modifier::BOLD),
                ));
                // The hint goes right after the state word, so narrow terminals show it too.
                if let Some((hint, _)) = &self.hint {
                    spans.push(sep.clone());
                    spans.push(Span::styled(
                        hint.clone(),
                        base.patch(theme.fg(Token::Warning))
                            .add_modifier(Modifier::BOLD),
                    ));
                }
            } else if part.starts_with("ctx ") && self.context_usage().above_threshold() {
                // The next request compacts first: the figure warns.
                spans.push(Span::styled(
                    part,
                    base.patch(theme.fg(Token::Warning))
                        .add_modifier(Modifier::BOLD),
                ));
            } else {
                spans.push(Span::styled(part, base));
            }
        }
        let mut line = Line::from(spans);
        line.spans.insert(0, Span::styled(" ", base));
        buf.set_line(area.x, area.y, &line, area.width);
        let used: usize = line.spans.iter().map(|s| str_width(&s.content)).sum();
        let workspace = format!(" {} ", self.workspace);
        let room = usize::from(area.width).saturating_sub(used + 2);
        if room >= 8 {
            let shown = if str_width(&workspace) > room {
                let tail: String = workspace
                    .chars()
                    .rev()
                    .take(room - 2)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                format!(" …{tail}")
            } else {
                workspace
            };
            let x = area.x + area.width - str_width(&shown) as u16;
            buf.set_stringn(x, area.y, &shown, room, base.patch(theme.dim()));
        }
    }

    /// Draws pending steering and follow-up messages, one per row.
    pub(crate) fn draw_queue(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.height == 0 {
            return;
        }
        let items = self
            .queued_steering
            .iter()
            .map(|t| ("steer", t, Token::Warning))
            .chain(
                self.queued_follow_up
                    .iter()
                    .map(|t| ("follow-up", t, Token::Accent)),
            );
        let total = self.queued_steering.len() + self.queued_follow_up.len();
        for (i, (label, text, token)) in items.take(usize::from(area.height)).enumerate() {
            let y = area.y + i as u16;
            let shown = if i + 1 == usize::from(area.height) && total > i + 1 {
                format!("{} (+{} more)", first_line(text), total - i - 1)
            } else {
                first_line(text)
            };
            let line = Line::from(vec![
                Span::styled(
                    format!(" {label} "),
                    theme
                        .fg(token)
                        .add_modifier(Modifier::REVERSED | Modifier::BOLD),
                ),
                Span::raw(" "),
                Span::styled(shown, theme.text()),
            ]);
            buf.set_line(area.x, y, &line, area.width);
        }
    }
}

fn mode(m: QueueMode) -> &'static str {
    match m {
        QueueMode::OneAtATime => "one",
        QueueMode::All => "all",
    }
}

fn first_line(text: &str) -> String {
    let clean = clean(text);
    let mut lines = clean.lines();
    let first = lines.next().unwrap_or_default().to_owned();
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first
    }
}
