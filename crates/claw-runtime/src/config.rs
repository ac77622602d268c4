//! Configuration: the TOML file, the environment and the flags, resolved into `Settings`.
//!
//! Precedence is flags > environment > file > defaults.

use crate::agent::{
    CompactionSettings, DEFAULT_MAX_TURNS, QueueMode, ThinkingLevel, ToolExecution,
};
use crate::mcp::McpSection;
use crate::tools::ToolsConfig;
use crate::tools::exec::ExecConfig;
use crate::tools::web::WebConfig;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod acp;
mod compaction;
mod flags;
mod provider;
pub mod save;
mod ui;
pub use acp::AcpSection;
pub use compaction::CompactionSection;
pub use flags::Flags;
pub use provider::{Api, CompatConfig, PriceConfig, ProviderEntry, ProviderSpec};
pub use ui::{Colors, Panes, UiSection};

pub use crate::llm::demo::DEMO_MODEL;

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read the config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has a wrong key or value.
    #[error(
        "invalid config file {path}, line {line}: {message}\n  {line}| {text}\nFix or remove that line."
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// The text of that line.
        text: String,
        /// What is wrong (names the key).
        message: String,
    },
    /// The settings contradict each other.
    #[error("{0}")]
    Invalid(String),
    /// The provider needs an API key and none is set (the ACP agent offers this as an
    /// authentication method: which variable to set).
    #[error(
        "provider \"{provider}\" needs an API key: set {key_var}, or set api_key_env in \
         [providers.{provider}] of {} (a custom --base-url for a local server needs no key)",
        config_path.display()
    )]
    MissingKey {
        /// The provider's name.
        provider: String,
        /// The variable its key is read from.
        key_var: String,
        /// The config file that could name another variable or hold the key.
        config_path: PathBuf,
    },
}

/// `[agent]` settings.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSection {
    /// Turn limit per run.
    pub max_turns: Option<u32>,
    /// `sequential` or `parallel`.
    pub tool_execution: Option<ToolExecution>,
    /// How many steering messages one tool boundary takes: `one-at-a-time` or `all`.
    pub steering_mode: Option<QueueMode>,
    /// How many follow-up messages one stop takes: `one-at-a-time` or `all`.
    pub follow_up_mode: Option<QueueMode>,
    /// Thinking level.
    pub thinking: Option<ThinkingLevel>,
    /// Extra instructions appended to the system prompt.
    pub instructions: Option<String>,
    /// LLM idle timeout in seconds.
    pub idle_timeout_secs: Option<u64>,
    /// Longest one LLM call may take, in seconds (default 1800).
    pub request_timeout_secs: Option<u64>,
}

/// The config file as written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Provider used when no flag says otherwise.
    pub provider: Option<String>,
    /// Colour theme (older spelling of `[ui] theme`).
    pub theme: Option<String>,
    /// `[ui]`: theme, mouse capture and the side panes.
    #[serde(default)]
    pub ui: UiSection,
    /// `[keys]`: action = key or list of keys, checked when the file is read.
    #[serde(default)]
    pub keys: toml::Table,
    /// Agent loop settings.
    #[serde(default)]
    pub agent: AgentSection,
    /// `[compaction]`: when and how long histories are summarised.
    #[serde(default)]
    pub compaction: CompactionSection,
    /// Named providers.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderEntry>,
    /// `[tools]`: disabled tools, workspace confinement.
    #[serde(default)]
    pub tools: ToolsConfig,
    /// `[exec]`: sandbox, approval, time limits.
    #[serde(default)]
    pub exec: ExecConfig,
    /// `[web]`: search key and base URL, fetch allow-list.
    #[serde(default)]
    pub web: WebConfig,
    /// `[mcp.servers.NAME]`: the user's MCP servers.
    #[serde(default)]
    pub mcp: McpSection,
    /// `[hooks]`: the user's commands around tool calls, prompts and idle times.
    #[serde(default)]
    pub hooks: crate::hooks::HooksConfig,
    /// `[session]`: what is recorded beside each session file.
    #[serde(default)]
    pub session: SessionSection,
    /// `[acp]`: what `claw-tui acp` takes from the editor.
    #[serde(default)]
    pub acp: AcpSection,
}

