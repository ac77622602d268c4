//! Turns a resolved `ProviderSpec` into the HTTP provider of its wire format: Anthropic,
//! chat completions, or the Responses API (which the built-in `openai` provider uses for
//! OpenAI's own endpoint).

use crate::config::{Api, ProviderSpec};
use crate::llm::anthropic::AnthropicConfig;
use crate::llm::openai::{MaxTokensField, OpenAiCompat, OpenAiConfig, SystemRole};
use crate::llm::pricing::ModelPrices;
use crate::llm::remote::{RemoteProvider, RemoteSettings, WireConfig};
use crate::llm::responses::ResponsesConfig;
use crate::llm::secret::Secret;
use crate::llm::{Provider, SetupError};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The wire format `spec` calls for, with its settings.
pub fn wire_config(
    spec: &ProviderSpec,
    idle_timeout_secs: u64,
    request_timeout_secs: u64,
) -> Result<WireConfig, SetupError> {
    let mut wire = match (spec.api, &spec.base_url) {
        (Api::Anthropic, _) => {
            let mut config = AnthropicConfig::default();
            if let Some(max) = spec.max_tokens {
                config.max_tokens = max;
            }
            WireConfig::Anthropic(config)
        }
        // OpenAI's own endpoint serves its reasoning models properly only through the
        // Responses API; a base URL of another server keeps chat completions.
        (Api::Openai, None) | (Api::OpenaiResponses, None) => {
            WireConfig::Responses(ResponsesConfig {
                max_tokens: spec.max_tokens,
                ..ResponsesConfig::openai()
            })
        }
        (Api::OpenaiResponses, Some(url)) => WireConfig::Responses(ResponsesConfig {
            max_tokens: spec.max_tokens,
            ..ResponsesConfig::compatible(spec.name.clone(), url.clone())
        }),
        (Api::Openai, Some(url)) => {
            let mut config = OpenAiConfig::compatible(spec.name.clone(), url.clone());
            if url.contains("api.openai.com") {
                config.compat = OpenAiCompat::openai();
            }
            config.max_tokens = spec.max_tokens;
            config.compat = compat(config.compat, &spec.compat);
            WireConfig::ChatCompletions(config)
        }
        (Api::Demo, _) => return Err(SetupError::NotHttp),
    };
    let remote = match &mut wire {
        WireConfig::Anthropic(c) => &mut c.remote,
        WireConfig::ChatCompletions(c) => &mut c.remote,
        WireConfig::Responses(c) => &mut c.remote,
    };
    apply(remote, spec, idle_timeout_secs, request_timeout_secs);
    Ok(wire)
}

/// The HTTP provider `spec` names (not the demo), with its idle and whole-call timeouts.
pub fn build_remote_provider(
    spec: &ProviderSpec,
    idle_timeout_secs: u64,
    request_timeout_secs: u64,
) -> Result<Arc<dyn Provider>, SetupError> {
    let wire = wire_config(spec, idle_timeout_secs, request_timeout_secs)?;
    RemoteProvider::new(wire).map(|p| Arc::new(p) as Arc<dyn Provider>)
}

/// The settings every wire format takes from the spec.
fn apply(remote: &mut RemoteSettings, spec: &ProviderSpec, idle: u64, request: u64) {
    remote.api_key = spec.api_key.clone().map(Secret::new);
    remote.api_key_source = spec.api_key_source.clone();
    remote.idle_timeout = Duration::from_secs(idle.max(1));
    remote.request_timeout = Duration::from_secs(request.max(1));
    remote.cache = spec.cache;
    if let Some(url) = &spec.base_url {
        remote.base_url = url.clone();
        // Another server than the vendor's own (a gateway speaking its format, a local
        // model): errors name the config entry and the host, not the vendor.
        remote.name = server_name(&spec.name, url);
    }
    remote.prices = spec
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
}

/// How errors name the provider entry `name` served at `url`: `litellm (localhost:4000)`.
fn server_name(name: &str, url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host = after_scheme.split('/').next().unwrap_or(after_scheme);
    // A user:password@ part of the URL is no one's business in an error line.
    let host = host.rsplit_once('@').map_or(host, |(_, host)| host);
    format!("{name} ({host})")
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
    if let Some(on) = user.prompt_cache_key {
        base.prompt_cache_key = on;
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CompatConfig;

    fn spec(api: Api, base_url: Option<&str>) -> ProviderSpec {
        ProviderSpec {
            name: "openai".into(),
            api,
            base_url: base_url.map(str::to_owned),
            model: "gpt-5".into(),
            api_key: Some("sk-x".into()),
            api_key_source: "OPENAI_API_KEY".into(),
            max_tokens: None,
            context_window: None,
            prices: None,
            cache: false,
            compat: CompatConfig::default(),
        }
    }

    #[test]
    fn openai_itself_speaks_responses_and_other_servers_chat_completions() {
        let official = wire_config(&spec(Api::Openai, None), 1, 1).unwrap();
        assert!(matches!(official, WireConfig::Responses(_)));
        assert!(!official.remote().cache);
        let local = wire_config(&spec(Api::Openai, Some("http://localhost:11434/v1")), 1, 1);
        assert!(matches!(local, Ok(WireConfig::ChatCompletions(_))));
        let vllm = wire_config(
            &spec(Api::OpenaiResponses, Some("http://localhost:8000/v1")),
            1,
            1,
        )
        .unwrap();
        assert!(matches!(vllm, WireConfig::Responses(_)));
        assert_eq!(vllm.remote().base_url, "http://localhost:8000/v1");
    }

    #[test]
    fn another_server_is_named_by_its_entry_and_host_and_the_vendor_by_its_name() {
        let vendor = wire_config(&spec(Api::Anthropic, None), 1, 1).unwrap();
        assert_eq!(vendor.remote().name, "Anthropic");
        let mut gateway = spec(Api::Anthropic, Some("http://localhost:4000"));
        gateway.name = "litellm".into();
        let gateway = wire_config(&gateway, 1, 1).unwrap();
        assert_eq!(gateway.remote().name, "litellm (localhost:4000)");
        let with_login = spec(Api::Openai, Some("https://user:pw@proxy.example/v1"));
        let named = wire_config(&with_login, 1, 1)
            .unwrap()
            .remote()
            .name
            .clone();
        assert_eq!(named, "openai (proxy.example)");
    }
}
