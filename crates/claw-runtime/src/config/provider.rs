//! The provider part of the configuration: `[providers.NAME]` entries, the built-in
//! names, and the choice of provider, wire format, key, URL and model.

use super::{ConfigError, DEMO_MODEL, FileConfig, Flags};
use serde::Deserialize;
use std::path::Path;

/// Which wire format a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// The Anthropic Messages API.
    Anthropic,
    /// OpenAI: the Responses API for OpenAI's own endpoint (no base URL set), chat
    /// completions for any other base URL.
    Openai,
    /// The OpenAI Responses API, whatever the base URL (Azure, OpenRouter, vLLM).
    #[serde(rename = "openai-responses")]
    OpenaiResponses,
    /// The built-in offline demo model.
    Demo,
}

/// Prices in US dollars per million tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceConfig {
    /// Input tokens.
    #[serde(default)]
    pub input: f64,
    /// Output tokens.
    #[serde(default)]
    pub output: f64,
    /// Cached input read.
    #[serde(default)]
    pub cache_read: f64,
    /// Cache write.
    #[serde(default)]
    pub cache_write: f64,
}

/// Quirks of OpenAI-compatible servers.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompatConfig {
    /// Send `max_completion_tokens` instead of `max_tokens`.
    pub max_completion_tokens: Option<bool>,
    /// Send the system prompt with the `developer` role.
    pub developer_role: Option<bool>,
    /// Send `stream_options.include_usage` (some servers reject it).
    pub stream_options: Option<bool>,
    /// Send `reasoning_effort` for thinking levels.
    pub reasoning_effort: Option<bool>,
    /// Send `prompt_cache_key` (on by default for OpenAI itself only).
    pub prompt_cache_key: Option<bool>,
}

/// One `[providers.NAME]` entry.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderEntry {
    /// Wire format; defaults to the entry's name when that is anthropic, openai or demo.
    pub api: Option<Api>,
    /// API base URL.
    pub base_url: Option<String>,
    /// Model id.
    pub model: Option<String>,
    /// Environment variable holding the key.
    pub api_key_env: Option<String>,
    /// The key itself (prefer `api_key_env`; the file must then be private).
    pub api_key: Option<String>,
    /// Context window in tokens.
    pub context_window: Option<u64>,
    /// Output token limit per call.
    pub max_tokens: Option<u32>,
    /// Prices per million tokens.
    pub prices: Option<PriceConfig>,
    /// Prompt caching (Anthropic breakpoints, OpenAI `prompt_cache_key`); default on.
    pub cache: Option<bool>,
    /// Server quirks (OpenAI-compatible only).
    #[serde(default)]
    pub compat: CompatConfig,
}

/// The provider chosen, with everything needed to build it.
#[derive(Clone, PartialEq)]
pub struct ProviderSpec {
    /// The name it was chosen by.
    pub name: String,
    /// Wire format.
    pub api: Api,
    /// Base URL (None: the API's default).
    pub base_url: Option<String>,
    /// Model id.
    pub model: String,
    /// The key, if any.
    pub api_key: Option<String>,
    /// Where the key came from, for error messages (never the key itself).
    pub api_key_source: String,
    /// Output token limit per call.
    pub max_tokens: Option<u32>,
    /// Context window in tokens.
    pub context_window: Option<u64>,
    /// Prices, when configured.
    pub prices: Option<PriceConfig>,
    /// Prompt caching on.
    pub cache: bool,
    /// Server quirks.
    pub compat: CompatConfig,
}

impl std::fmt::Debug for ProviderSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSpec")
            .field("name", &self.name)
            .field("api", &self.api)
            .field(
                "base_url",
                &self.base_url.as_deref().map(crate::llm::tap::redact_url),
            )
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("api_key_source", &self.api_key_source)
            .finish_non_exhaustive()
    }
}

fn builtin_api(name: &str) -> Option<Api> {
    match name {
        "anthropic" => Some(Api::Anthropic),
        "openai" => Some(Api::Openai),
        "demo" => Some(Api::Demo),
        _ => None,
    }
}

