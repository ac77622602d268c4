//! rmcp's errors in words for people. Its transport errors print the transport's Rust
//! type (`Transport [claw_runtime::mcp::client::InOrder<rmcp::transport::worker::…>]
//! error: …`) and its contexts are code paths (`when send initialize request`); here the
//! cause is taken from the error's own chain instead.

use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::DynamicTransportError;
use std::error::Error;

/// Why the handshake with a server failed.
pub(super) fn handshake(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            format!("{} (while trying to {context})", transport(error))
        }
        other => other.to_string(),
    }
}

/// Why a request to a connected server failed.
pub(super) fn service(error: &ServiceError) -> String {
    match error {
        ServiceError::TransportSend(error) => transport(error),
        other => other.to_string(),
    }
}

/// A transport's error and its causes, without the transport's type name.
fn transport(error: &DynamicTransportError) -> String {
    chain(&*error.error)
}

/// `error: cause: cause…`, a cause its parent already quotes left out.
fn chain(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let line = cause.to_string();
        if !line.is_empty() && !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("error sending request")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("Connection refused (os error 111)")]
    struct Inner;

    #[test]
    fn causes_are_joined_once_and_no_type_name_shows() {
        assert_eq!(
            chain(&Outer(Inner)),
            "error sending request: Connection refused (os error 111)"
        );
        type Stdio = super::super::InOrder<super::super::stdio::StdioTransport>;
        let refused = std::io::Error::other(Outer(Inner));
        let dynamic = DynamicTransportError::new::<Stdio, rmcp::RoleClient>(refused);
        assert!(
            dynamic.to_string().contains("InOrder<"),
            "rmcp's own words name the type: {dynamic}"
        );
        let text = handshake(&ClientInitializeError::TransportError {
            error: dynamic,
            context: "send initialize request".into(),
        });
        assert_eq!(
            text,
            "error sending request: Connection refused (os error 111) \
             (while trying to send initialize request)"
        );
    }
}
