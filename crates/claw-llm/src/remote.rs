//! The one HTTP provider: the settings every wire format shares (endpoint, key,
//! timeouts, retries, prices, caching), what every format does to a request first
//! (images a model cannot see become notes; the prompt-cache key), headers, sending,
//! decoding and the model list. Each wire format adds only its request body and its
//! event decoder (`anthropic`, `openai`, `responses`).

use super::anthropic::{self, AnthropicConfig};
use super::body::{BodyPlan, ListWriter};
use super::images::{needs_preparing, prepare_images};
use super::models::ModelList;
use super::openai::{self, OpenAiConfig};
use super::pricing::{ModelPrices, prices_for};
use super::responses::{self, ResponsesConfig};
use super::retry::RetryPolicy;
use super::secret::Secret;
use super::sections::WireFormat;
use super::sse::{self, DEFAULT_MAX_EVENT_BYTES};
use super::transport::{self, Decoder, Limits};
use super::{
    CallOrigin, DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, LlmRequest,
    LlmStream, ModelListError, Provider, RequestOrigin, SetupError, SharedRequest,
};
use crate::{KeyError, ModelsError};
use bytes::Bytes;
use futures::Stream;
use futures::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

mod cache_key;
mod send;
mod shared;

/// What every HTTP provider is configured with, whatever its wire format.
#[derive(Clone, Debug)]
pub struct RemoteSettings {
    /// Name used in messages, e.g. `Anthropic`, `OpenAI`, `Ollama`.
    pub name: String,
    /// Base URL, e.g. `https://api.anthropic.com` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// The API key; optional for a custom base URL (a local server, a proxy adding one).
    pub api_key: Option<Secret>,
    /// Where the key came from (or where one is expected), named in auth errors, e.g.
    /// `ANTHROPIC_API_KEY` or `api_key in [providers.x] of ~/.config/claw-tui/config.toml`.
    pub api_key_source: String,
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
    /// Prompt caching: Anthropic cache breakpoints, OpenAI's `prompt_cache_key`.
    pub cache: bool,
}

impl RemoteSettings {
    /// Defaults for the server `name` at `base_url`, the key expected in `key_source`.
    pub fn new(name: &str, base_url: &str, key_source: &str) -> Self {
        Self {
            name: name.to_owned(),
            base_url: base_url.to_owned(),
            api_key: None,
            api_key_source: key_source.to_owned(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            retry: RetryPolicy::default(),
            prices: BTreeMap::new(),
            cache: true,
        }
    }

    fn key(&self) -> Option<&Secret> {
        self.api_key.as_ref().filter(|k| !k.is_empty())
    }

    /// `{base}/{path}`.
    pub(crate) fn join(&self, path: &str) -> String {
        // A query (`?api-version=…`, a gateway's `?key=…`) stays after the path.
        let (base, query) = match self.base_url.split_once('?') {
            Some((base, query)) => (base, Some(query)),
            None => (self.base_url.as_str(), None),
        };
        let joined = format!("{}/{path}", base.trim_end_matches('/'));
        match query {
            Some(query) => format!("{joined}?{query}"),
            None => joined,
        }
    }
}

/// The wire format and its settings.
#[derive(Clone, Debug)]
pub enum WireConfig {
    /// The Anthropic Messages API.
    Anthropic(AnthropicConfig),
    /// OpenAI-compatible Chat Completions.
    ChatCompletions(OpenAiConfig),
    /// The OpenAI Responses API.
    Responses(ResponsesConfig),
}

impl From<AnthropicConfig> for WireConfig {
    fn from(config: AnthropicConfig) -> Self {
        Self::Anthropic(config)
    }
}

impl From<OpenAiConfig> for WireConfig {
    fn from(config: OpenAiConfig) -> Self {
        Self::ChatCompletions(config)
    }
}

impl From<ResponsesConfig> for WireConfig {
    fn from(config: ResponsesConfig) -> Self {
        Self::Responses(config)
    }
}

impl WireConfig {
    /// The shared settings.
    pub fn remote(&self) -> &RemoteSettings {
        match self {
            Self::Anthropic(c) => &c.remote,
            Self::ChatCompletions(c) => &c.remote,
            Self::Responses(c) => &c.remote,
        }
    }

    fn url(&self) -> String {
        match self {
            Self::Anthropic(c) => c.url(),
            Self::ChatCompletions(c) => c.remote.join("chat/completions"),
            Self::Responses(c) => c.remote.join("responses"),
        }
    }

    fn is_official(&self) -> bool {
        match self {
            Self::Anthropic(c) => c.is_official(),
            Self::ChatCompletions(c) => c.is_official(),
            Self::Responses(c) => c.is_official(),
        }
    }

    /// The body for `request`, already prepared, as the bytes sent.
    fn body(
        &self,
        request: &LlmRequest,
        cache_key: Option<&str>,
    ) -> Result<Vec<u8>, serde_json::Error> {
        match self {
            Self::Anthropic(c) => anthropic::request::body(request, c),
            Self::ChatCompletions(c) => openai::request::body(request, c, cache_key),
            Self::Responses(c) => responses::request::body(request, c, cache_key),
        }
    }

