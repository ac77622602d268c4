//! The model of the Elm-style app: everything the screen shows, changed only by
//! `App::update` (in `update.rs` and `events.rs`) and read by the pure `view`.

use super::calls::CallTree;
use super::composer::Composer;
use super::entry::{CardInfo, RenderCtx};
use super::highlight::HighlightCache;
use super::keymap::KeyMap;
use super::layout::{self, Areas, Focus};
use super::msg::{CronRow, Effect, SessionRow, SubagentRow};
use super::theme::Theme;
use super::transcript::Transcript;
use crate::agent::{QueueMode, ThinkingLevel, ToolExecution, Usage};
use crate::tools::exec::ApprovalRequest;
use ratatui::layout::Rect;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant, SystemTime};

/// A second press of Esc within this long after a steer does not interrupt; a second
/// Ctrl+C within this long quits.
pub const DOUBLE_PRESS: Duration = Duration::from_secs(1);
/// Shortest time between two highlight requests for the answer being streamed.
pub const STREAM_HIGHLIGHT_GAP: Duration = Duration::from_millis(250);
/// How long a status-bar hint stays.
pub const HINT: Duration = Duration::from_secs(2);
/// Spinner frames.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// What the app is configured with at start.
#[derive(Clone, Debug)]
pub struct AppConfig {
    /// Colours.
    pub theme: Theme,
    /// Key bindings.
    pub keymap: KeyMap,
    /// Provider name, for the status bar.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// Model names offered by `/model` completion.
    pub models: Vec<String>,
    /// The provider's context window, when known.
    pub context_window: Option<u64>,
    /// The workspace as shown (home shortened to `~`).
    pub workspace: String,
    /// Thinking level at start.
    pub thinking: ThinkingLevel,
    /// Tool execution mode at start.
    pub tool_execution: ToolExecution,
    /// Whether the mouse is captured at start.
    pub mouse_capture: bool,
    /// Time zone for clock times; `None`: the system's local time.
    pub time_zone: Option<chrono::FixedOffset>,
}

impl AppConfig {
    /// A configuration for tests and benchmarks: demo provider, dark theme.
    pub fn for_tests() -> Self {
        Self {
            theme: Theme::fallback(),
            keymap: KeyMap::default(),
            provider: "demo".into(),
            model: "demo (offline)".into(),
            models: Vec::new(),
            context_window: Some(200_000),
            workspace: "~/project".into(),
            thinking: ThinkingLevel::Off,
            tool_execution: ToolExecution::Parallel,
            mouse_capture: true,
            time_zone: chrono::FixedOffset::east_opt(0),
        }
    }
}

/// A floating window over the panes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Overlay {
    /// Keys and commands.
    Help {
        /// First row shown.
        scroll: u16,
    },
    /// A tool call's full arguments and result.
    Detail {
        /// The call.
        call_id: String,
        /// First row shown.
        scroll: u16,
    },
    /// "Delete this cron job?"
    ConfirmDelete {
        /// The job.
        id: String,
        /// Its name.
        name: String,
    },
    /// The `/sessions` picker.
    Sessions {
        /// The sessions, most recent first.
        rows: Vec<SessionRow>,
        /// The highlighted row.
        selected: usize,
    },
    /// "That session is open elsewhere: continue in a copy?"
    ConfirmFork {
        /// The session file.
        path: std::path::PathBuf,
        /// Its id.
        id: String,
    },
}

/// The chat's scroll position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChatScroll {
    /// Whether the view sticks to the bottom (follows the stream).
    pub follow: bool,
    /// First visible row when not following.
    pub top: usize,
    /// Whether content arrived below while scrolled up.
    pub unseen: bool,
}

/// Token and cost totals of the session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    /// Sum of the assistant messages' usage.
    pub usage: Usage,
    /// Tokens of the latest call (its context size).
    pub context_tokens: u64,
}

