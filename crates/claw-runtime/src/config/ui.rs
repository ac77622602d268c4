//! The terminal client's sections: `[ui]` and the check of `[keys]`.

use super::{ConfigError, FileConfig, parse_error};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// `[ui]` settings of the terminal client.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiSection {
    /// Colour theme (wins over the top-level `theme`; `--theme` wins over both).
    pub theme: Option<String>,
    /// Capture the mouse at start (wheel scrolling); `false` leaves text selection to
    /// the terminal.
    pub mouse: Option<bool>,
    /// The tool calls and dashboard panes: `"auto"` (when they have something to show
    /// and the terminal is wide), `"show"` (always) or `"hide"` (the toggle key shows
    /// them).
    pub panes: Option<Panes>,
    /// How many colours the terminal shows: `"auto"` (24-bit when `COLORTERM` says so,
    /// 256 when `TERM` names them, else 16), `"truecolor"`, `"256"` or `"16"`.
    pub colors: Option<Colors>,
}

/// `[ui] colors`: the colours the client draws with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum Colors {
    /// As the terminal says (`COLORTERM`, then `TERM`).
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// 24-bit colour.
    #[serde(rename = "truecolor")]
    TrueColor,
    /// The 256 indexed colours.
    #[serde(rename = "256")]
    Indexed,
    /// The 16 ANSI colours.
    #[serde(rename = "16")]
    Ansi,
}

/// `[ui] panes`: when the tool calls and dashboard panes show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Panes {
    /// When they have something to show: beside the chat on a wide terminal, as tabs
    /// on a narrower one.
    #[default]
    Auto,
    /// Always.
    Show,
    /// Never until the toggle key shows them.
    Hide,
}

/// Rejects unknown actions, bad keys and clashes in `[keys]` when the file is read (so
/// every mode refuses a broken file alike), pointing at the entry the problem names.
pub(super) fn check_keys(path: &Path, text: &str, file: &FileConfig) -> Result<(), ConfigError> {
    if file.keys.is_empty() {
        return Ok(());
    }
    let Err(error) = crate::keymap::KeyMap::from_table(&file.keys) else {
        return Ok(());
    };
    #[derive(Deserialize)]
    struct Spans {
        #[serde(default)]
        keys: BTreeMap<String, toml::Spanned<toml::Value>>,
    }
    let offset = toml::from_str::<Spans>(text)
        .ok()
        .and_then(|spans| {
            spans
                .keys
                .iter()
                .find(|(name, _)| error.names_entry(name))
                .map(|(_, value)| value.span().start)
        })
        .unwrap_or(0);
    Err(parse_error(path, text, offset, &error.to_string()))
}
