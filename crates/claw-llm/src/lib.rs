//! The model backends: the wire formats (Anthropic, OpenAI chat, Responses), HTTP and
//! SSE, the request tap and the offline demo, each implementing the agent's provider
//! contract (`agent::provider`, re-exported here).

mod accumulate;
pub mod anthropic;
pub mod body;
pub mod demo;
mod error;
pub mod images;
mod messages;
mod models;
pub mod openai;
mod overflow;
pub mod pricing;
pub mod remote;
pub mod responses;
pub mod retry;
pub mod secret;
pub mod sections;
pub mod sse;
pub mod tap;
mod transport;
mod whole;

pub use anthropic::AnthropicConfig;
pub use error::{KeyError, ModelsError, SetupError};
pub use images::accepts_images;
pub use openai::{MaxTokensField, OpenAiCompat, OpenAiConfig, SystemRole};
pub use pricing::ModelPrices;
pub use remote::{
    AnthropicProvider, OpenAiProvider, RemoteProvider, RemoteSettings, ResponsesProvider,
    WireConfig,
};
pub use responses::ResponsesConfig;
pub use retry::RetryPolicy;
pub use secret::Secret;
pub use sections::WireFormat;
pub use tap::{CallSink, FinishedCall, RequestOrigin, RequestTap, SentCall};

pub use claw_agent::provider::{
    CallOrigin, LlmEvent, LlmMessage, LlmRequest, LlmStream, ModelListError, Provider,
    SharedRequest,
};
use std::time::Duration;

/// Default longest silence from a server before a call is given up.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Default longest time one call may take, retries included (keep-alives do not extend
/// it).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Default longest TCP/TLS connect.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
