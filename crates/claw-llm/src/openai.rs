//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`, streamed): OpenAI,
//! Ollama, vLLM, llama.cpp server, OpenRouter and others, with per-server compat flags.

pub(crate) mod decode;
pub(crate) mod request;
pub(crate) mod sections;

use super::remote::RemoteSettings;
use serde::{Deserialize, Serialize};

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
    /// Send `prompt_cache_key` (OpenAI; other servers may refuse unknown fields).
    pub prompt_cache_key: bool,
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
            prompt_cache_key: true,
        }
    }

    /// The common subset most compatible servers accept.
    pub fn generic() -> Self {
        Self {
            max_tokens_field: MaxTokensField::MaxTokens,
            system_role: SystemRole::System,
            stream_options: true,
            reasoning_effort: false,
            prompt_cache_key: false,
        }
    }
}

/// Settings of an OpenAI-compatible provider.
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// Endpoint (up to `/chat/completions`), key, timeouts, retries, prices, caching.
    pub remote: RemoteSettings,
    /// Output-token limit, sent only when set.
    pub max_tokens: Option<u32>,
    /// Server quirks.
    pub compat: OpenAiCompat,
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
            remote: RemoteSettings::new("OpenAI", DEFAULT_BASE_URL, "OPENAI_API_KEY"),
            max_tokens: None,
            compat: OpenAiCompat::openai(),
        }
    }

    /// A compatible server at `base_url` (Ollama, vLLM, llama.cpp...), no key, generic
    /// compat settings.
    pub fn compatible(name: impl Into<String>, base_url: impl Into<String>) -> Self {
        let name = name.into();
        let base_url = base_url.into();
        Self {
            remote: RemoteSettings::new(&name, &base_url, "the provider's api_key setting"),
            max_tokens: None,
            compat: OpenAiCompat::generic(),
        }
    }

    pub(crate) fn is_official(&self) -> bool {
        self.remote.base_url.contains("api.openai.com")
    }
}
