//! `initialize` and `authenticate`: the version, who we are, what we can do (as it
//! really is), and how the user gives the provider its key.

use super::AGENT_NAME;
use super::agent::{Base, settings_error};
use crate::config::ConfigError;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, Implementation,
    InitializeRequest, InitializeResponse, McpCapabilities, PromptCapabilities,
    SessionCapabilities, SessionCloseCapabilities,
};
use agent_client_protocol::{Error, ErrorCode};

/// The id of the one authentication method: a key in the environment.
pub const API_KEY_METHOD: &str = "api-key";

/// The answer to `initialize`: version 1, the only one claw-tui speaks (the SDK's v1
/// connection hands every request over as asking for it, whatever version was asked).
pub fn response(base: &Base, request: &InitializeRequest) -> InitializeResponse {
    tracing::info!(
        "ACP client: {}",
        request
            .client_info
            .as_ref()
            .map_or("(unnamed)".to_owned(), |c| format!(
                "{} {}",
                c.name, c.version
            ))
    );
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_info(Implementation::new(AGENT_NAME, env!("CARGO_PKG_VERSION")).title("claw-tui"))
        .agent_capabilities(capabilities())
        .auth_methods(auth_methods(base))
}

/// What claw-tui does with a session, as it really is: sessions load (with their
/// history replayed) and close; prompts take images and the editor's context (embedded
/// resources; resource links are baseline); MCP servers over stdio (baseline) and
/// streamable HTTP, not the legacy SSE transport.
pub fn capabilities() -> AgentCapabilities {
    AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(
            PromptCapabilities::new()
                .image(true)
                .audio(false)
                .embedded_context(true),
        )
        .mcp_capabilities(McpCapabilities::new().http(true).sse(false))
        .session_capabilities(SessionCapabilities::new().close(SessionCloseCapabilities::new()))
}

/// One method when the provider the settings name reads its key from a variable: set
/// it (the description says which) where the editor starts `claw-tui acp`. None for
/// the offline demo provider or one with a base URL and no key (a local server).
pub fn auth_methods(base: &Base) -> Vec<AuthMethod> {
    let settings = base.settings(None);
    let (provider, key_var) = match &settings {
        Err(ConfigError::MissingKey {
            provider, key_var, ..
        }) => (
            provider.clone(),
            format!("the environment variable {key_var}"),
        ),
        Ok(settings) if settings.provider.api_key.is_some() => {
            // The source names the variable (or the config file that holds the key).
            (
                settings.provider.name.clone(),
                settings.provider.api_key_source.clone(),
            )
        }
        _ => return Vec::new(),
    };
    vec![AuthMethod::Agent(
        AuthMethodAgent::new(API_KEY_METHOD, format!("{provider} API key")).description(format!(
            "claw-tui reads the {provider} provider's API key from {key_var}: set it in \
                 the environment your editor starts claw-tui with (or api_key_env / \
                 api_key in [providers.{provider}] of claw-tui's config.toml), then \
                 restart the agent."
        )),
    )]
}

/// `authenticate`: the key is read again (the config file may hold it now); succeeds
/// when the settings resolve, else names the variable to set.
pub fn authenticate(base: &Base, request: &AuthenticateRequest) -> Result<(), Error> {
    if request.method_id.0.as_ref() != API_KEY_METHOD {
        return Err(Error::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "unknown authentication method \"{}\"; claw-tui offers \"{API_KEY_METHOD}\"",
                request.method_id.0
            ),
        ));
    }
    base.settings(None)
        .map(|_| ())
        .map_err(|e| settings_error(&e))
}
