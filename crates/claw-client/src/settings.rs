//! `/settings`: the settings the client runs with, where each came from, and saving the
//! ones changed in the client (`/theme`, `/model`, `/thinking`, `/tools`, the panes and
//! mouse keys) into the config file, its comments and layout kept. Pure: the runtime
//! writes the file (`Effect::SaveSettings`) and says how it went.

use crate::layout::PaneMode;
use crate::overlay::StatusRow;
use claw_agent::{QueueMode, ThinkingLevel, ToolExecution};
use claw_runtime::config::save::{SavedSetting, SettingValue};
use std::path::PathBuf;

/// Where a setting's value came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Origin {
    /// Nothing set it.
    #[default]
    Default,
    /// The config file.
    ConfigFile,
    /// A command-line flag or an environment variable.
    CommandLine,
    /// Picked by what the terminal said (the theme, by its background).
    Terminal,
}

impl Origin {
    fn words(self) -> &'static str {
        match self {
            Origin::Default => "default",
            Origin::ConfigFile => "config file",
            Origin::CommandLine => "command line or environment",
            Origin::Terminal => "the terminal's background",
        }
    }
}

/// The settings the client can change, as one start of it has them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Choices {
    /// Colour theme.
    pub theme: String,
    /// The side panes.
    pub panes: PaneMode,
    /// Mouse capture.
    pub mouse: bool,
    /// Model id.
    pub model: String,
    /// Thinking level.
    pub thinking: ThinkingLevel,
    /// How a message's tool calls run.
    pub tool_execution: ToolExecution,
    /// How the steering queue is taken.
    pub steering_mode: QueueMode,
    /// How the follow-up queue is taken.
    pub follow_up_mode: QueueMode,
}

/// Where each of [`Choices`] came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Origins {
    /// Of the theme.
    pub theme: Origin,
    /// Of the panes.
    pub panes: Origin,
    /// Of mouse capture.
    pub mouse: Origin,
    /// Of the model.
    pub model: Origin,
    /// Of the thinking level.
    pub thinking: Origin,
    /// Of the tool execution mode.
    pub tool_execution: Origin,
    /// Of the steering queue's mode.
    pub steering_mode: Origin,
    /// Of the follow-up queue's mode.
    pub follow_up_mode: Origin,
}

/// What the client knows of its configuration: the file, what it started with and from
/// where.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigInfo {
    /// The config file (`None`: unknown, as in tests and replays).
    pub path: Option<PathBuf>,
    /// Whether it existed and was read.
    pub found: bool,
    /// The provider entry the model belongs to (`[providers.NAME]`).
    pub provider: String,
    /// The settings at start.
    pub started: Choices,
    /// Where they came from.
    pub origins: Origins,
}

/// One setting: its name in the file, its value now and what the user sees of where it
/// came from.
struct Row {
    table: Vec<String>,
    key: &'static str,
    now: SettingValue,
    changed: bool,
    origin: Origin,
}

fn text(value: impl serde::Serialize) -> SettingValue {
    let shown = serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    SettingValue::Text(shown)
}

fn panes_word(mode: PaneMode) -> &'static str {
    match mode {
        PaneMode::Auto => "auto",
        PaneMode::Shown => "show",
        PaneMode::Hidden => "hide",
    }
}

impl ConfigInfo {
    fn rows(&self, now: &Choices) -> Vec<Row> {
        let (s, o) = (&self.started, &self.origins);
        let ui = || vec!["ui".to_owned()];
        let agent = || vec!["agent".to_owned()];
        vec![
            Row {
                table: ui(),
                key: "theme",
                now: SettingValue::Text(now.theme.clone()),
                changed: now.theme != s.theme,
                origin: o.theme,
            },
            Row {
                table: ui(),
                key: "panes",
                now: SettingValue::Text(panes_word(now.panes).to_owned()),
                changed: now.panes != s.panes,
                origin: o.panes,
            },
            Row {
                table: ui(),
                key: "mouse",
                now: SettingValue::Flag(now.mouse),
                changed: now.mouse != s.mouse,
                origin: o.mouse,
            },
            Row {
                table: vec!["providers".to_owned(), self.provider.clone()],
                key: "model",
                now: SettingValue::Text(now.model.clone()),
                changed: now.model != s.model,
                origin: o.model,
            },
            Row {
                table: agent(),
                key: "thinking",
                now: text(now.thinking),
                changed: now.thinking != s.thinking,
                origin: o.thinking,
            },
            Row {
                table: agent(),
                key: "tool_execution",
                now: text(now.tool_execution),
                changed: now.tool_execution != s.tool_execution,
                origin: o.tool_execution,
            },
            Row {
                table: agent(),
                key: "steering_mode",
                now: text(now.steering_mode),
                changed: now.steering_mode != s.steering_mode,
                origin: o.steering_mode,
            },
            Row {
                table: agent(),
                key: "follow_up_mode",
                now: text(now.follow_up_mode),
                changed: now.follow_up_mode != s.follow_up_mode,
                origin: o.follow_up_mode,
            },
        ]
    }