/// `[session]` settings.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSection {
    /// Record every event beside the session (`<session>.events.jsonl`, for
    /// `claw-tui replay`); default true.
    pub record_events: Option<bool>,
    /// Record every LLM request beside the session (`<session>.requests.jsonl`, for
    /// the request inspector); default true.
    pub record_requests: Option<bool>,
    /// What `write_file` and `edit_file` do when a file's content cannot be kept for
    /// `/undo` before they change it: warn (the default) or refuse.
    pub checkpoint_failure: Option<crate::checkpoint::CheckpointFailure>,
}

impl SessionSection {
    /// Whether the event log is written.
    pub fn records_events(&self) -> bool {
        self.record_events.unwrap_or(true)
    }

    /// Whether the request log is written.
    pub fn records_requests(&self) -> bool {
        self.record_requests.unwrap_or(true)
    }
}

/// Everything resolved: what the app runs with.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The provider.
    pub provider: ProviderSpec,
    /// Directory the tools work in.
    pub workspace: PathBuf,
    /// Thinking level.
    pub thinking: ThinkingLevel,
    /// Tool execution mode.
    pub tool_execution: ToolExecution,
    /// How the steering queue is taken.
    pub steering_mode: QueueMode,
    /// How the follow-up queue is taken.
    pub follow_up_mode: QueueMode,
    /// Turn limit per run.
    pub max_turns: u32,
    /// Colour theme name.
    pub theme: String,
    /// Whether `--theme` or a config file named the theme; otherwise the client picks
    /// light or dark by the terminal's background.
    pub theme_chosen: bool,
    /// Approve tool calls that would ask.
    pub yes: bool,
    /// Start the workspace's `.mcp.json` servers without asking (`--trust-project-mcp`).
    pub trust_project_mcp: bool,
    /// Start the main agent in plan mode (`--plan`).
    pub plan: bool,
    /// Extra system prompt instructions.
    pub instructions: Option<String>,
    /// LLM idle timeout in seconds.
    pub idle_timeout_secs: u64,
    /// Longest one LLM call may take, in seconds, however long the server keeps the
    /// stream alive.
    pub request_timeout_secs: u64,
    /// When and how the history is compacted (`[compaction]`).
    pub compaction: CompactionSettings,
    /// Milliseconds between the demo model's chunks (`CLAW_TUI_DEMO_PACE_MS`).
    pub demo_pace_ms: u64,
    /// The config file read (or that would have been read).
    pub config_path: PathBuf,
    /// Where sessions and cron jobs live.
    pub data_dir: PathBuf,
    /// Where logs go.
    pub state_dir: PathBuf,
    /// `[tools]`, `[exec]`, `[web]` tables for the tools.
    pub file: FileConfig,
    /// Problems worth telling the user that do not stop the app.
    pub warnings: Vec<String>,
}

/// The platform directories: (config file, data dir, state dir).
pub fn default_paths() -> (PathBuf, PathBuf, PathBuf) {
    match directories::ProjectDirs::from("", "", "claw-tui") {
        Some(dirs) => (
            dirs.config_dir().join("config.toml"),
            dirs.data_dir().to_path_buf(),
            dirs.state_dir().unwrap_or(dirs.data_dir()).to_path_buf(),
        ),
        None => {
            let base = std::env::temp_dir().join("claw-tui");
            (
                base.join("config.toml"),
                base.join("data"),
                base.join("state"),
            )
        }
    }
}

/// Reads and parses a config file; a missing file is an empty config.
pub fn load_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileConfig::default()),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    parse_file(path, &text)
}

/// Parses config text; errors name the file, the line and the key.
pub fn parse_file(path: &Path, text: &str) -> Result<FileConfig, ConfigError> {
    let file: FileConfig = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        parse_error(path, text, offset, e.message())
    })?;
    ui::check_keys(path, text, &file)?;
    check_mcp_names(path, text, &file)?;
    Ok(file)
}

