//! The root of the Elm-style client: `App` owns one part per piece of the screen
//! (composer, chat, tool tree, dashboard, status, overlays, approvals), routes each
//! `Msg` to the parts it concerns, applies what the parts ask of each other, and
//! returns the effects for the runtime. It does no I/O; `view` draws it without
//! changing it.
//!
//! Each part says whether what it shows changed (`Handled::changed`); the root only
//! collects that into one "a frame is due" flag, which the frame clears.

mod about;
mod agent;
mod checkpoints;
mod commands;
mod config;
mod control;
mod farewell;
mod inspect;
mod quit;
mod route;
mod sessions;
mod settings;
mod shell;
mod steer;
mod subagents;
mod user_files;
mod view;

pub use config::AppConfig;
pub use farewell::{Farewell, farewell};
pub(crate) use inspect::inspect_requests;
pub use user_files::UserFiles;
pub use view::view;

use super::approval::ApprovalQueue;
use super::chat::{CardInfo, Chat, ChatFrame};
use super::composer::Composer;
use super::dashboard::Dashboard;
use super::highlight::HighlightStore;
use super::layout::{self, Areas, Focus, PaneMode, Side};
use super::msg::{Effect, Msg};
use super::overlay::{Overlay, Overlays};
use super::part::{HINT, Handled, Intent};
use super::status::{Status, StatusConfig};
use super::tool_tree::ToolTree;
use crate::theme::Theme;
use claw_runtime::keymap::KeyMap;
use ratatui::layout::Rect;
use std::time::{Duration, Instant, SystemTime};

/// A second press of Esc within this long after a steer does not interrupt; a second
/// Ctrl+C within this long quits.
pub const DOUBLE_PRESS: Duration = Duration::from_secs(1);

/// The session shown, and whether a switch to another one is under way.
#[derive(Clone, Debug, Default)]
struct SessionState {
    /// The session being recorded (`None` with `--no-session`).
    id: Option<String>,
    /// Its file.
    path: Option<std::path::PathBuf>,
    /// A switch is under way: input waits for it.
    switching: bool,
}

/// The whole state of the terminal client.
#[derive(Clone, Debug)]
pub struct App {
    theme: Theme,
    keymap: KeyMap,
    size: Rect,
    focus: Focus,
    composer: Composer,
    chat: Chat,
    tools: ToolTree,
    dashboard: Dashboard,
    status: Status,
    overlays: Overlays,
    approvals: ApprovalQueue,
    highlights: HighlightStore,
    session: SessionState,
    mouse_capture: bool,
    /// Whether the side panes show (the setting, then the toggle key).
    panes: PaneMode,
    /// Whether the terminal tells Shift+Enter from Enter.
    shift_enter: bool,
    /// The config file and the settings' origins.
    config_info: crate::settings::ConfigInfo,
    last_steer: Option<Instant>,
    last_cancel: Option<Instant>,
    /// Spinner frame.
    spinner: usize,
    /// The time of the last update, for elapsed times.
    now: Instant,
    clock_base: (Instant, SystemTime),
    /// A part changed since the last frame.
    redraw: bool,
    /// The change came from the user (keys, paste, resize): drawn sooner than output.
    input_changed: bool,
    /// A plan was answered in plan mode: Enter on an empty composer offers to
    /// implement it.
    plan_ready: bool,
    /// Shell commands the user ran, and their output waiting for the next message.
    shells: shell::Shells,
    /// Skills, instructions files and custom commands.
    user_files: UserFiles,
    /// What `/status` says about the rest of the configuration.
    about: About,
    /// Subagents' conversations, and the one shown in the chat pane.
    subagents: subagents::Subagents,
}

/// What `/status` shows besides the parts' state.
#[derive(Clone, Debug, Default)]
struct About {
    base_url: Option<String>,
    sandbox: String,
}