    /// The fields of the body for `request` (already prepared), all but the
    /// conversation, which [`WireConfig::list`] writes.
    pub(crate) fn plan(&self, request: &LlmRequest, cache_key: Option<&str>) -> BodyPlan {
        match self {
            Self::Anthropic(c) => anthropic::request::plan(request, c),
            Self::ChatCompletions(c) => openai::request::plan(request, c, cache_key),
            Self::Responses(c) => responses::request::plan(request, c, cache_key),
        }
    }

    /// Writes the conversation of `request` (already prepared) to `out`.
    pub(crate) fn list(&self, request: &LlmRequest, out: &mut ListWriter<'_>) {
        match self {
            Self::Anthropic(c) => anthropic::request::list(request, c, out),
            Self::ChatCompletions(c) => openai::request::list(request, c, out),
            Self::Responses(_) => responses::request::list(request, out),
        }
    }

    fn decoder(&self, model: &str) -> Box<dyn Decoder> {
        let remote = self.remote();
        let prices = prices_for(&remote.prices, model);
        match self {
            Self::Anthropic(_) => Box::new(anthropic::decode::AnthropicDecoder::new(model, prices)),
            Self::ChatCompletions(_) => Box::new(openai::decode::OpenAiDecoder::new(
                &remote.name,
                model,
                prices,
            )),
            Self::Responses(_) => Box::new(responses::decode::ResponsesDecoder::new(
                &remote.name,
                model,
                prices,
            )),
        }
    }

    /// The wire format of the bodies this provider sends.
    fn format(&self) -> WireFormat {
        match self {
            Self::Anthropic(_) => WireFormat::Anthropic,
            Self::ChatCompletions(_) => WireFormat::ChatCompletions,
            Self::Responses(_) => WireFormat::Responses,
        }
    }

    /// The header that carries the key, and its value.
    fn auth(&self, key: &str) -> (HeaderName, String) {
        match self {
            Self::Anthropic(_) => (HeaderName::from_static("x-api-key"), key.to_owned()),
            Self::ChatCompletions(_) | Self::Responses(_) => {
                (AUTHORIZATION, format!("Bearer {key}"))
            }
        }
    }

