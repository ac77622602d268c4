//! What the client is configured with at start: the launcher fills it from the
//! settings, tests from what they need; `App::new` hands each part its share.

use super::UserFiles;
use crate::layout::PaneMode;
use crate::theme::Theme;
use claw_agent::{ThinkingLevel, ToolExecution};
use claw_runtime::keymap::KeyMap;

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
    /// The provider's configured context window; `None`: the built-in table's for the
    /// model.
    pub context_window: Option<u64>,
    /// Models whose prices the configuration gives (others: the built-in list).
    pub priced_models: Vec<String>,
    /// The model costs nothing (the offline demo).
    pub offline: bool,
    /// The provider's base URL, for `/status` (`None`: the API's default).
    pub base_url: Option<String>,
    /// How commands are sandboxed, in words, for `/status`.
    pub sandbox: String,
    /// The theme names `/theme` offers.
    pub themes: Vec<String>,
    /// `[compaction]` (the `ctx` figure warns above its threshold).
    pub compaction: claw_agent::CompactionSettings,
    /// The workspace as shown (home shortened to `~`).
    pub workspace: String,
    /// Thinking level at start.
    pub thinking: ThinkingLevel,
    /// Tool execution mode at start.
    pub tool_execution: ToolExecution,
    /// How the steering and follow-up queues are taken at start.
    pub queue_modes: (claw_agent::QueueMode, claw_agent::QueueMode),
    /// Whether the mouse is captured at start.
    pub mouse_capture: bool,
    /// Whether the tool tree and the dashboard show (`[ui] panes`).
    pub panes: PaneMode,
    /// Whether the terminal tells Shift+Enter from Enter (the keys line offers another
    /// newline key when it does not).
    pub shift_enter: bool,
    /// The config file and where each setting came from (`/settings`, `/status`).
    pub config_info: crate::settings::ConfigInfo,
    /// Time zone for clock times; `None`: the system's local time.
    pub time_zone: Option<chrono::FixedOffset>,
    /// Skills, instructions files and custom commands found at start.
    pub user_files: UserFiles,
    /// Whether the main agent starts in plan mode (`--plan`).
    pub plan: bool,
}

impl AppConfig {
    /// The configuration of a client for `model` of `provider`: the built-in dark theme,
    /// the default keys, mouse capture on, local time, and nothing else known yet (the
    /// launcher fills in what the settings say).
    pub fn new(provider: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            theme: Theme::fallback(),
            keymap: KeyMap::default(),
            provider: provider.into(),
            model: model.into(),
            models: Vec::new(),
            context_window: None,
            priced_models: Vec::new(),
            offline: false,
            base_url: None,
            sandbox: String::new(),
            themes: crate::theme::BUILTIN_THEMES
                .iter()
                .map(|(name, _)| (*name).to_owned())
                .collect(),
            compaction: claw_agent::CompactionSettings::default(),
            workspace: String::new(),
            thinking: ThinkingLevel::Off,
            tool_execution: ToolExecution::Parallel,
            queue_modes: Default::default(),
            mouse_capture: true,
            panes: PaneMode::Auto,
            shift_enter: true,
            config_info: crate::settings::ConfigInfo::default(),
            time_zone: None,
            user_files: UserFiles::default(),
            plan: false,
        }
    }
}
