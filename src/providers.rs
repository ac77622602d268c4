//! Turns a resolved `ProviderSpec` into an Anthropic or OpenAI-compatible provider.

use crate::config::{Api, ProviderSpec};
use crate::llm::Provider;
use crate::llm::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::llm::openai::{MaxTokensField, OpenAiCompat, OpenAiConfig, OpenAiProvider, SystemRole};
use crate::llm::pricing::ModelPrices;
use crate::llm::secret::Secret;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The HTTP provider `spec` names (not the demo), with its idle and whole-call timeouts.
pub fn build_remote_provider(
    spec: &ProviderSpec,
    idle_timeout_secs: u64,
    request_timeout_secs: u64,
) -> Result<Arc<dyn Provider>, String> {
    let idle_timeout = Duration::from_secs(idle_timeout_secs.max(1));
    let request_timeout = Duration::from_secs(request_timeout_secs.max(1));
    let prices: BTreeMap<String, ModelPrices> = spec
        .prices
        .map(|p| {
            let prices = ModelPrices {
                input: p.input,
                output: p.output,
                cache_read: p.cache_read,
                cache_write: p.cache_write,
            };
            BTreeMap::from([(spec.model.clone(), prices)])
        })
        .unwrap_or_default();
    let key = spec.api_key.clone().map(Secret::new);
    match spec.api {
        Api::Anthropic => {
            let mut config = AnthropicConfig {
                api_key: key,
                api_key_source: spec.api_key_source.clone(),
                idle_timeout,
                request_timeout,
                prices,
                ..AnthropicConfig::default()
            };
            if let Some(url) = &spec.base_url {
                config.base_url = url.clone();
            }
            if let Some(max) = spec.max_tokens {
                config.max_tokens = max;
            }
            AnthropicProvider::new(config)
                .map(|p| Arc::new(p) as Arc<dyn Provider>)
                .map_err(|e| e.to_string())
        }
        Api::Openai => {
            let mut config = match &spec.base_url {
                Some(url) => OpenAiConfig::compatible(spec.name.clone(), url.clone()),
                None => OpenAiConfig::openai(),
            };
            config.api_key = key;
            config.api_key_source = spec.api_key_source.clone();
            config.idle_timeout = idle_timeout;
            config.request_timeout = request_timeout;
            config.prices = prices;
            config.max_tokens = spec.max_tokens;
            config.compat = compat(config.compat, &spec.compat);
            OpenAiProvider::new(config)
                .map(|p| Arc::new(p) as Arc<dyn Provider>)
                .map_err(|e| e.to_string())
        }
        Api::Demo => Err("the demo model is not an HTTP provider".into()),
    }
}

/// The base compat settings with the user's overrides.
fn compat(mut base: OpenAiCompat, user: &crate::config::CompatConfig) -> OpenAiCompat {
    if let Some(on) = user.max_completion_tokens {
        base.max_tokens_field = if on {
            MaxTokensField::MaxCompletionTokens
        } else {
            MaxTokensField::MaxTokens
        };
    }
    if let Some(on) = user.developer_role {
        base.system_role = if on {
            SystemRole::Developer
        } else {
            SystemRole::System
        };
    }
    if let Some(on) = user.stream_options {
        base.stream_options = on;
    }
    if let Some(on) = user.reasoning_effort {
        base.reasoning_effort = on;
    }
    base
}
