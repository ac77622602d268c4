//! The Anthropic Messages API (`POST {base}/v1/messages`, streamed as server-sent events).

mod decode;
mod request;

use super::models::ModelList;
use super::pricing::{ModelPrices, prices_for};
use super::retry::RetryPolicy;
use super::secret::Secret;
use super::sse;
use super::sse::DEFAULT_MAX_EVENT_BYTES;
use super::transport::{self, HttpRequest, Limits, Target};
use super::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, LlmRequest, LlmStream,
    Provider,
};
use bytes::Bytes;
use decode::AnthropicDecoder;
use futures::Stream;
use futures::future::BoxFuture;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub use request::{output_limit, thinking_budget};

/// The official endpoint's base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent with every request.
pub const API_VERSION: &str = "2023-06-01";
/// Default `max_tokens` for the answer (thinking budgets come on top).
pub const DEFAULT_MAX_TOKENS: u32 = 16_384;
/// Signature prefix marking a redacted thinking block: `Block::Thinking` has no variant
/// for it, so its opaque `data` travels in the signature and is replayed as
/// `redacted_thinking` (real signatures are base64 and never contain `:`).
pub const REDACTED_THINKING_PREFIX: &str = "redacted_thinking:";

/// Settings of the Anthropic provider.
#[derive(Clone, Debug)]
pub struct AnthropicConfig {
    /// Base URL without `/v1/messages`, e.g. `https://api.anthropic.com`.
    pub base_url: String,
    /// The API key; optional only for a custom base URL (a proxy that adds its own).
    pub api_key: Option<Secret>,
    /// Where the key came from (or where one is expected), named in auth errors, e.g.
    /// `ANTHROPIC_API_KEY` or `config file ~/.config/claw-tui/config.toml`.
    pub api_key_source: String,
    /// Output tokens allowed for the answer; a thinking budget is added on top.
    pub max_tokens: u32,
    /// The model's output-token ceiling; `None` uses [`output_limit`] of the model.
    pub output_limit: Option<u32>,
    /// Longest silence accepted from the server (waiting for headers or between bytes).
    pub idle_timeout: Duration,
    /// Longest a whole call may take, retries included.
    pub request_timeout: Duration,
    /// Largest single event accepted from the stream.
    pub max_event_bytes: usize,
    /// Longest TCP/TLS connect.
    pub connect_timeout: Duration,
    /// Retries of failed requests.
    pub retry: RetryPolicy,
    /// Prices per model id (exact match), overriding the built-in list prices.
    pub prices: BTreeMap<String, ModelPrices>,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        Self {
            base_url: DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            api_key_source: "ANTHROPIC_API_KEY".to_owned(),
            max_tokens: DEFAULT_MAX_TOKENS,
            output_limit: None,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            retry: RetryPolicy::default(),
            prices: BTreeMap::new(),
        }
    }
}

impl AnthropicConfig {
    /// The defaults with `api_key` read from `source` (the source is named in errors).
    pub fn with_key(api_key: Secret, source: impl Into<String>) -> Self {
        Self {
            api_key: Some(api_key),
            api_key_source: source.into(),
            ..Self::default()
        }
    }

    fn is_official(&self) -> bool {
        self.base_url.contains("api.anthropic.com")
    }

    fn url(&self) -> String {
        self.endpoint("messages")
    }

    fn models_url(&self) -> String {
        self.endpoint("models")
    }

    /// `{base}/v1/{path}`, whether or not the base URL already ends in `/v1`.
    fn endpoint(&self, path: &str) -> String {
        let base = self.base_url.trim_end_matches('/');
        if base.ends_with("/v1") {
            format!("{base}/{path}")
        } else {
            format!("{base}/v1/{path}")
        }
    }
}

/// Streams answers from the Anthropic Messages API.
pub struct AnthropicProvider {
    config: AnthropicConfig,
    client: reqwest::Client,
}

