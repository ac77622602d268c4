//! Sending one call: the key checked and the headers made first, then the body handed
//! to the transport and the call reported to the request log's tap.

use super::RemoteProvider;
use crate::transport::{self, HttpRequest, Payload, Target};
use crate::{KeyError, LlmRequest, LlmStream, RequestOrigin};
use bytes::Bytes;
use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

impl RemoteProvider {
    /// Sends one call, reporting it to `origin`'s tap when one is attached.
    pub(super) fn send(
        &self,
        request: LlmRequest,
        cancel: CancellationToken,
        origin: Option<&RequestOrigin>,
    ) -> LlmStream {
        let ready = match self.ready() {
            Ok(ready) => ready,
            Err(e) => return transport::failed(&request.model, e.to_string()),
        };
        let body = match self.request_body(&request) {
            Ok(body) => Payload::Bytes(Bytes::from(body)),
            Err(e) => {
                return transport::failed(
                    &request.model,
                    format!("Cannot encode the request as JSON: {e}"),
                );
            }
        };
        self.send_body(ready, &request.model, body, cancel, origin)
    }

    /// Whether a key is sent, and the headers; refused before sending when the official
    /// endpoint would only say 401, or the key cannot be a header.
    pub(super) fn ready(&self) -> Result<(bool, HeaderMap), KeyError> {
        let key_sent = self.check_key()?;
        Ok((key_sent, self.headers()?))
    }

    /// Sends `body`, made for `model`, with what [`RemoteProvider::ready`] gave.
    pub(super) fn send_body(
        &self,
        (key_sent, headers): (bool, HeaderMap),
        model: &str,
        body: Payload,
        cancel: CancellationToken,
        origin: Option<&RequestOrigin>,
    ) -> LlmStream {
        let remote = self.config.remote();
        let url = self.config.url();
        // The bytes handed to the HTTP client are the ones recorded.
        let target = (
            remote.name.as_str(),
            self.config.format(),
            model,
            url.as_str(),
        );
        let watch = origin.and_then(|o| o.sent(target, &headers, &body));
        let http = HttpRequest {
            client: self.client.clone(),
            headers,
            body,
            target: Target {
                provider: remote.name.clone(),
                model: model.to_owned(),
                url,
                key_sent,
                key_source: remote.api_key_source.clone(),
            },
            status: watch.as_ref().map(|w| w.status_cell()),
        };
        let decoder = self.config.decoder(model);
        let stream = transport::stream(http, decoder, self.limits(), cancel);
        match watch {
            Some(watch) => watch.watch(stream),
            None => stream,
        }
    }
}