    /// What a missing key for the official endpoint means.
    fn missing_key(&self) -> KeyError {
        let remote = self.remote();
        KeyError::Missing {
            provider: remote.name.clone(),
            key_source: remote.api_key_source.clone(),
            anthropic: matches!(self, Self::Anthropic(_)),
        }
    }
}

/// Streams answers from an HTTP model server in one of the three wire formats.
pub struct RemoteProvider {
    /// Shared with the bodies being written from it.
    config: Arc<WireConfig>,
    client: reqwest::Client,
    /// Set once the server refused the prompt-cache key.
    cache_key_refused: cache_key::CacheKeyRefused,
}

/// The provider for the Anthropic Messages API.
pub type AnthropicProvider = RemoteProvider;
/// The provider for OpenAI-compatible Chat Completions.
pub type OpenAiProvider = RemoteProvider;
/// The provider for the OpenAI Responses API.
pub type ResponsesProvider = RemoteProvider;

impl std::fmt::Debug for RemoteProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteProvider")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl RemoteProvider {
    /// A provider with its own HTTP client; fails only if the client cannot be built.
    pub fn new(config: impl Into<WireConfig>) -> Result<Self, SetupError> {
        let config = config.into();
        let client = transport::client(config.remote().connect_timeout)?;
        Ok(Self {
            config: Arc::new(config),
            client,
            cache_key_refused: cache_key::CacheKeyRefused::default(),
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &WireConfig {
        &self.config
    }

    /// The JSON body sent for `request` (after the shared preparation), as its bytes.
    pub fn request_body(&self, request: &LlmRequest) -> Result<Vec<u8>, serde_json::Error> {
        let cache_key = self.cache_key(request);
        // Most requests carry no image the model cannot take: those are not copied.
        let prepared = needs_preparing(request).then(|| {
            let mut copy = request.clone();
            prepare_images(&mut copy);
            copy
        });
        self.config
            .body(prepared.as_ref().unwrap_or(request), cache_key.as_deref())
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
        transport::decode(events, self.config.decoder(model), limits, cancel)
    }

    fn limits(&self) -> Limits {
        let remote = self.config.remote();
        Limits {
            idle_timeout: remote.idle_timeout,
            request_timeout: remote.request_timeout,
            max_event_bytes: remote.max_event_bytes,
            retry: remote.retry,
        }
    }

    fn headers(&self) -> Result<HeaderMap, KeyError> {
        let remote = self.config.remote();
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        if let WireConfig::Anthropic(_) = *self.config {
            headers.insert(
                "anthropic-version",
                HeaderValue::from_static(anthropic::API_VERSION),
            );
        }
        if let Some(key) = remote.key() {
            let (name, value) = self.config.auth(key.expose().trim());
            let mut value = HeaderValue::from_str(&value).map_err(|_| KeyError::NotAHeader {
                provider: remote.name.clone(),
                key_source: remote.api_key_source.clone(),
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        Ok(headers)
    }

    /// Refuses before sending when the official endpoint would only say 401.
    fn check_key(&self) -> Result<bool, KeyError> {
        let sent = self.config.remote().key().is_some();
        if !sent && self.config.is_official() {
            return Err(self.config.missing_key());
        }
        Ok(sent)
    }
}

impl Provider for RemoteProvider {
    fn stream(&self, request: LlmRequest, cancel: CancellationToken) -> LlmStream {
        self.send(request, cancel, None)
    }

    fn stream_for(
        &self,
        request: LlmRequest,
        cancel: CancellationToken,
        origin: &CallOrigin,
    ) -> LlmStream {
        self.send(request, cancel, origin.get::<RequestOrigin>())
    }

    /// The agent's calls: sent once more without the prompt-cache key when the server
    /// refuses it (see `cache_key`).
    fn stream_shared(
        &self,
        request: Arc<SharedRequest>,
        cancel: CancellationToken,
        origin: Option<&CallOrigin>,
    ) -> LlmStream {
        let origin = origin.and_then(CallOrigin::get::<RequestOrigin>).cloned();
        if self.cache_key(request.request()).is_none() {
            return self.send_shared(request, cancel, origin.as_ref());
        }
        let first = self.send_shared(request.clone(), cancel.clone(), origin.as_ref());
        self.falling_back(first, move |provider| {
            provider.send_shared(request, cancel, origin.as_ref())
        })
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelListError>> {
        Box::pin(async move { RemoteProvider::list_models(self).await.map_err(Into::into) })
    }
}

impl RemoteProvider {
    /// `GET .../models`: Anthropic's pages followed, the OpenAI shape (answered alike by
    /// OpenAI, Ollama, vLLM, llama.cpp and OpenRouter) in one response.
    pub async fn list_models(&self) -> Result<Vec<String>, ModelsError> {
        {
            let remote = self.config.remote();
            if self.check_key().is_err() {
                return Err(ModelsError::NoKey {
                    provider: remote.name.clone(),
                    key_source: remote.api_key_source.clone(),
                });
            }
            let list = ModelList {
                client: &self.client,
                headers: self.headers()?,
                timeout: remote.idle_timeout,
                provider: &remote.name,
                url: match &*self.config {
                    WireConfig::Anthropic(c) => c.endpoint("models"),
                    _ => remote.join("models"),
                },
            };
            match *self.config {
                WireConfig::Anthropic(_) => list.paged().await,
                _ => list.single().await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cache_key::cache_key;
    use super::*;
    use crate::LlmMessage;
    use claw_agent::{ThinkingLevel, UserMessage};

    #[test]
    fn debug_output_hides_the_key() {
        let config = AnthropicConfig::with_key(Secret::new("sk-ant-secret-123"), "test");
        let shown = format!("{:?}", RemoteProvider::new(config).unwrap());
        assert!(!shown.contains("secret-123"), "{shown}");
        assert!(shown.contains("Secret(***)"), "{shown}");
        let mut config = OpenAiConfig::openai();
        config.remote.api_key = Some(Secret::new("sk-proj-hidden-456"));
        let shown = format!("{:?}", RemoteProvider::new(config).unwrap());
        assert!(!shown.contains("hidden-456"), "{shown}");
    }

    #[test]
    fn endpoint_urls() {
        let official = WireConfig::from(OpenAiConfig::openai());
        assert_eq!(official.url(), "https://api.openai.com/v1/chat/completions");
        let ollama = OpenAiConfig::compatible("Ollama", "http://localhost:11434/v1/");
        assert_eq!(
            WireConfig::from(ollama).url(),
            "http://localhost:11434/v1/chat/completions"
        );
        let gateway = OpenAiConfig::compatible("Gateway", "https://gw.example/v1/?api-key=Q");
        assert_eq!(
            WireConfig::from(gateway).url(),
            "https://gw.example/v1/chat/completions?api-key=Q"
        );
        let responses = WireConfig::from(ResponsesConfig::openai());
        assert_eq!(responses.url(), "https://api.openai.com/v1/responses");
        assert_eq!(
            WireConfig::from(AnthropicConfig::default()).url(),
            "https://api.anthropic.com/v1/messages"
        );
    }

    #[test]
    fn the_cache_key_follows_the_first_message() {
        let first = UserMessage::new("hello");
        let request = |messages: Vec<LlmMessage<'static>>| LlmRequest {
            system_prompt: String::new(),
            messages,
            tools: Vec::new(),
            model: "m".into(),
            thinking: ThinkingLevel::Off,
        };
        let one = cache_key(&request(vec![LlmMessage::from(first.clone())])).unwrap();
        let two = cache_key(&request(vec![
            LlmMessage::from(first.clone()),
            LlmMessage::from(UserMessage::new("more")),
        ]))
        .unwrap();
        assert_eq!(one, two);
        let mut other = first;
        other.timestamp += 1;
        assert_ne!(
            cache_key(&request(vec![LlmMessage::from(other)])),
            Some(one)
        );
        assert_eq!(cache_key(&request(Vec::new())), None);
    }
}
