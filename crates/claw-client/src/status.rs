//! The status part: the run as the user follows it (the one state word, turn, tokens,
//! context use, cost), the settings that apply to the next run (model, thinking, queue
//! modes, tool mode), the queued messages, a short hint, and whether the session is
//! being saved. Drawn as the status bar (`status/bar.rs`) and the queue strip above the
//! composer.

mod bar;

pub use bar::{BarPart, PartKind};

use super::wrap::clean;
use crate::theme::{Theme, Token};
use claw_agent::compaction::resolve_window;
use claw_agent::{
    CompactionSettings, ContextBudget, ContextUsage, QueueKind, QueueMode, ThinkingLevel,
    ToolExecution, Usage,
};
use claw_runtime::runtime::AgentMode;
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
    /// Models whose prices the configuration gives.
    priced_models: Vec<String>,
    /// The model costs nothing (the offline demo).
    offline: bool,
    workspace: String,
    running: bool,
    compacting: bool,
    retrying: bool,
    /// The user interrupted the active run.
    interrupted: bool,
    turn: u32,
    totals: Totals,
    queued_steering: Vec<String>,
    queued_follow_up: Vec<String>,
    steering_mode: QueueMode,
    follow_up_mode: QueueMode,
    tool_execution: ToolExecution,
    thinking: ThinkingLevel,
    mode: AgentMode,
    hint: Option<(String, Instant)>,
    /// Why the session is not being saved, while it is not.
    unsaved: Option<String>,
}

/// The status bar's part while the session cannot be written.
pub(crate) const UNSAVED: &str = "⚠ session not saved";

/// What the status part starts with.
pub(crate) struct StatusConfig {
    /// Provider name.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// The provider's configured context window; `None`: the built-in table's.
    pub context_window: Option<u64>,
    /// Models whose prices the configuration gives.
    pub priced_models: Vec<String>,
    /// The model costs nothing (the offline demo).
    pub offline: bool,
    /// The compaction settings (the threshold the `ctx` figure warns above).
    pub compaction: CompactionSettings,
    /// The workspace as shown.
    pub workspace: String,
    /// Thinking level.
    pub thinking: ThinkingLevel,
    /// Tool execution mode.
    pub tool_execution: ToolExecution,
    /// How the steering and follow-up queues are taken.
    pub queue_modes: (QueueMode, QueueMode),
    /// Whether the agent starts in plan mode.
    pub plan: bool,
}

impl Status {
    /// Idle, with the settings of `config`.
    pub(crate) fn new(config: StatusConfig) -> Self {
        Self {
            provider: config.provider,
            model: config.model,
            context_window: config.context_window,
            compaction: config.compaction,
            priced_models: config.priced_models,
            offline: config.offline,
            workspace: config.workspace,
            running: false,
            compacting: false,
            retrying: false,
            interrupted: false,
            turn: 0,
            totals: Totals::default(),
            queued_steering: Vec::new(),
            queued_follow_up: Vec::new(),
            steering_mode: config.queue_modes.0,
            follow_up_mode: config.queue_modes.1,
            tool_execution: config.tool_execution,
            thinking: config.thinking,
            mode: if config.plan {
                AgentMode::Plan
            } else {
                AgentMode::Default
            },
            hint: None,
            unsaved: None,
        }
    }

    /// The main agent's mode (plan mode shows as `PLAN`).
    pub fn mode(&self) -> AgentMode {
        self.mode
    }

    /// The mode changed.
    pub(crate) fn set_mode(&mut self, mode: AgentMode) {
        self.mode = mode;
    }

    /// Whether a run is active.
    pub fn running(&self) -> bool {
        self.running
    }

    /// The model the next run uses.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The current (or last) turn, numbered through the session: the Nth model call of
    /// this session, as the tool tree's `Turn N` headers count.
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

    /// Drops the hint now when it is one that `promise` says (e.g. a double press's).
    pub(crate) fn drop_hint_ending(&mut self, promise: &str) -> bool {
        let promised = self
            .hint
            .as_ref()
            .is_some_and(|(text, _)| text.ends_with(promise));
        if promised {
            self.hint = None;
        }
        promised
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
        self.interrupted = false;
    }

    /// The user asked to interrupt the active run.
    pub(crate) fn interrupt_requested(&mut self) {
        if self.running {
            self.interrupted = true;
        }
    }

    /// The agent is idle again; returns whether the user had interrupted the run.
    pub(crate) fn run_ended(&mut self) -> bool {
        self.running = false;
        self.retrying = false;
        self.compacting = false;
        std::mem::take(&mut self.interrupted)
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

    /// The provider's name.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// Whether the context window is the configured one (else the built-in table's).
    pub fn window_configured(&self) -> bool {
        self.context_window.is_some_and(|w| w > 0)
    }

    /// Tokens the next request uses.
    pub fn context_tokens(&self) -> u64 {
        self.totals.context_tokens
    }

    /// How the context's use reads: `ctx 12%` of the model's window.
    pub fn context_text(&self) -> String {
        format!("ctx {}%", self.context_usage().percent)
    }

    /// Whether the session's cost is known: the model is free, its prices are
    /// configured or built in, or the provider priced a call.
    pub fn cost_known(&self) -> bool {
        self.offline
            || self.totals.usage.cost > 0.0
            || self.priced_models.contains(&self.model)
            || claw_llm::pricing::known_prices(&self.model).is_some()
    }

    /// The cost as the bar shows it: dollars, or `cost n/a` while prices are unknown.
    pub fn cost_text(&self) -> String {
        if self.cost_known() {
            format!("${:.4}", self.totals.usage.cost)
        } else {
            "cost n/a".to_owned()
        }
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
            claw_runtime::runtime::mode::MODE_SETTING => {
                if let Ok(mode) = from_value(value) {
                    self.mode = mode;
                }
            }
            _ => {}
        }
        None
    }

    /// Draws pending steering and follow-up messages, one per row.
    /// `waiting_for`: the running tool that steering waits for (each steer says when
    /// it goes in; `stop_key` delivers it now).
    pub(crate) fn draw_queue(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        (waiting_for, stop_key): (Option<&str>, &str),
    ) {
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
            let mut spans = vec![
                Span::styled(
                    format!(" {label} "),
                    theme
                        .fg(token)
                        .add_modifier(Modifier::REVERSED | Modifier::BOLD),
                ),
                Span::raw(" "),
                Span::styled(shown, theme.text()),
            ];
            if label == "steer" && self.running {
                let when = match waiting_for {
                    Some(tool) => format!("  · goes in when {tool} finishes ({stop_key}: now)"),
                    None => "  · goes in when this answer ends".to_owned(),
                };
                spans.push(Span::styled(when, theme.dim()));
            }
            buf.set_line(area.x, y, &Line::from(spans), area.width);
        }
    }
}

/// How a queue mode reads in the bar.
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
