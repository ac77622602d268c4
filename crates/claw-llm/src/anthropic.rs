//! The Anthropic Messages API (`POST {base}/v1/messages`, streamed as server-sent events):
//! its settings; the body is in `anthropic/request.rs`, the events in `anthropic/decode.rs`.

pub(crate) mod decode;
pub(crate) mod request;
pub(crate) mod sections;

use super::remote::RemoteSettings;
use super::secret::Secret;

pub use request::{output_limit, thinking_budget};

/// The official endpoint's base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent with every request.
pub const API_VERSION: &str = "2023-06-01";
/// Default `max_tokens` for the answer (thinking budgets come on top).
pub const DEFAULT_MAX_TOKENS: u32 = 16_384;

/// Settings of the Anthropic provider.
#[derive(Clone, Debug)]
pub struct AnthropicConfig {
    /// Endpoint, key, timeouts, retries, prices, caching.
    pub remote: RemoteSettings,
    /// Output tokens allowed for the answer; a thinking budget is added on top.
    pub max_tokens: u32,
    /// The model's output-token ceiling; `None` uses [`output_limit`] of the model.
    pub output_limit: Option<u32>,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        Self {
            remote: RemoteSettings::new("Anthropic", DEFAULT_BASE_URL, "ANTHROPIC_API_KEY"),
            max_tokens: DEFAULT_MAX_TOKENS,
            output_limit: None,
        }
    }
}

impl AnthropicConfig {
    /// The defaults with `api_key` read from `source` (the source is named in errors).
    pub fn with_key(api_key: Secret, source: impl Into<String>) -> Self {
        let mut config = Self::default();
        config.remote.api_key = Some(api_key);
        config.remote.api_key_source = source.into();
        config
    }

    pub(crate) fn is_official(&self) -> bool {
        self.remote.base_url.contains("api.anthropic.com")
    }

    pub(crate) fn url(&self) -> String {
        self.endpoint("messages")
    }

    /// `{base}/v1/{path}`, whether or not the base URL already ends in `/v1`.
    pub(crate) fn endpoint(&self, path: &str) -> String {
        let base = self.remote.base_url.trim_end_matches('/');
        if base.ends_with("/v1") {
            format!("{base}/{path}")
        } else {
            format!("{base}/v1/{path}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_urls() {
        let mut config = AnthropicConfig::default();
        assert_eq!(config.url(), "https://api.anthropic.com/v1/messages");
        assert_eq!(
            config.endpoint("models"),
            "https://api.anthropic.com/v1/models"
        );
        config.remote.base_url = "http://127.0.0.1:9/v1/".into();
        assert_eq!(config.url(), "http://127.0.0.1:9/v1/messages");
        assert_eq!(config.endpoint("models"), "http://127.0.0.1:9/v1/models");
    }
}
