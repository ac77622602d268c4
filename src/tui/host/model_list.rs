//! The server's model list for `/model` completion, fetched off the UI loop the first
//! time `/model` is typed (never at start-up).

use super::MsgSender;
use crate::llm::Provider;
use crate::tui::msg::Msg;
use std::sync::Arc;

/// Asks `provider` for its models in a task. A non-empty list comes back as
/// `Msg::ModelsListed`; a failure is only logged, and completion keeps offering the
/// configured model names.
pub fn fetch(provider: Arc<dyn Provider>, tx: MsgSender) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        match provider.list_models().await {
            Ok(models) if models.is_empty() => {
                tracing::debug!("the provider offers no model list");
            }
            Ok(models) => {
                tracing::debug!("the server offers {} models", models.len());
                let _ = tx.send(Msg::ModelsListed(models));
            }
            Err(e) => tracing::warn!("cannot list the server's models: {e}"),
        }
    })
}