    /// The rows `/settings` shows for the settings `now`.
    pub fn view_rows(&self, now: &Choices) -> Vec<StatusRow> {
        let file = match (&self.path, self.found) {
            (Some(path), true) => path.display().to_string(),
            (Some(path), false) => format!("{} (not there yet: defaults)", path.display()),
            (None, _) => "none".to_owned(),
        };
        let mut rows = vec![
            StatusRow::new("Config file", ""),
            StatusRow::new("path", file),
        ];
        let mut changed = 0;
        let mut table = None;
        for row in self.rows(now) {
            // A title per table of the file, the keys under it.
            if table.as_ref() != Some(&row.table) {
                let title = format!("[{}]", row.table.join("."));
                rows.push(StatusRow::new(title, ""));
                table = Some(row.table.clone());
            }
            let value = match &row.now {
                SettingValue::Text(t) => t.clone(),
                SettingValue::Flag(b) => b.to_string(),
            };
            let from = if row.changed {
                changed += 1;
                "changed here, not saved".to_owned()
            } else {
                row.origin.words().to_owned()
            };
            rows.push(StatusRow::new(row.key, format!("{value}   ({from})")));
        }
        rows.push(StatusRow::new("", ""));
        rows.push(StatusRow::new(
            if changed > 0 {
                "s saves what changed here into the config file (its comments kept) · Esc closes"
            } else {
                "Nothing changed here: /theme, /model, /thinking, /tools, /steering, /followup, F4 and F12 change settings"
            },
            "",
        ));
        rows
    }

    /// The settings changed in the client since start, as the file would hold them.
    pub fn changed(&self, now: &Choices) -> Vec<SavedSetting> {
        self.rows(now)
            .into_iter()
            .filter(|r| r.changed)
            .map(|r| SavedSetting {
                table: r.table,
                key: r.key.to_owned(),
                value: r.now,
            })
            .collect()
    }

    /// The settings were saved: what changed is now the config file's, and all of them
    /// are what the client starts with from now on.
    pub fn saved(&mut self, now: &Choices) {
        let (s, file) = (&self.started, &mut self.origins);
        for (changed, origin) in [
            (now.theme != s.theme, &mut file.theme),
            (now.panes != s.panes, &mut file.panes),
            (now.mouse != s.mouse, &mut file.mouse),
            (now.model != s.model, &mut file.model),
            (now.thinking != s.thinking, &mut file.thinking),
            (
                now.tool_execution != s.tool_execution,
                &mut file.tool_execution,
            ),
            (
                now.steering_mode != s.steering_mode,
                &mut file.steering_mode,
            ),
            (
                now.follow_up_mode != s.follow_up_mode,
                &mut file.follow_up_mode,
            ),
        ] {
            if changed {
                *origin = Origin::ConfigFile;
            }
        }
        self.started = now.clone();
        self.found = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_changed_here_is_saved_and_each_says_where_it_came_from() {
        let started = Choices {
            theme: "dark".into(),
            panes: PaneMode::Auto,
            mouse: true,
            model: "gpt-4o".into(),
            ..Choices::default()
        };
        let mut info = ConfigInfo {
            path: Some("/home/u/.config/claw-tui/config.toml".into()),
            found: true,
            provider: "openai".into(),
            started: started.clone(),
            origins: Origins {
                theme: Origin::Terminal,
                model: Origin::ConfigFile,
                ..Origins::default()
            },
        };
        assert!(info.changed(&started).is_empty());
        let now = Choices {
            theme: "light".into(),
            mouse: false,
            ..started
        };
        let changed = info.changed(&now);
        assert_eq!(changed.len(), 2);
        assert_eq!(changed[0].table, ["ui"]);
        assert_eq!(changed[0].value, SettingValue::Text("light".into()));
        assert_eq!(changed[1].value, SettingValue::Flag(false));
        let shown: Vec<String> = info
            .view_rows(&now)
            .iter()
            .map(|r| format!("{} = {}", r.label, r.value))
            .collect();
        let after = |title: &str, row: &str| {
            let at = shown
                .iter()
                .position(|r| r == &format!("{title} = "))
                .unwrap();
            shown[at..].iter().any(|r| r == row)
        };
        assert!(
            after("[ui]", "theme = light   (changed here, not saved)"),
            "{shown:?}"
        );
        assert!(
            after("[providers.openai]", "model = gpt-4o   (config file)"),
            "{shown:?}"
        );
        assert!(after("[agent]", "thinking = off   (default)"), "{shown:?}");
        info.saved(&now);
        assert!(info.changed(&now).is_empty());
        // The queue modes (`/steering all`, `/followup all`) are saved like the rest.
        let queued = Choices {
            steering_mode: QueueMode::All,
            ..now.clone()
        };
        let changed = info.changed(&queued);
        assert_eq!(changed.len(), 1);
        assert_eq!(
            (changed[0].table.as_slice(), changed[0].key.as_str()),
            (["agent".to_owned()].as_slice(), "steering_mode")
        );
        assert_eq!(changed[0].value, SettingValue::Text("all".into()));
        let shown = info.view_rows(&queued);
        assert!(
            shown
                .iter()
                .any(|r| r.label == "follow_up_mode" && r.value == "one-at-a-time   (default)"),
            "{shown:?}"
        );
        // Saved: the changed one is the file's now; the others keep where they came from.
        info.saved(&queued);
        let shown = info.view_rows(&queued);
        let row = |label: &str| {
            shown
                .iter()
                .find(|r| r.label == label)
                .map(|r| r.value.clone())
        };
        assert_eq!(row("steering_mode").as_deref(), Some("all   (config file)"));
        assert_eq!(
            row("follow_up_mode").as_deref(),
            Some("one-at-a-time   (default)")
        );
        assert_eq!(row("thinking").as_deref(), Some("off   (default)"));
    }
}
