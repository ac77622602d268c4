//! The words of failures: server error bodies, HTTP statuses and transport errors turned
//! into messages that say what happened and what to do.

use super::accumulate::excerpt;
use super::transport::Target;
use std::time::Duration;

/// ", still failing after N retries" once any retry happened.
pub(crate) fn after_retries(retries: u32) -> String {
    match retries {
        0 => String::new(),
        1 => ", still failing after 1 retry".to_owned(),
        n => format!(", still failing after {n} retries"),
    }
}

/// A duration as people write it: `200 ms`, `120 s`.
pub(crate) fn human(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// A reqwest error with its causes, e.g. `... : Connection refused (os error 111)`.
pub(crate) fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = cause.source();
    }
    text
}

/// The server's own explanation in an error body (Anthropic, OpenAI, Ollama and vLLM
/// shapes), else the start of the body.
pub(crate) fn server_message(body: &str) -> String {
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(body) {
        let error = value.get("error").unwrap_or(&value);
        if let Some(text) = error.as_str() {
            return excerpt(text, 500);
        }
        let message = error
            .get("message")
            .or_else(|| value.get("detail"))
            .and_then(|m| m.as_str());
        if let Some(message) = message {
            let kind = error.get("type").and_then(|t| t.as_str());
            return excerpt(
                &match kind {
                    Some(kind) if !kind.is_empty() => format!("{kind}: {message}"),
                    _ => message.to_owned(),
                },
                500,
            );
        }
    }
    let body = body.trim();
    if body.is_empty() {
        "(empty response body)".to_owned()
    } else {
        excerpt(body, 200)
    }
}

/// What a non-retryable HTTP status means for the user.
pub(crate) fn status_message(status: u16, server: &str, target: &Target) -> String {
    let Target {
        provider,
        model,
        url,
        key_sent,
        key_source,
    } = target;
    match status {
        401 | 403 if *key_sent => format!(
            "{provider} rejected the API key (HTTP {status}: {server}). The key came from \
             {key_source}: check that it is correct, active and allowed to use model \
             \"{model}\", or replace it there."
        ),
        401 | 403 => format!(
            "{provider} requires an API key (HTTP {status}: {server}), but none was sent. \
             Set one in {key_source}."
        ),
        404 => format!(
            "{provider} answered HTTP 404 for model \"{model}\" at {url}: {server}. Check the \
             model name and the base URL."
        ),
        400 | 422 => format!(
            "{provider} rejected the request for model \"{model}\" (HTTP {status}): {server}"
        ),
        413 => format!(
            "{provider} refused the request as too large (HTTP 413): {server}. Shorten the \
             conversation or start a new one."
        ),
        _ => format!("{provider} answered HTTP {status} for model \"{model}\": {server}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_messages_of_common_shapes() {
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}}"#;
        assert_eq!(
            server_message(anthropic),
            "invalid_request_error: max_tokens: too big"
        );
        let openai = r#"{"error":{"message":"The model `x` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#;
        assert!(server_message(openai).ends_with("The model `x` does not exist"));
        assert_eq!(
            server_message(r#"{"error":"model 'llama9' not found"}"#),
            "model 'llama9' not found"
        );
        assert_eq!(
            server_message(r#"{"object":"error","message":"bad","type":"BadRequestError"}"#),
            "BadRequestError: bad"
        );
        assert_eq!(server_message("  "), "(empty response body)");
        assert_eq!(server_message(&"x".repeat(300)).chars().count(), 200);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human(Duration::from_millis(200)), "200 ms");
        assert_eq!(human(Duration::from_secs(120)), "120 s");
        assert_eq!(human(Duration::from_millis(1500)), "1.5 s");
    }
}
