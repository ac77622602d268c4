//! Why a provider cannot be made, why a key cannot be sent, and why the model list
//! could not be had. A failed call is not among them: it arrives as
//! [`super::LlmEvent::Error`], in the stream.

/// Why a provider could not be created.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// The HTTP client failed to initialise (e.g. no TLS roots).
    #[error("Cannot set up the HTTP client: {0}")]
    HttpClient(String),
    /// The built-in demo script does not parse (a broken build).
    #[error("assets/demo.toml is invalid: {0}")]
    DemoScript(String),
    /// The demo model was asked for as an HTTP provider.
    #[error("the demo model is not an HTTP provider")]
    NotHttp,
}

/// Why the configured API key is not sent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The official endpoint needs a key and none is set.
    #[error("{}", missing_key(.provider, .key_source, *.anthropic))]
    Missing {
        /// The provider's name, e.g. `OpenAI`.
        provider: String,
        /// Where the key is read from, e.g. `OPENAI_API_KEY`.
        key_source: String,
        /// Whether the provider is Anthropic's (whose console is named).
        anthropic: bool,
    },
    /// The key holds characters a header cannot carry.
    #[error(
        "The {provider} API key from {key_source} contains characters that cannot be sent in \
         a header; check it for stray quotes or line breaks."
    )]
    NotAHeader {
        /// The provider's name.
        provider: String,
        /// Where the key is read from.
        key_source: String,
    },
}

/// The words of [`KeyError::Missing`]: where to put a key, or what to point at instead.
fn missing_key(provider: &str, key_source: &str, anthropic: bool) -> String {
    if anthropic {
        format!(
            "No Anthropic API key is set. Put your key in {key_source} (get one at \
             console.anthropic.com), or point base_url at a server that needs none."
        )
    } else {
        format!(
            "No {provider} API key is set. Put your key in {key_source}, or point base_url at \
             a server that needs none (e.g. Ollama at http://localhost:11434/v1)."
        )
    }
}

/// Why the server's model list could not be had (logged; completion goes on without it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelsError {
    /// The official endpoint was not asked: no key is set.
    #[error("no {provider} API key is set ({key_source}), so the model list was not asked for")]
    NoKey {
        /// The provider's name.
        provider: String,
        /// Where the key is read from.
        key_source: String,
    },
    /// The key cannot be sent.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// No answer from the server.
    #[error("cannot reach {url} for the model list: {reason}")]
    Unreachable {
        /// The endpoint.
        url: String,
        /// What the connection said.
        reason: String,
    },
    /// The answer's body broke off.
    #[error("the model list from {url} could not be read: {reason}")]
    Unreadable {
        /// The endpoint.
        url: String,
        /// What the connection said.
        reason: String,
    },
    /// An HTTP error status.
    #[error("{provider} refused the model list at {url} (HTTP {status}): {message}")]
    Refused {
        /// The provider's name.
        provider: String,
        /// The endpoint.
        url: String,
        /// The status code.
        status: u16,
        /// The server's own message.
        message: String,
    },
    /// A body that is not a model list (a login page, another shape).
    #[error(
        "{provider} answered {url} with something other than a model list ({reason}): {excerpt}"
    )]
    NotAList {
        /// The provider's name.
        provider: String,
        /// The endpoint.
        url: String,
        /// What the JSON parser said.
        reason: String,
        /// The start of the body.
        excerpt: String,
    },
}