pub(super) fn resolve_provider(
    flags: &Flags,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
    config_path: &Path,
    warnings: &mut Vec<String>,
) -> Result<ProviderSpec, ConfigError> {
    let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let name = flags
        .provider
        .clone()
        .or_else(|| set("CLAW_TUI_PROVIDER"))
        .or_else(|| file.provider.clone())
        .unwrap_or_else(|| {
            if set("ANTHROPIC_API_KEY").is_some() {
                "anthropic".into()
            } else if set("OPENAI_API_KEY").is_some() {
                "openai".into()
            } else {
                "demo".into()
            }
        });
    let entry = file.providers.get(&name).cloned().unwrap_or_default();
    let api = flags.api.or(entry.api).or_else(|| builtin_api(&name)).ok_or_else(|| {
        let known: Vec<&str> = file.providers.keys().map(String::as_str).collect();
        ConfigError::Invalid(format!(
            "unknown provider \"{name}\": use anthropic, openai, demo{}{}, or add [providers.{name}] \
             with api = \"anthropic\", \"openai\" or \"openai-responses\" to {} (or pass --api)",
            if known.is_empty() { "" } else { ", " },
            known.join(", "),
            config_path.display()
        ))
    })?;
    let (key_var, url_var, default_model) = match api {
        Api::Anthropic => (
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "claude-sonnet-4-5",
        ),
        Api::Openai | Api::OpenaiResponses => ("OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-4.1"),
        Api::Demo => ("", "", DEMO_MODEL),
    };
    let key_var = entry
        .api_key_env
        .clone()
        .unwrap_or_else(|| key_var.to_owned());
    let (api_key, api_key_source) = match (api, set(&key_var), &entry.api_key) {
        (Api::Demo, _, _) => (None, String::new()),
        (_, Some(key), _) => (Some(key), format!("the environment variable {key_var}")),
        (_, None, Some(key)) => {
            if let Some(w) = readable_by_others(config_path) {
                warnings.push(w);
            }
            (
                Some(key.clone()),
                format!("api_key in [providers.{name}] of {}", config_path.display()),
            )
        }
        (_, None, None) => {
            // A server reached without a key (a local one) is fine, but a variable
            // named for it in the config and not set is a mistake worth a word.
            if let Some(var) = entry.api_key_env.as_deref() {
                warnings.push(format!(
                    "[providers.{name}] api_key_env names {var}, which is not set: requests \
                     go without a key"
                ));
            }
            (
                None,
                format!("the environment variable {key_var} (not set)"),
            )
        }
    };
    let base_url = flags
        .base_url
        .clone()
        .or_else(|| (!url_var.is_empty()).then(|| set(url_var)).flatten())
        .or_else(|| entry.base_url.clone());
    let model = match api {
        Api::Demo => DEMO_MODEL.to_owned(),
        _ => flags
            .model
            .clone()
            .or_else(|| set("CLAW_TUI_MODEL"))
            .or_else(|| entry.model.clone())
            .unwrap_or_else(|| default_model.to_owned()),
    };
    if api != Api::Demo && api_key.is_none() && base_url.is_none() {
        return Err(ConfigError::MissingKey {
            provider: name,
            key_var,
            config_path: config_path.to_path_buf(),
        });
    }
    Ok(ProviderSpec {
        name,
        api,
        base_url,
        model,
        api_key,
        api_key_source,
        max_tokens: entry.max_tokens,
        context_window: entry.context_window,
        prices: entry.prices,
        cache: entry.cache.unwrap_or(true),
        compat: entry.compat,
    })
}

/// A warning when a file holding a key can be read by group or others.
fn readable_by_others(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    (mode & 0o077 != 0).then(|| {
        format!(
            "{} holds an API key and is readable by other users (mode {:o}); run: chmod 600 {}",
            path.display(),
            mode & 0o777,
            path.display()
        )
    })
}
