//! A server that refuses the prompt-cache key: LiteLLM answers 400 to
//! `prompt_cache_key` for model groups backed by Anthropic, and other gateways refuse
//! unknown fields. The call is sent once more without it, the provider remembers not
//! to send it again, and the retry line says why, once.

use super::RemoteProvider;
use crate::{LlmEvent, LlmStream};
use futures::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The optional field that servers refuse.
const CACHE_KEY_FIELD: &str = "prompt_cache_key";

/// Whether this provider stopped sending the prompt-cache key after a refusal.
#[derive(Clone, Debug, Default)]
pub(super) struct CacheKeyRefused(Arc<AtomicBool>);

impl CacheKeyRefused {
    /// Whether the key is left out from now on.
    pub(super) fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Whether `event` ends a call the server refused for the prompt-cache key: an HTTP
/// 400 naming the field, before anything was streamed.
fn refuses_cache_key(event: &LlmEvent) -> bool {
    let LlmEvent::Error(message) = event else {
        return false;
    };
    message.content.is_empty()
        && message
            .error_message
            .as_deref()
            .is_some_and(|e| e.contains("HTTP 400") && e.contains(CACHE_KEY_FIELD))
}

impl RemoteProvider {
    /// `first`, the call as sent with a cache key; if the server refuses the key, the
    /// call `again` makes once the key is left out (announced as a retry) instead of
    /// the refusal.
    pub(super) fn falling_back(
        &self,
        first: LlmStream,
        again: impl FnOnce(&RemoteProvider) -> LlmStream + Send + 'static,
    ) -> LlmStream {
        let provider = self.sibling();
        let mut again = Some(again);
        first
            .flat_map(move |event| {
                let Some(again) = again.take_if(|_| refuses_cache_key(&event)) else {
                    return futures::stream::iter([event]).boxed();
                };
                provider.cache_key_refused.0.store(true, Ordering::Relaxed);
                let reason = format!(
                    "{} does not take {CACHE_KEY_FIELD}: sent again without it, and \
                     without it from now on",
                    provider.config.remote().name
                );
                let notice = [
                    LlmEvent::RetryStart {
                        attempt: 1,
                        max_attempts: 1,
                        delay_ms: 0,
                        reason,
                    },
                    LlmEvent::RetryEnd { attempt: 1 },
                ];
                futures::stream::iter(notice)
                    .chain(again(&provider))
                    .boxed()
            })
            .boxed()
    }

    /// A handle on the same configuration, client and memory of refusals.
    fn sibling(&self) -> RemoteProvider {
        RemoteProvider {
            config: self.config.clone(),
            client: self.client.clone(),
            cache_key_refused: self.cache_key_refused.clone(),
        }
    }
}
