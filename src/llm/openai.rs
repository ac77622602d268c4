//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`, streamed): OpenAI,
//! Ollama, vLLM, llama.cpp server, OpenRouter and others, with per-server compat flags.

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
use decode::OpenAiDecoder;
use futures::Stream;
use futures::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The official endpoint's base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Which field carries the output-token limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    /// `max_tokens`: most compatible servers.
    #[default]
    MaxTokens,
    /// `max_completion_tokens`: OpenAI (required by its reasoning models).
    MaxCompletionTokens,
}

/// The role of the system prompt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemRole {
    /// `system`: understood everywhere.
    #[default]
    System,
    /// `developer`: OpenAI's newer models.
    Developer,
}

/// What a server supports beyond the common subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpenAiCompat {
    /// Field name of the output-token limit.
    pub max_tokens_field: MaxTokensField,
    /// Role of the system prompt.
    pub system_role: SystemRole,
    /// Send `stream_options: {include_usage: true}` (token usage in the last chunk).
    pub stream_options: bool,
    /// Send `reasoning_effort` for thinking levels (only servers that accept it).
    pub reasoning_effort: bool,
}

impl Default for OpenAiCompat {
    fn default() -> Self {
        Self::generic()
    }
}

impl OpenAiCompat {
    /// For OpenAI itself: `max_completion_tokens`, `developer` role, reasoning effort.
    pub fn openai() -> Self {
        Self {
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            system_role: SystemRole::Developer,
            stream_options: true,
            reasoning_effort: true,
        }
    }

    /// The common subset most compatible servers accept.
    pub fn generic() -> Self {
        Self {
            max_tokens_field: MaxTokensField::MaxTokens,
            system_role: SystemRole::System,
            stream_options: true,
            reasoning_effort: false,
        }
    }
}

/// Settings of an OpenAI-compatible provider.
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// Name used in messages, e.g. `OpenAI`, `Ollama`, `OpenRouter`.
    pub name: String,
    /// Base URL up to `/chat/completions`, e.g. `http://localhost:11434/v1`.
    pub base_url: String,
    /// Bearer key; with a custom base URL it may be absent (no `Authorization` header).
    pub api_key: Option<Secret>,
    /// Where the key came from (or where one is expected), named in auth errors.
    pub api_key_source: String,
    /// Output-token limit, sent only when set.
    pub max_tokens: Option<u32>,
    /// Server quirks.
    pub compat: OpenAiCompat,
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

impl Default for OpenAiConfig {
    fn default() -> Self {
        Self::openai()
    }
}

impl OpenAiConfig {
    /// OpenAI itself; the key is expected in `OPENAI_API_KEY`.
    pub fn openai() -> Self {
        Self {
            name: "OpenAI".to_owned(),
            base_url: DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            api_key_source: "OPENAI_API_KEY".to_owned(),
            max_tokens: None,
            compat: OpenAiCompat::openai(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            retry: RetryPolicy::default(),
            prices: BTreeMap::new(),
        }
    }

    /// A compatible server at `base_url` (Ollama, vLLM, llama.cpp...), no key, generic
    /// compat settings.
    pub fn compatible(name: impl Into<String>, base_url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            base_url: base_url.into(),
            api_key_source: "the provider's api_key setting".to_owned(),
            compat: OpenAiCompat::generic(),
            ..Self::openai()
        }
    }

    fn is_official(&self) -> bool {
        self.base_url.contains("api.openai.com")
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }

    fn models_url(&self) -> String {
        format!("{}/models", self.base_url.trim_end_matches('/'))
    }
}

/// Streams answers from an OpenAI-compatible Chat Completions endpoint.
pub struct OpenAiProvider {
    config: OpenAiConfig,
    client: reqwest::Client,
}

impl std::fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl OpenAiProvider {
    /// A provider with its own HTTP client; fails only if the client cannot be built.
    pub fn new(config: OpenAiConfig) -> Result<Self, super::SetupError> {
        let client = transport::client(config.connect_timeout).map_err(super::SetupError)?;
        Ok(Self { config, client })
    }

    /// The settings in use.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The JSON body sent for `request`.
    pub fn request_body(&self, request: &LlmRequest) -> serde_json::Value {
        request::body(request, &self.config)
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

    fn decoder(&self, model: &str) -> OpenAiDecoder {
        OpenAiDecoder::new(
            &self.config.name,
            model,
            prices_for(&self.config.prices, model),
        )
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
        if let Some(key) = self.config.api_key.as_ref().filter(|k| !k.is_empty()) {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose().trim()))
                .map_err(|_| {
                    format!(
                        "The {} API key from {} contains characters that cannot be sent in a \
                         header; check it for stray quotes or line breaks.",
                        self.config.name, self.config.api_key_source
                    )
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(headers)
    }
}

impl Provider for OpenAiProvider {
    fn stream(&self, request: LlmRequest, cancel: CancellationToken) -> LlmStream {
        let key_sent = self.config.api_key.as_ref().is_some_and(|k| !k.is_empty());
        if !key_sent && self.config.is_official() {
            return transport::failed(
                &request.model,
                format!(
                    "No {} API key is set. Put your key in {}, or point base_url at a server \
                     that needs none (e.g. Ollama at http://localhost:11434/v1).",
                    self.config.name, self.config.api_key_source
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
                provider: self.config.name.clone(),
                model: request.model.clone(),
                url: self.config.url(),
                key_sent,
                key_source: self.config.api_key_source.clone(),
            },
        };
        transport::stream(http, self.decoder(&request.model), self.limits(), cancel)
    }

    /// `GET {base_url}/models`, answered alike by OpenAI, Ollama, vLLM, llama.cpp and
    /// OpenRouter.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, String>> {
        Box::pin(async move {
            let key_sent = self.config.api_key.as_ref().is_some_and(|k| !k.is_empty());
            if !key_sent && self.config.is_official() {
                return Err(format!(
                    "no {} API key is set ({}), so the model list was not asked for",
                    self.config.name, self.config.api_key_source
                ));
            }
            ModelList {
                client: &self.client,
                headers: self.headers()?,
                timeout: self.config.idle_timeout,
                provider: &self.config.name,
                url: self.config.models_url(),
            }
            .single()
            .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_hides_the_key() {
        let mut config = OpenAiConfig::openai();
        config.api_key = Some(Secret::new("sk-proj-hidden-456"));
        let shown = format!("{:?}", OpenAiProvider::new(config).unwrap());
        assert!(!shown.contains("hidden-456"), "{shown}");
    }

    #[test]
    fn endpoint_urls() {
        assert_eq!(
            OpenAiConfig::openai().url(),
            "https://api.openai.com/v1/chat/completions"
        );
        let ollama = OpenAiConfig::compatible("Ollama", "http://localhost:11434/v1/");
        assert_eq!(ollama.url(), "http://localhost:11434/v1/chat/completions");
        assert_eq!(ollama.models_url(), "http://localhost:11434/v1/models");
        assert_eq!(ollama.compat, OpenAiCompat::generic());
    }
}
