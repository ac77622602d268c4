//! The OpenAI Responses API (`POST {base}/responses`, streamed): OpenAI itself, and
//! Azure, OpenRouter or vLLM with `api = "openai-responses"`. Requests are stateless
//! (`store: false`); the model's reasoning comes back encrypted and is replayed with
//! the next request, so it carries across turns without server-side storage.

pub(crate) mod decode;
pub(crate) mod request;
pub(crate) mod sections;

use super::openai::DEFAULT_BASE_URL;
use super::remote::RemoteSettings;

/// Settings of a Responses API provider.
#[derive(Clone, Debug)]
pub struct ResponsesConfig {
    /// Endpoint (up to `/responses`), key, timeouts, retries, prices, caching.
    pub remote: RemoteSettings,
    /// `max_output_tokens`, sent only when set.
    pub max_tokens: Option<u32>,
}

impl Default for ResponsesConfig {
    fn default() -> Self {
        Self::openai()
    }
}

impl ResponsesConfig {
    /// OpenAI itself; the key is expected in `OPENAI_API_KEY`.
    pub fn openai() -> Self {
        Self {
            remote: RemoteSettings::new("OpenAI", DEFAULT_BASE_URL, "OPENAI_API_KEY"),
            max_tokens: None,
        }
    }

    /// Another server speaking the Responses API at `base_url`.
    pub fn compatible(name: impl Into<String>, base_url: impl Into<String>) -> Self {
        let name = name.into();
        let base_url = base_url.into();
        Self {
            remote: RemoteSettings::new(&name, &base_url, "the provider's api_key setting"),
            max_tokens: None,
        }
    }

    pub(crate) fn is_official(&self) -> bool {
        self.remote.base_url.contains("api.openai.com")
    }
}
