//! The `[hooks]` section: `[[hooks.before_tool]]`, `[[hooks.after_tool]]`,
//! `[[hooks.prompt]]`, `[[hooks.stop]]` and `[[hooks.notify]]` entries, each a command
//! run with `sh -c` in the workspace.

use serde::{Deserialize, Deserializer};

/// How long a hook may run when its entry gives no `timeout_secs`.
pub const DEFAULT_TIMEOUT_SECS: u64 = 10;

/// A regular expression on tool names (`match = "exec|write_file"`), checked when the
/// config file is read.
#[derive(Clone, Debug)]
pub struct ToolMatch(regex::Regex);

impl ToolMatch {
    /// Whether the tool `name` matches (anywhere in the name, as regexes do; anchor with
    /// `^...$` for an exact name).
    pub fn is_match(&self, name: &str) -> bool {
        self.0.is_match(name)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl PartialEq for ToolMatch {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl<'de> Deserialize<'de> for ToolMatch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let pattern = String::deserialize(deserializer)?;
        regex::Regex::new(&pattern).map(ToolMatch).map_err(|e| {
            serde::de::Error::custom(format!("`match` is not a valid regular expression: {e}"))
        })
    }
}

/// One `[[hooks.before_tool]]` or `[[hooks.after_tool]]` entry.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolHook {
    /// The command, run with `sh -c` in the workspace.
    pub command: String,
    /// The tools it is for (a regex on the name); every tool when absent.
    #[serde(default, rename = "match")]
    pub matcher: Option<ToolMatch>,
    /// Seconds it may run (default 10); then it and everything it started are killed.
    pub timeout_secs: Option<u64>,
}

impl ToolHook {
    /// Whether this entry is for the tool `name`.
    pub fn applies_to(&self, name: &str) -> bool {
        self.matcher.as_ref().is_none_or(|m| m.is_match(name))
    }
}

/// One `[[hooks.prompt]]`, `[[hooks.stop]]` or `[[hooks.notify]]` entry.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventHook {
    /// The command, run with `sh -c` in the workspace.
    pub command: String,
    /// Seconds it may run (default 10).
    pub timeout_secs: Option<u64>,
}

/// The `[hooks]` section of the config file: each list runs in order.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    /// Before a tool call runs: may block it or rewrite its arguments.
    pub before_tool: Vec<ToolHook>,
    /// After a tool call ran: may replace its result.
    pub after_tool: Vec<ToolHook>,
    /// A user prompt is about to be sent: may block it or add context.
    pub prompt: Vec<EventHook>,
    /// The main agent went idle.
    pub stop: Vec<EventHook>,
    /// Something waits for the user: an approval, a subagent or cron job finished.
    pub notify: Vec<EventHook>,
}

impl HooksConfig {
    /// Every hook's command, in list order.
    pub fn commands(&self) -> impl Iterator<Item = &str> {
        self.before_tool
            .iter()
            .chain(&self.after_tool)
            .map(|h| h.command.as_str())
            .chain(
                self.prompt
                    .iter()
                    .chain(&self.stop)
                    .chain(&self.notify)
                    .map(|h| h.command.as_str()),
            )
    }

    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        self.before_tool.is_empty()
            && self.after_tool.is_empty()
            && self.prompt.is_empty()
            && self.stop.is_empty()
            && self.notify.is_empty()
    }
}

/// The command and time limit of any hook entry.
pub(crate) trait HookCommand {
    /// The command.
    fn command(&self) -> &str;
    /// Its time limit in seconds.
    fn timeout_secs(&self) -> u64;
}

impl HookCommand for ToolHook {
    fn command(&self) -> &str {
        &self.command
    }
    fn timeout_secs(&self) -> u64 {
        self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS).max(1)
    }
}

impl HookCommand for EventHook {
    fn command(&self) -> &str {
        &self.command
    }
    fn timeout_secs(&self) -> u64 {
        self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS).max(1)
    }
}