/// The whole state of the terminal client.
#[derive(Clone, Debug)]
pub struct App {
    /// Start-up configuration (theme, keys, provider...).
    pub config: AppConfig,
    /// Current model (changed by `/model`).
    pub model: String,
    /// Terminal size.
    pub size: Rect,
    /// Focused pane.
    pub focus: Focus,
    /// Open overlay (approvals are shown over it).
    pub overlay: Option<Overlay>,
    /// Approval requests waiting for an answer, oldest first.
    pub approvals: VecDeque<ApprovalRequest>,
    /// Whether mouse capture is on.
    pub mouse_capture: bool,
    /// Whether a run is active.
    pub running: bool,
    /// Whether a failed request is waiting to be retried.
    pub retrying: bool,
    /// Turn number within the current (or last) run.
    pub turn: u32,
    /// Tokens and cost.
    pub totals: Totals,
    /// Pending steering messages.
    pub queued_steering: Vec<String>,
    /// Pending follow-up messages.
    pub queued_follow_up: Vec<String>,
    /// Steering queue mode.
    pub steering_mode: QueueMode,
    /// Follow-up queue mode.
    pub follow_up_mode: QueueMode,
    /// Tool execution mode.
    pub tool_execution: ToolExecution,
    /// Thinking level.
    pub thinking: ThinkingLevel,
    /// The chat.
    pub transcript: Transcript,
    pub(super) streaming_entry: Option<usize>,
    pub(super) call_entries: HashMap<String, usize>,
    /// Card states of tool calls by id.
    pub cards: HashMap<String, CardInfo>,
    /// Whether thinking blocks are expanded.
    pub expand_thinking: bool,
    /// The chat's scroll position.
    pub chat: ChatScroll,
    pub(super) highlights: HighlightCache,
    pub(super) pending_highlights: HashMap<u64, Vec<usize>>,
    last_stream_highlight: Option<Instant>,
    /// The tool-call tree.
    pub calls: CallTree,
    /// The call selected in the tree.
    pub tree_selected: Option<String>,
    /// Subagents for the dashboard.
    pub subagents: Vec<SubagentRow>,
    /// The MCP servers, in configuration order, as last reported.
    pub mcp_servers: Vec<crate::mcp::McpServerInfo>,
    /// When each subagent row arrived (its elapsed time counts on from there).
    pub(super) subagents_seen: Vec<Instant>,
    /// Cron jobs for the dashboard.
    pub cron: Vec<CronRow>,
    /// System notifications waiting for the agent.
    pub pending_notifications: usize,
    /// The session being recorded (`None` with `--no-session`).
    pub session_id: Option<String>,
    /// A switch to another session is under way (input waits for it).
    pub switching_session: bool,
    /// Selected dashboard row (subagents first, then cron jobs).
    pub dashboard_selected: usize,
    /// The composer.
    pub composer: Composer,
    pub(super) files: Option<Vec<String>>,
    pub(super) files_requested: bool,
    /// The server's models, once listed (`/model` completes from the configured names
    /// until then, and when the server offers none).
    pub(super) server_models: Option<Vec<String>>,
    pub(super) models_requested: bool,
    pub(super) last_steer: Option<Instant>,
    pub(super) last_cancel: Option<Instant>,
    /// A short message in the status bar, until the instant given.
    pub hint: Option<(String, Instant)>,
    /// Spinner frame.
    pub spinner: usize,
    /// The time of the last update, for elapsed times.
    pub now: Instant,
    clock_base: (Instant, SystemTime),
    pub(super) dirty: bool,
    /// Whether the user's own input changed the screen (drawn sooner than streamed text).
    pub(super) input_changed: bool,
    pub(super) last_total_rows: usize,
}

impl App {
    /// A fresh app with `config`, sized 80×24 until the first resize.
    pub fn new(config: AppConfig) -> Self {
        let composer = Composer::new(&config.theme);
        Self {
            model: config.model.clone(),
            size: Rect::new(0, 0, 80, 24),
            focus: Focus::Composer,
            overlay: None,
            approvals: VecDeque::new(),
            mouse_capture: config.mouse_capture,
            running: false,
            retrying: false,
            turn: 0,
            totals: Totals::default(),
            queued_steering: Vec::new(),
            queued_follow_up: Vec::new(),
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            tool_execution: config.tool_execution,
            thinking: config.thinking,
            transcript: Transcript::default(),
            streaming_entry: None,
            call_entries: HashMap::new(),
            cards: HashMap::new(),
            expand_thinking: false,
            chat: ChatScroll {
                follow: true,
                top: 0,
                unseen: false,
            },
            highlights: HighlightCache::default(),
            pending_highlights: HashMap::new(),
            last_stream_highlight: None,
            calls: CallTree::default(),
            tree_selected: None,
            subagents: Vec::new(),
            mcp_servers: Vec::new(),
            subagents_seen: Vec::new(),
            cron: Vec::new(),
            pending_notifications: 0,
            session_id: None,
            switching_session: false,
            dashboard_selected: 0,
            composer,
            files: None,
            files_requested: false,
            server_models: None,
            models_requested: false,
            last_steer: None,
            last_cancel: None,
            hint: None,
            spinner: 0,
            now: Instant::now(),
            clock_base: (Instant::now(), SystemTime::now()),
            dirty: true,
            input_changed: false,
            last_total_rows: 0,
            config,
        }
    }

    /// Pins the wall clock: `wall` is the time at `instant` (tests use this).
    pub fn set_clock(&mut self, instant: Instant, wall: SystemTime) {
        self.clock_base = (instant, wall);
        self.now = instant;
    }

    /// Wall-clock time of the last update.
    pub fn wall(&self) -> SystemTime {
        let (instant, wall) = self.clock_base;
        match self.now.checked_duration_since(instant) {
            Some(ahead) => wall + ahead,
            None => wall - instant.duration_since(self.now),
        }
    }

    /// How long subagent `i` has run, counting on from its last update while it works.
    pub fn subagent_elapsed(&self, i: usize) -> Duration {
        let Some(row) = self.subagents.get(i) else {
            return Duration::ZERO;
        };
        let since = self
            .subagents_seen
            .get(i)
            .map_or(Duration::ZERO, |t| self.now.saturating_duration_since(*t));
        match row.status {
            super::msg::SubagentStatus::Running => row.elapsed + since,
            _ => row.elapsed,
        }
    }