impl App {
    /// A fresh app with `config`, sized 80×24 until the first resize.
    pub fn new(config: AppConfig) -> Self {
        let now = Instant::now();
        let mut composer = Composer::new(config.models, config.model.clone());
        composer.set_themes(config.themes);
        composer.set_custom_commands(config.user_files.popup_entries());
        Self {
            composer,
            chat: Chat::default(),
            tools: ToolTree::default(),
            dashboard: Dashboard::new(config.time_zone),
            status: Status::new(StatusConfig {
                provider: config.provider,
                model: config.model,
                context_window: config.context_window,
                priced_models: config.priced_models,
                offline: config.offline,
                compaction: config.compaction,
                workspace: config.workspace,
                thinking: config.thinking,
                tool_execution: config.tool_execution,
                queue_modes: config.queue_modes,
                plan: config.plan,
            }),
            overlays: Overlays::default(),
            approvals: ApprovalQueue::default(),
            highlights: HighlightStore::default(),
            session: SessionState::default(),
            theme: config.theme,
            keymap: config.keymap,
            size: Rect::new(0, 0, 80, 24),
            focus: Focus::Composer,
            mouse_capture: config.mouse_capture,
            panes: config.panes,
            shift_enter: config.shift_enter,
            config_info: config.config_info,
            last_steer: None,
            last_cancel: None,
            spinner: 0,
            now,
            clock_base: (now, SystemTime::now()),
            redraw: true,
            input_changed: false,
            user_files: config.user_files,
            plan_ready: false,
            shells: shell::Shells::default(),
            about: About {
                base_url: config.base_url,
                sandbox: config.sandbox,
            },
            subagents: subagents::Subagents::default(),
        }
    }

