//! A request that owns the history it borrows, so a provider can keep it for as long
//! as its call lasts: the HTTP provider writes the body while it sends it, and writes
//! it again for a retry and for the request log, rather than holding one copy of the
//! whole body for the call's length.

use super::LlmRequest;
use crate::history::History;
use std::sync::Arc;

/// [`LlmRequest`] under the one lifetime parameter `self_cell` expects.
type Borrowing<'a> = LlmRequest<'a>;

self_cell::self_cell!(
    struct Cell {
        owner: Arc<History>,
        #[covariant]
        dependent: Borrowing,
    }
);

/// An [`LlmRequest`] together with the history its messages borrow from (the agent's
/// own, shared, or a view made for this one request). Made once per call and handed to
/// [`super::Provider::stream_shared`] as an `Arc`; nothing in it is copied.
pub struct SharedRequest(Cell);

impl SharedRequest {
    /// The request `build` makes from `history`, borrowing its messages.
    pub fn new(
        history: Arc<History>,
        build: impl for<'a> FnOnce(&'a History) -> LlmRequest<'a>,
    ) -> Self {
        Self(Cell::new(history, |history: &Arc<History>| build(history)))
    }

    /// A request that borrows nothing (its messages are its own).
    pub fn owned(request: LlmRequest<'static>) -> Self {
        Self::new(Arc::default(), move |_| request)
    }

    /// The request.
    pub fn request(&self) -> &LlmRequest<'_> {
        self.0.borrow_dependent()
    }

    /// Changes the request in place (a provider replacing what its model cannot take;
    /// a message it changes becomes its own copy, the history is not touched).
    pub fn edit(&mut self, change: impl for<'a> FnOnce(&mut LlmRequest<'a>)) {
        self.0.with_dependent_mut(|_, request| change(request));
    }

    /// Hands the request to `use_it` as a plain [`LlmRequest`]: moved out when nobody
    /// else holds this one, else cloned (the clone still borrows the history).
    pub fn consume<R>(this: Arc<Self>, use_it: impl for<'a> FnOnce(LlmRequest<'a>) -> R) -> R {
        match Arc::try_unwrap(this) {
            Ok(mut only) => only.0.with_dependent_mut(|_, request| {
                use_it(LlmRequest {
                    system_prompt: std::mem::take(&mut request.system_prompt),
                    messages: std::mem::take(&mut request.messages),
                    tools: std::mem::take(&mut request.tools),
                    model: std::mem::take(&mut request.model),
                    thinking: request.thinking,
                })
            }),
            Err(shared) => use_it(shared.request().clone()),
        }
    }
}

impl std::fmt::Debug for SharedRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SharedRequest")
            .field(self.request())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::default_convert_to_llm;
    use crate::provider::{Held, LlmMessage};
    use crate::types::{Message, ThinkingLevel};

    fn request(history: &History) -> LlmRequest<'_> {
        LlmRequest {
            system_prompt: "s".into(),
            messages: default_convert_to_llm(history),
            tools: Vec::new(),
            model: "m".into(),
            thinking: ThinkingLevel::Off,
        }
    }

    #[test]
    fn the_request_borrows_the_history_it_keeps() {
        let history = Arc::new(History::from(vec![Message::user("a"), Message::user("b")]));
        let mut shared = SharedRequest::new(history.clone(), request);
        // The messages point into the history: nothing was copied.
        let first = match &shared.request().messages[0] {
            LlmMessage::User(Held::Borrowed(user)) => std::ptr::from_ref(*user),
            other => panic!("copied: {other:?}"),
        };
        let Message::User(original) = &history[0] else {
            panic!("not a user message");
        };
        assert!(std::ptr::eq(first, original));
        // An edit copies the message it changes, and leaves the history alone.
        shared.edit(|request| {
            if let LlmMessage::User(user) = &mut request.messages[1] {
                user.to_mut().content = "changed".into();
            }
        });
        assert_eq!(history[1].preview_text(), "b");
        let texts = SharedRequest::consume(Arc::new(shared), |request| {
            request
                .messages
                .iter()
                .map(|m| match m {
                    LlmMessage::User(u) => u.content.clone(),
                    _ => String::new(),
                })
                .collect::<Vec<_>>()
        });
        assert_eq!(texts, ["a", "changed"]);
    }

    #[test]
    fn a_request_held_elsewhere_is_cloned_not_taken() {
        let shared = Arc::new(SharedRequest::new(
            Arc::new(History::from(vec![Message::user("a")])),
            request,
        ));
        let kept = shared.clone();
        let model = SharedRequest::consume(shared, |request| request.model);
        assert_eq!(model, "m");
        assert_eq!(kept.request().messages.len(), 1);
        assert_eq!(
            SharedRequest::consume(
                Arc::new(SharedRequest::owned(
                    request(&History::default()).into_owned()
                )),
                |r| r.system_prompt
            ),
            "s"
        );
    }
}
