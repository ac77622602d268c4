//! Context windows by model name: the table in `assets/context_windows.toml`, looked up
//! by the longest matching prefix.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The window of a model the table does not know.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

const TABLE: &str = include_str!("../../../../assets/context_windows.toml");

#[derive(Deserialize)]
struct Table {
    windows: BTreeMap<String, u64>,
}

/// The table's prefixes in lower case, longest first.
fn prefixes() -> &'static [(String, u64)] {
    static PREFIXES: OnceLock<Vec<(String, u64)>> = OnceLock::new();
    PREFIXES.get_or_init(|| {
        // The table is part of the binary and a test parses it: an error here cannot
        // reach a user, and the default window would still apply.
        let table: Table = toml::from_str(TABLE).unwrap_or(Table {
            windows: BTreeMap::new(),
        });
        let mut list: Vec<(String, u64)> = table
            .windows
            .into_iter()
            .map(|(prefix, window)| (prefix.to_lowercase(), window))
            .filter(|(prefix, window)| !prefix.is_empty() && *window > 0)
            .collect();
        list.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        list
    })
}

/// The context window of `model` from the built-in table, else [`DEFAULT_CONTEXT_WINDOW`].
///
/// ```
/// use claw_agent::compaction::context_window_for;
/// assert_eq!(context_window_for("claude-sonnet-4-5"), 200_000);
/// assert_eq!(context_window_for("openai/gpt-4o-mini"), 128_000);
/// assert_eq!(context_window_for("llama3.1:8b"), 131_072);
/// assert_eq!(context_window_for("my-own-model"), 128_000);
/// ```
pub fn context_window_for(model: &str) -> u64 {
    known_context_window(model).unwrap_or(DEFAULT_CONTEXT_WINDOW)
}

/// The context window of `model` when the built-in table has it.
pub fn known_context_window(model: &str) -> Option<u64> {
    let lower = model.trim().to_lowercase();
    // `anthropic/claude-…` (OpenRouter), `Qwen/Qwen2.5-…` (Hugging Face ids).
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    prefixes()
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix.as_str()))
        .map(|(_, window)| *window)
}

/// The window in force: the configured one (the provider's `context_window`) when set,
/// else the table's for `model`.
pub fn resolve_window(configured: Option<u64>, model: &str) -> u64 {
    configured
        .filter(|w| *w > 0)
        .unwrap_or_else(|| context_window_for(model))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_every_family_is_there() {
        let table: Table = toml::from_str(TABLE).unwrap_or_else(|e| panic!("{e}"));
        assert!(table.windows.len() > 30);
        for (model, window) in [
            ("claude-3-5-haiku-20241022", 200_000),
            ("claude-opus-4-1", 200_000),
            ("gpt-4o-2024-08-06", 128_000),
            ("gpt-4-0613", 8_192),
            ("gpt-4.1-mini", 1_047_576),
            ("gpt-5-codex", 272_000),
            ("o1-mini", 128_000),
            ("o3", 200_000),
            ("o4-mini-high", 200_000),
            ("gemini-2.5-pro", 1_048_576),
            ("google/gemini-1.5-pro-002", 2_097_152),
            ("meta-llama/Meta-Llama-3.1-70B-Instruct", 131_072),
            ("llama3:8b", 8_192),
            ("llama3.3:70b", 131_072),
            ("Qwen/Qwen2.5-Coder-32B-Instruct", 32_768),
            ("qwen3-coder:30b", 262_144),
            ("deepseek-chat", 131_072),
            ("deepseek-coder:6.7b", 16_384),
            ("unknown", DEFAULT_CONTEXT_WINDOW),
        ] {
            assert_eq!(context_window_for(model), window, "{model}");
        }
    }

    #[test]
    fn a_configured_window_wins() {
        assert_eq!(resolve_window(Some(8_000), "claude-sonnet-4-5"), 8_000);
        assert_eq!(resolve_window(Some(0), "claude-sonnet-4-5"), 200_000);
        assert_eq!(resolve_window(None, "x"), DEFAULT_CONTEXT_WINDOW);
    }
}