    /// Applies a message at the current time; returns what the runtime must do.
    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        self.update_at(msg, Instant::now())
    }

    /// Applies a message as if it arrived at `now` (replays and tests control the clock
    /// this way).
    pub fn update_at(&mut self, msg: Msg, now: Instant) -> Vec<Effect> {
        self.now = now;
        let hint_expired = self.status.expire_hint(now);
        let from_user = matches!(msg, Msg::Term(_));
        let handled = match msg {
            Msg::Frame => return self.prepare_frame(),
            msg => self.route(msg),
        };
        let mut handled = handled.and(Handled::changed_if(hint_expired));
        // What the parts asked of each other; applying it may ask for more.
        loop {
            let intents = std::mem::take(&mut handled.intents);
            if intents.is_empty() {
                break;
            }
            for intent in intents {
                let more = self.apply(intent);
                handled.absorb(more);
            }
        }
        if handled.changed {
            self.redraw = true;
            self.input_changed |= from_user;
        }
        handled.effects
    }

    /// Does what a part asked for.
    fn apply(&mut self, intent: Intent) -> Handled {
        match intent {
            Intent::Hint(text, how_long) => self.hint(text, how_long),
            Intent::Open(overlay) => self.overlays.push(overlay),
            Intent::OpenDetail(call_id) => self.open_detail(call_id),
            Intent::Cancel => self.cancel(),
            Intent::Submit => self.submit(),
            Intent::OpenSession { path, fork } => self.open_session(path, fork),
            Intent::Notice(level, text) => self.chat.notice(level, text),
            Intent::ExpandCard(id) => self.expand_card(&id),
            Intent::OpenSubagent(id) => self.open_subagent(id),
            Intent::CopyOutput(id) => self.copy_output(&id),
            Intent::SaveSettings => self.save_settings(),
        }
    }

    /// Shows all of a call's output on its card, or folds it again.
    fn expand_card(&mut self, id: &str) -> Handled {
        let expanded = self.chat.toggle_expanded(id);
        let handled = self.refresh_card(id);
        let diff = matches!(
            self.chat.card(id).map(|c| &c.body),
            Some(crate::chat::CardBody::Diff { .. })
        );
        let what = match (diff, expanded) {
            (true, true) => "the whole diff shown",
            (true, false) => "diff folded",
            (false, true) => "all output shown",
            (false, false) => "output folded",
        };
        handled.and(self.hint(what, HINT))
    }

    /// Copies a call's whole output (its result, or what it printed so far).
    fn copy_output(&mut self, id: &str) -> Handled {
        let Some(node) = self.tools.node(id) else {
            return Handled::unchanged();
        };
        let text = match &node.result {
            Some(result) => result.content().to_owned(),
            None => node.live.iter().cloned().collect::<Vec<_>>().join("\n"),
        };
        self.hint("output sent to the clipboard (OSC 52)", HINT)
            .with(Effect::Copy(text))
    }

    /// Shows a status-bar hint for `how_long`.
    fn hint(&mut self, text: impl Into<String>, how_long: Duration) -> Handled {
        self.status.set_hint(text.into(), self.now + how_long);
        Handled::changed()
    }

    /// Brings the layout caches up to date before a frame; asks for highlights of the
    /// code on screen.
    fn prepare_frame(&mut self) -> Vec<Effect> {
        self.redraw = false;
        self.input_changed = false;
        self.tools.prepare();
        let Some(inner) = self.areas().chat.map(layout::inner) else {
            return Vec::new();
        };
        let expand_key = self
            .keymap
            .label(claw_runtime::keymap::Action::ExpandOutput);
        let frame = ChatFrame {
            theme: &self.theme,
            now: self.now,
            spinner: self.spinner,
            expand_key: &expand_key,
        };
        let chat = match self.subagents.shown_mut() {
            Some(chat) => chat,
            None => &mut self.chat,
        };
        let handled = chat.prepare(inner, &mut self.highlights, &frame);
        self.redraw = handled.changed;
        handled.effects
    }

    /// Pins the wall clock: `wall` is the time at `instant` (replays and tests use this).
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

    /// The time of the last update.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The terminal size.
    pub fn size(&self) -> Rect {
        self.size
    }

    /// The focused pane.
    pub fn focus(&self) -> Focus {
        self.focus
    }

    /// The composer.
    pub fn composer(&self) -> &Composer {
        &self.composer
    }

    /// The chat.
    pub fn chat(&self) -> &Chat {
        &self.chat
    }

    /// The tool-call tree.
    pub fn tools(&self) -> &ToolTree {
        &self.tools
    }

    /// The dashboard.
    pub fn dashboard(&self) -> &Dashboard {
        &self.dashboard
    }

    /// The run, its settings and the queues.
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// The overlay that has the keys, if one is open.
    pub fn overlay(&self) -> Option<&Overlay> {
        self.overlays.top()
    }

    /// Approval requests waiting for an answer.
    pub fn approvals(&self) -> &ApprovalQueue {
        &self.approvals
    }

    /// The session shown (`None` when sessions are off).
    pub fn session_id(&self) -> Option<&str> {
        self.session.id.as_deref()
    }

    /// Whether something changed since the last frame.
    pub fn needs_draw(&self) -> bool {
        self.redraw
    }

    /// Whether the change came from the user (keys, paste, resize), which is drawn at the
    /// full frame rate; streamed output is drawn at a lower one.
    pub fn input_changed(&self) -> bool {
        self.input_changed
    }

    /// Whether work is going on (the spinner turns, times count up).
    pub fn busy(&self) -> bool {
        self.status.running() || self.tools.any_running() || self.dashboard.busy()
    }

    /// When the screen changes by itself next (a hint expiring, a cron countdown).
    pub fn next_deadline(&self) -> Option<Instant> {
        let hint = self.status.hint_until();
        let cron = self
            .dashboard_counts_down()
            .then(|| self.now + Duration::from_secs(1));
        match (hint, cron) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether the dashboard shows countdowns that change every second: only while it is
    /// on screen (a hidden tab or a terminal too small costs no redraws).
    pub fn dashboard_counts_down(&self) -> bool {
        self.dashboard.counts_down(self.areas().dashboard.is_some())
    }

    /// Whether the chat pane is off screen (another tab of the narrow layout).
    fn chat_hidden(&self) -> bool {
        self.areas().chat.is_none()
    }

    /// The exactly-one state word of the status bar.
    pub fn state_word(&self) -> &'static str {
        self.status.state_word(self.tools.any_running())
    }

    /// The status bar's text pieces, left to right.
    pub fn status_parts(&self) -> Vec<String> {
        self.status.parts(self.tools.any_running())
    }

    /// The areas of the current frame.
    pub fn areas(&self) -> Areas {
        self.areas_in(self.size)
    }

    /// The areas in a screen of `size` (the view lays out the frame it is given, which
    /// can differ from the last size `update` saw for one frame after a resize).
    pub fn areas_in(&self, size: Rect) -> Areas {
        let composer_rows = self.composer.rows(size.width.saturating_sub(2));
        let side = self.side(size.width);
        layout::areas(
            size,
            self.status.queue_rows(),
            composer_rows,
            self.focus,
            side,
        )
    }

    /// Where the side panes go in a terminal `width` columns wide.
    fn side(&self, width: u16) -> Side {
        let busy = !self.tools.calls().is_empty() || self.dashboard.has_rows();
        self.panes.side(width, busy)
    }

    /// Rows of the chat's text area.
    fn chat_height(&self) -> usize {
        let rows = self
            .areas()
            .chat
            .map_or(1, |a| usize::from(layout::inner(a).height));
        self.subagents.chat(&self.chat).text_rows(rows).max(1)
    }

    /// Shows the call's current state on its card (and the answer that has it).
    fn refresh_card(&mut self, id: &str) -> Handled {
        let expanded = self.chat.is_expanded(id);
        match self.tools.node(id).map(|n| CardInfo::of(n, expanded)) {
            Some(card) => self.chat.set_card(id, card),
            None => Handled::unchanged(),
        }
    }
}
