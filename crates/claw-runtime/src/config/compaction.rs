//! `[compaction]`: when long histories are summarised, and how much stays verbatim.

use crate::agent::CompactionSettings;
use serde::Deserialize;

/// `[compaction]` as written; every key is optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionSection {
    /// Compact on its own when the window fills (default true); `false` means never.
    pub enabled: Option<bool>,
    /// Room left for the reply and the compaction call, in tokens (default 16384).
    pub reserve_tokens: Option<u64>,
    /// The newest history kept verbatim, in tokens (default 20000).
    pub keep_recent_tokens: Option<u64>,
    /// The model that writes summaries, on the same provider (default: the agent's).
    pub model: Option<String>,
}

impl CompactionSection {
    /// The settings, defaults filled in.
    pub fn settings(&self) -> CompactionSettings {
        let defaults = CompactionSettings::default();
        CompactionSettings {
            enabled: self.enabled.unwrap_or(defaults.enabled),
            reserve_tokens: self.reserve_tokens.unwrap_or(defaults.reserve_tokens),
            keep_recent_tokens: self
                .keep_recent_tokens
                .unwrap_or(defaults.keep_recent_tokens),
            model: self
                .model
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_owned),
        }
    }
}
