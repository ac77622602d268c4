//! The prompt-cache key: one per conversation, sent where caching is on, and left out
//! once a server refused it. LiteLLM answers 400 to `prompt_cache_key` for model groups
//! backed by Anthropic, and other gateways refuse unknown fields: the call is sent once
//! more without it, the provider remembers not to send it again, and the retry line
//! says why, once.

use super::RemoteProvider;
use crate::{LlmEvent, LlmMessage, LlmRequest, LlmStream};
use futures::StreamExt;
use sha2::{Digest, Sha256};
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
    /// The prompt-cache key sent with `request` (before its images are prepared), when
    /// caching is on.
    pub(super) fn cache_key(&self, request: &LlmRequest) -> Option<String> {
        (self.config.remote().cache && !self.cache_key_refused.is_set())
            .then(|| cache_key(request))
            .flatten()
    }

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

/// A prompt-cache key stable for one conversation: a hash of its first user message
/// (text and time), which every later request of the session starts with, so the
/// server routes them all to the same cache. `None` before there is a user message.
pub(super) fn cache_key(request: &LlmRequest) -> Option<String> {
    let first = request.messages.iter().find_map(|m| match m {
        LlmMessage::User(user) => Some(user),
        _ => None,
    })?;
    let mut hash = Sha256::new();
    hash.update(first.timestamp.to_le_bytes());
    hash.update(first.content.as_bytes());
    let digest = hash.finalize();
    let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    Some(format!("claw-{hex}"))
}
