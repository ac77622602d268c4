//! Sending a shared request (one that keeps the history it borrows): its body is not
//! built whole but written from the request as it is sent, in chunks, once per
//! attempt, and once more by the request log. A long session's request so never holds
//! a copy of the conversation as bytes. A body no larger than one chunk is written once
//! and kept, as a request built any other way is: streaming it would hold as much.

use super::{RemoteProvider, WireConfig};
use crate::body::{self, BodyOut, BodyPlan, Measured, WriteBody};
use crate::images::{needs_preparing, prepare_images};
use crate::transport::{self, CHUNK, Payload};
use crate::{LlmStream, RequestOrigin, SharedRequest};
use bytes::Bytes;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

impl RemoteProvider {
    /// Sends one call on `request`, reporting it to `origin`'s tap when one is attached.
    pub(super) fn send_shared(
        &self,
        mut request: Arc<SharedRequest>,
        cancel: CancellationToken,
        origin: Option<&RequestOrigin>,
    ) -> LlmStream {
        let ready = match self.ready() {
            Ok(ready) => ready,
            Err(e) => return transport::failed(&request.request().model, e.to_string()),
        };
        // From the request as the agent made it, as `request_body` does.
        let cache_key = self.cache_key(request.request());
        if needs_preparing(request.request()) {
            let Some(only) = Arc::get_mut(&mut request) else {
                // Someone else holds it: prepared on a copy, whose body is kept whole.
                return self.send(request.request().clone(), cancel, origin);
            };
            only.edit(prepare_images);
        }
        let model = request.request().model.clone();
        let writer = Written {
            plan: self.config.plan(request.request(), cache_key.as_deref()),
            config: self.config.clone(),
            request,
        };
        let body = match body::measure(Arc::new(writer), CHUNK) {
            Ok(Measured::Whole(bytes)) => Payload::Bytes(Bytes::from(bytes)),
            Ok(Measured::Source(source)) => Payload::Written(source),
            Err(e) => {
                return transport::failed(
                    &model,
                    format!("Cannot encode the request as JSON: {e}"),
                );
            }
        };
        self.send_body(ready, &model, body, cancel, origin)
    }
}

/// Writes the body of a prepared shared request: the fields planned once, the
/// conversation anew each time from the request's messages.
struct Written {
    request: Arc<SharedRequest>,
    config: Arc<WireConfig>,
    plan: BodyPlan,
}

impl WriteBody for Written {
    fn write_to(&self, out: &mut dyn BodyOut) -> Result<(), serde_json::Error> {
        let request = self.request.request();
        self.plan.write(out, |list| self.config.list(request, list))
    }
}