/// Server names become part of tool names: refuses one providers would not accept,
/// pointing at its table.
fn check_mcp_names(path: &Path, text: &str, file: &FileConfig) -> Result<(), ConfigError> {
    for name in file.mcp.servers.keys() {
        if let Err(error) = crate::mcp::config::check_server_name(name) {
            let offset = [
                format!("[mcp.servers.{name}]"),
                format!("[mcp.servers.\"{name}\"]"),
            ]
            .iter()
            .find_map(|header| text.find(header.as_str()))
            .unwrap_or(0);
            return Err(parse_error(path, text, offset, &error.to_string()));
        }
    }
    Ok(())
}

/// A `Parse` error at byte `offset` of `text`.
fn parse_error(path: &Path, text: &str, offset: usize, message: &str) -> ConfigError {
    let line = text[..offset.min(text.len())].matches('\n').count() + 1;
    ConfigError::Parse {
        path: path.to_path_buf(),
        line,
        text: text
            .lines()
            .nth(line - 1)
            .unwrap_or_default()
            .trim_end()
            .to_owned(),
        message: message.trim().to_owned(),
    }
}

/// Resolves the flags, the environment (`env` looks a variable up) and the config file.
pub fn resolve(
    flags: &Flags,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Settings, ConfigError> {
    let (default_config, data_dir, state_dir) = default_paths();
    // The default file may well not exist (defaults then); a file named on the command
    // line must: a typo would otherwise run on defaults and say nothing.
    if let Some(named) = flags.config.as_deref().filter(|path| !path.exists()) {
        return Err(ConfigError::Invalid(format!(
            "config file {} does not exist (--config names a file to read; without it, \
             {} is read when it exists)",
            named.display(),
            default_config.display()
        )));
    }
    let config_path = flags.config.clone().unwrap_or(default_config);
    let mut file = load_file(&config_path)?;
    file.exec.validate().map_err(|e| {
        ConfigError::Invalid(format!(
            "invalid config file {}: {e}",
            config_path.display()
        ))
    })?;
    // A provider key read from a variable of any name is a secret for `exec` too.
    let key_vars: Vec<String> = file
        .providers
        .values()
        .filter_map(|p| p.api_key_env.clone())
        .collect();
    file.exec.scrub_env.extend(key_vars);
    let mut warnings = Vec::new();
    let provider = provider::resolve_provider(flags, env, &file, &config_path, &mut warnings)?;
    let workspace = match &flags.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| {
            ConfigError::Invalid(format!(
                "cannot read the current directory: {e}; pass --workspace DIR"
            ))
        })?,
    };
    let workspace = workspace.canonicalize().map_err(|e| {
        ConfigError::Invalid(format!(
            "workspace {} is not usable: {e}",
            workspace.display()
        ))
    })?;
    if !workspace.is_dir() {
        return Err(ConfigError::Invalid(format!(
            "workspace {} is not a directory",
            workspace.display()
        )));
    }
    Ok(Settings {
        workspace,
        thinking: flags.thinking.or(file.agent.thinking).unwrap_or_default(),
        tool_execution: flags
            .tool_execution
            .or(file.agent.tool_execution)
            .unwrap_or_default(),
        steering_mode: file.agent.steering_mode.unwrap_or_default(),
        follow_up_mode: file.agent.follow_up_mode.unwrap_or_default(),
        max_turns: flags
            .max_turns
            .or(file.agent.max_turns)
            .unwrap_or(DEFAULT_MAX_TURNS),
        theme: flags
            .theme
            .clone()
            .or_else(|| file.ui.theme.clone())
            .or_else(|| file.theme.clone())
            .unwrap_or_else(|| "dark".into()),
        theme_chosen: flags.theme.is_some() || file.ui.theme.is_some() || file.theme.is_some(),
        yes: flags.yes,
        trust_project_mcp: flags.trust_project_mcp,
        plan: flags.plan,
        instructions: file.agent.instructions.clone(),
        idle_timeout_secs: file.agent.idle_timeout_secs.unwrap_or(120),
        request_timeout_secs: file.agent.request_timeout_secs.unwrap_or(30 * 60),
        compaction: file.compaction.settings(),
        demo_pace_ms: env("CLAW_TUI_DEMO_PACE_MS")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(4),
        provider,
        config_path,
        data_dir,
        state_dir,
        file,
        warnings,
    })
}
