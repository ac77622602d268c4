//! Per-model token prices and the cost of one call.

use claw_agent::types::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Prices of one model in US dollars per million tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelPrices {
    /// Uncached input tokens.
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read: f64,
    /// Input tokens written to the prompt cache.
    #[serde(default)]
    pub cache_write: f64,
}

impl ModelPrices {
    /// Prices from four per-million figures.
    pub const fn new(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Self {
        Self {
            input,
            output,
            cache_read,
            cache_write,
        }
    }

    /// The dollar cost of `usage` at these prices.
    pub fn cost(&self, usage: &Usage) -> f64 {
        // u64 → f64 loses precision only past 2^53 tokens, far beyond any real call.
        (usage.input as f64 * self.input
            + usage.output as f64 * self.output
            + usage.cache_read as f64 * self.cache_read
            + usage.cache_write as f64 * self.cache_write)
            / 1_000_000.0
    }
}

/// List prices in USD per 1M tokens (input, output, cache read, cache write), matched by
/// model-id prefix; the longest matching prefix wins, so `gpt-4o-mini` beats `gpt-4o`.
/// They are public list prices and drift: configure `prices` to override them.
const KNOWN_PRICES: &[(&str, ModelPrices)] = &[
    ("claude-opus-4-5", ModelPrices::new(5.0, 25.0, 0.5, 6.25)),
    ("claude-opus-4", ModelPrices::new(15.0, 75.0, 1.5, 18.75)),
    ("claude-sonnet-4", ModelPrices::new(3.0, 15.0, 0.3, 3.75)),
    ("claude-haiku-4", ModelPrices::new(1.0, 5.0, 0.1, 1.25)),
    ("claude-3-7-sonnet", ModelPrices::new(3.0, 15.0, 0.3, 3.75)),
    ("claude-3-5-haiku", ModelPrices::new(0.8, 4.0, 0.08, 1.0)),
    ("gpt-4o-mini", ModelPrices::new(0.15, 0.6, 0.075, 0.0)),
    ("gpt-4o", ModelPrices::new(2.5, 10.0, 1.25, 0.0)),
    ("gpt-4.1-nano", ModelPrices::new(0.1, 0.4, 0.025, 0.0)),
    ("gpt-4.1-mini", ModelPrices::new(0.4, 1.6, 0.1, 0.0)),
    ("gpt-4.1", ModelPrices::new(2.0, 8.0, 0.5, 0.0)),
    ("gpt-5-nano", ModelPrices::new(0.05, 0.4, 0.005, 0.0)),
    ("gpt-5-mini", ModelPrices::new(0.25, 2.0, 0.025, 0.0)),
    ("gpt-5", ModelPrices::new(1.25, 10.0, 0.125, 0.0)),
    ("o3-mini", ModelPrices::new(1.1, 4.4, 0.55, 0.0)),
    ("o3", ModelPrices::new(2.0, 8.0, 0.5, 0.0)),
    ("o4-mini", ModelPrices::new(1.1, 4.4, 0.275, 0.0)),
];

/// The built-in list price of `model`, if known. Router prefixes such as `anthropic/` or
/// `openai/` are ignored, and dots count as dashes (`claude-sonnet-4.5`).
pub fn known_prices(model: &str) -> Option<ModelPrices> {
    let name = model.rsplit('/').next().unwrap_or(model).replace('.', "-");
    let dotted = model.rsplit('/').next().unwrap_or(model);
    KNOWN_PRICES
        .iter()
        .filter(|(prefix, _)| name.starts_with(prefix) || dotted.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, prices)| *prices)
}

/// The prices for `model`: the configured table first (exact id), then the known list.
pub fn prices_for(configured: &BTreeMap<String, ModelPrices>, model: &str) -> Option<ModelPrices> {
    configured
        .get(model)
        .copied()
        .or_else(|| known_prices(model))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_router_prefixes_are_ignored() {
        assert_eq!(
            known_prices("gpt-4o-mini-2024-07-18").map(|p| p.input),
            Some(0.15)
        );
        assert_eq!(
            known_prices("gpt-4o-2024-08-06").map(|p| p.input),
            Some(2.5)
        );
        assert_eq!(known_prices("gpt-4.1-mini").map(|p| p.input), Some(0.4));
        assert_eq!(
            known_prices("claude-sonnet-4-5-20250929").map(|p| p.output),
            Some(15.0)
        );
        assert_eq!(
            known_prices("anthropic/claude-opus-4.5").map(|p| p.input),
            Some(5.0)
        );
        assert_eq!(known_prices("openai/o4-mini").map(|p| p.output), Some(4.4));
        assert_eq!(known_prices("llama3.2:3b"), None);
    }

    #[test]
    fn configured_prices_override_the_list() {
        let mut table = BTreeMap::new();
        table.insert("gpt-4o".to_owned(), ModelPrices::new(1.0, 2.0, 0.0, 0.0));
        assert_eq!(prices_for(&table, "gpt-4o").map(|p| p.input), Some(1.0));
        assert_eq!(
            prices_for(&table, "gpt-4o-mini").map(|p| p.input),
            Some(0.15)
        );
    }

    #[test]
    fn cost_sums_every_token_kind() {
        let prices = ModelPrices::new(3.0, 15.0, 0.3, 3.75);
        let usage = Usage {
            input: 1_000_000,
            output: 100_000,
            cache_read: 2_000_000,
            cache_write: 400_000,
            ..Usage::default()
        };
        let cost = prices.cost(&usage);
        assert!((cost - (3.0 + 1.5 + 0.6 + 1.5)).abs() < 1e-9, "{cost}");
    }
}