impl std::fmt::Debug for AnthropicProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicProvider")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl AnthropicProvider {
    /// A provider with its own HTTP client; fails only if the client cannot be built.
    pub fn new(config: AnthropicConfig) -> Result<Self, super::SetupError> {
        let client = transport::client(config.connect_timeout).map_err(super::SetupError)?;
        Ok(Self { config, client })
    }

    /// The settings in use.
    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }

    /// The JSON body sent for `request`.
    pub fn request_body(&self, request: &LlmRequest) -> serde_json::Value {
        let limit = self
            .config
            .output_limit
            .unwrap_or_else(|| output_limit(&request.model));
        request::body(request, self.config.max_tokens, limit)
    }

    /// Decodes a raw response body into provider events, exactly as [`Provider::stream`]
    /// does once the response headers arrived (no HTTP, no retries).
    pub fn decode_body<S, E>(&self, model: &str, body: S, cancel: CancellationToken) -> LlmStream
    where
        S: Stream<Item = Result<Bytes, E>> + Send + 'static,
        E: std::fmt::Display,
    {
        let limits = self.limits();
        let events = sse::events(body, limits.sse());
        transport::decode(events, self.decoder(model), limits, cancel)
    }

    fn decoder(&self, model: &str) -> AnthropicDecoder {
        AnthropicDecoder::new(model, prices_for(&self.config.prices, model))
    }

    fn limits(&self) -> Limits {
        Limits {
            idle_timeout: self.config.idle_timeout,
            request_timeout: self.config.request_timeout,
            max_event_bytes: self.config.max_event_bytes,
            retry: self.config.retry,
        }
    }

    fn headers(&self) -> Result<HeaderMap, String> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        if let Some(key) = self.config.api_key.as_ref().filter(|k| !k.is_empty()) {
            let mut value = HeaderValue::from_str(key.expose().trim()).map_err(|_| {
                format!(
                    "The Anthropic API key from {} contains characters that cannot be sent \
                     in a header; check it for stray quotes or line breaks.",
                    self.config.api_key_source
                )
            })?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        Ok(headers)
    }
}

impl Provider for AnthropicProvider {
    fn stream(&self, request: LlmRequest, cancel: CancellationToken) -> LlmStream {
        let key_sent = self.config.api_key.as_ref().is_some_and(|k| !k.is_empty());
        if !key_sent && self.config.is_official() {
            return transport::failed(
                &request.model,
                format!(
                    "No Anthropic API key is set. Put your key in {} (get one at \
                     console.anthropic.com), or point base_url at a server that needs none.",
                    self.config.api_key_source
                ),
            );
        }
        let headers = match self.headers() {
            Ok(headers) => headers,
            Err(message) => return transport::failed(&request.model, message),
        };
        let body = match serde_json::to_vec(&self.request_body(&request)) {
            Ok(body) => Bytes::from(body),
            Err(e) => {
                return transport::failed(
                    &request.model,
                    format!("Cannot encode the request as JSON: {e}"),
                );
            }
        };
        let http = HttpRequest {
            client: self.client.clone(),
            headers,
            body,
            target: Target {
                provider: "Anthropic".to_owned(),
                model: request.model.clone(),
                url: self.config.url(),
                key_sent,
                key_source: self.config.api_key_source.clone(),
            },
        };
        transport::stream(http, self.decoder(&request.model), self.limits(), cancel)
    }

    /// `GET /v1/models`, following its pages.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, String>> {
        Box::pin(async move {
            let key_sent = self.config.api_key.as_ref().is_some_and(|k| !k.is_empty());
            if !key_sent && self.config.is_official() {
                return Err(format!(
                    "no Anthropic API key is set ({}), so the model list was not asked for",
                    self.config.api_key_source
                ));
            }
            ModelList {
                client: &self.client,
                headers: self.headers()?,
                timeout: self.config.idle_timeout,
                provider: "Anthropic",
                url: self.config.models_url(),
            }
            .paged()
            .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_hides_the_key() {
        let config = AnthropicConfig::with_key(Secret::new("sk-ant-secret-123"), "test");
        let provider = AnthropicProvider::new(config).unwrap();
        let shown = format!("{provider:?}");
        assert!(!shown.contains("secret-123"), "{shown}");
        assert!(shown.contains("Secret(***)"), "{shown}");
    }

    #[test]
    fn endpoint_urls() {
        let mut config = AnthropicConfig::default();
        assert_eq!(config.url(), "https://api.anthropic.com/v1/messages");
        assert_eq!(config.models_url(), "https://api.anthropic.com/v1/models");
        config.base_url = "http://127.0.0.1:9/v1/".into();
        assert_eq!(config.url(), "http://127.0.0.1:9/v1/messages");
        assert_eq!(config.models_url(), "http://127.0.0.1:9/v1/models");
    }
}