    /// Colours.
    pub fn theme(&self) -> &Theme {
        &self.config.theme
    }

    /// Whether something changed since the last frame.
    pub fn needs_draw(&self) -> bool {
        self.dirty
    }

    /// Whether the change came from the user (keys, paste, resize), which is drawn at the
    /// full frame rate; streamed output is drawn at a lower one.
    pub fn input_changed(&self) -> bool {
        self.input_changed
    }

    /// Whether work is going on (the spinner turns, times count up).
    pub fn busy(&self) -> bool {
        self.running
            || self.calls.any_running()
            || self
                .subagents
                .iter()
                .any(|s| s.status == super::msg::SubagentStatus::Running)
    }

    /// When the screen changes by itself next (a hint expiring, a cron countdown).
    pub fn next_deadline(&self) -> Option<Instant> {
        let hint = self.hint.as_ref().map(|(_, until)| *until);
        let cron = (!self.cron.is_empty()).then(|| self.now + Duration::from_secs(1));
        match (hint, cron) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The exactly-one state word of the status bar.
    pub fn state_word(&self) -> &'static str {
        if !self.running {
            "idle"
        } else if self.retrying {
            "retrying"
        } else if self.calls.any_running() {
            "running tools"
        } else {
            "streaming"
        }
    }

    /// The areas of the current frame.
    pub fn areas(&self) -> Areas {
        self.areas_in(self.size)
    }

    /// The areas in a screen of `size` (the view lays out the frame it is given, which
    /// can differ from the last size `update` saw for one frame after a resize).
    pub fn areas_in(&self, size: Rect) -> Areas {
        let queue_rows = u16::try_from(self.queued_steering.len() + self.queued_follow_up.len())
            .unwrap_or(u16::MAX);
        let composer_rows = self.composer.rows(size.width.saturating_sub(2));
        layout::areas(size, queue_rows, composer_rows, self.focus)
    }

    /// The chat's text area (inside its border).
    pub fn chat_inner(&self) -> Option<Rect> {
        self.areas().chat.map(layout::inner)
    }

    /// The first visible chat row.
    pub fn chat_top(&self, height: usize) -> usize {
        let max_top = self.transcript.total_rows().saturating_sub(height);
        if self.chat.follow {
            max_top
        } else {
            self.chat.top.min(max_top)
        }
    }

    /// Shows a status-bar hint for `for_how_long`.
    pub(super) fn set_hint(&mut self, text: impl Into<String>, for_how_long: Duration) {
        self.hint = Some((text.into(), self.now + for_how_long));
    }

    /// Brings the layout caches up to date before a frame; asks for highlights of the
    /// code on screen.
    pub(super) fn prepare_frame(&mut self) -> Vec<Effect> {
        self.dirty = false;
        self.input_changed = false;
        let mut effects = Vec::new();
        self.calls.refresh_rows();
        let Some(inner) = self.chat_inner() else {
            return effects;
        };
        let ctx = RenderCtx {
            theme: &self.config.theme,
            highlights: &self.highlights,
            cards: &self.cards,
            expand_thinking: self.expand_thinking,
        };
        let rendered = self.transcript.layout(inner.width, &ctx);
        let total = self.transcript.total_rows();
        if total > self.last_total_rows && !self.chat.follow {
            self.chat.unseen = true;
        }
        self.last_total_rows = total;
        let height = usize::from(inner.height);
        let top = self.chat_top(height);
        let visible = self.transcript.entries_in(top, height);
        let mut wanted: Vec<(usize, Vec<_>)> = Vec::new();
        for (entry, requests) in rendered {
            if Some(entry) == self.streaming_entry {
                // While an answer streams, only its newest code block is highlighted, at
                // most a few times a second: each result re-renders the whole answer, and
                // a fast stream would otherwise highlight every block it scrolls past.
                let newest = requests
                    .into_iter()
                    .rev()
                    .find(|r| !self.pending_highlights.contains_key(&r.key));
                let due = self
                    .last_stream_highlight
                    .is_none_or(|t| self.now.saturating_duration_since(t) >= STREAM_HIGHLIGHT_GAP);
                if let Some(request) = newest.filter(|_| due) {
                    self.last_stream_highlight = Some(self.now);
                    wanted.push((entry, vec![request]));
                }
            } else if visible.contains(&entry) {
                wanted.push((entry, requests));
            }
        }
        wanted.extend(self.transcript.missing_highlights(visible, &ctx));
        for (entry, requests) in wanted {
            self.transcript.highlights_requested(entry);
            for request in requests {
                let waiting = self.pending_highlights.entry(request.key).or_default();
                let first = waiting.is_empty();
                if !waiting.contains(&entry) {
                    waiting.push(entry);
                }
                if first {
                    effects.push(Effect::Highlight(request));
                }
            }
        }
        // A streamed answer that just ended gets its final rendering in the next frame.
        if self.transcript.finishing() {
            self.dirty = true;
        }
        effects
    }
}
