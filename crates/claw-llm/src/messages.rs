//! The words of failures: server error bodies, HTTP statuses and transport errors turned
//! into messages that say what happened and what to do.

use super::accumulate::excerpt;
use super::sse::BodyKind;
use super::transport::Target;
use std::time::Duration;

/// The setting that bounds a server's silence, as written in the config file.
pub(crate) const IDLE_TIMEOUT_SETTING: &str = "[agent] idle_timeout_secs";
/// The setting that bounds a whole call, as written in the config file.
pub(crate) const REQUEST_TIMEOUT_SETTING: &str = "[agent] request_timeout_secs";

/// ", still failing after N retries" once any retry happened.
pub(crate) fn after_retries(retries: u32) -> String {
    match retries {
        0 => String::new(),
        1 => ", still failing after 1 retry".to_owned(),
        n => format!(", still failing after {n} retries"),
    }
}

/// A duration as people write it: `200 ms`, `120 s`, `30 min`, `2 h 5 min`.
pub(crate) fn human(d: Duration) -> String {
    let secs = d.as_secs();
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else if secs < 180 && d.subsec_millis() == 0 {
        format!("{secs} s")
    } else if secs < 180 {
        format!("{:.1} s", d.as_secs_f64())
    } else if secs < 3600 {
        match secs % 60 {
            0 => format!("{} min", secs / 60),
            s => format!("{} min {s} s", secs / 60),
        }
    } else {
        match secs % 3600 / 60 {
            0 => format!("{} h", secs / 3600),
            m => format!("{} h {m} min", secs / 3600),
        }
    }
}

/// `text` about `error` with the URL reqwest names in it stripped of credentials.
fn without_credentials(error: &reqwest::Error, text: String) -> String {
    match error.url() {
        Some(url) => super::tap::redact_url_in(&text, url.as_str()),
        None => text,
    }
}

/// A reqwest error with its causes, e.g. `... : Connection refused (os error 111)`;
/// credentials in its URL are redacted.
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
    without_credentials(error, text)
}

/// The innermost cause of a reqwest error (what actually went wrong, e.g. `Connection
/// refused (os error 111)`), followed by the outermost description when they differ.
pub(crate) fn cause_first(error: &reqwest::Error) -> String {
    let top = error.to_string();
    let mut root = None;
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        root = Some(cause.to_string());
        source = cause.source();
    }
    let text = match root {
        Some(root) if !top.contains(&root) => format!("{root} ({top})"),
        _ => top,
    };
    without_credentials(error, text)
}

/// Why a request that got no response is retried, cause first so that a shortened retry
/// line still says it.
pub(crate) fn retry_reason(error: &reqwest::Error) -> String {
    let what = if error.is_connect() {
        "cannot connect"
    } else if error.is_timeout() {
        "timed out"
    } else {
        "request failed"
    };
    format!("{what}: {}", cause_first(error))
}

/// The message for an `https://` URL whose server answered the TLS handshake in plain
/// HTTP (a local server without TLS, usually), if that is what `error` is.
pub(crate) fn tls_mismatch(url: &str, error: &reqwest::Error) -> Option<String> {
    let url = &super::tap::redact_url(url);
    let scheme = url.get(..8)?;
    if !scheme.eq_ignore_ascii_case("https://") {
        return None;
    }
    let detail = describe(error);
    // rustls' words for a first TLS record that is not TLS at all (e.g. `HTTP/1.1 400`).
    let plain = ["InvalidContentType", "corrupt message", "record overflow"]
        .iter()
        .any(|sign| detail.contains(sign));
    plain.then(|| {
        format!(
            "Could not talk TLS (https) to {url}: the server did not answer the TLS \
             handshake ({}). It probably serves plain HTTP, as local servers such as Ollama, \
             vLLM and llama.cpp usually do: write http:// instead of https:// in the base \
             URL.",
            cause_of(error)
        )
    })
}

/// The innermost cause of `error` alone.
fn cause_of(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text = cause.to_string();
        source = cause.source();
    }
    without_credentials(error, text)
}

/// The message for a success status whose body is HTML or JSON rather than events (a
/// proxy that ignores `stream`, a base URL pointing at a web page, a login portal).
pub(crate) fn not_a_stream(provider: &str, kind: BodyKind, declared: &str, body: &str) -> String {
    let declared = if declared.is_empty() {
        "no content type"
    } else {
        declared
    };
    let shown = match kind {
        BodyKind::Json => server_message(body),
        BodyKind::Html => html_summary(body),
    };
    format!(
        "{provider} answered with {} ({declared}) instead of an event stream: {shown}. Check \
         that the base URL points at the API itself (for OpenAI-compatible servers it \
         usually ends in /v1) and that the server supports streaming.",
        kind.name()
    )
}

/// What an HTML page is, in one line: its title, else the start of its markup.
fn html_summary(page: &str) -> String {
    let lower = page.to_ascii_lowercase();
    let title = lower
        .find("<title")
        .and_then(|start| Some(start + lower[start..].find('>')? + 1))
        .and_then(|start| Some((start, start + lower[start..].find("</title")?)))
        .map(|(start, end)| {
            page[start..end]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|title| !title.is_empty());
    match title {
        Some(title) => format!("a page titled \"{}\"", excerpt(&title, 120)),
        None => excerpt(&page.split_whitespace().collect::<Vec<_>>().join(" "), 200),
    }
}

/// The message for a server that asks (`Retry-After`) to wait longer than `cap`.
pub(crate) fn too_long_a_wait(
    provider: &str,
    what: &str,
    reason: &str,
    wait: Duration,
    cap: Duration,
) -> String {
    let at = chrono::Duration::from_std(wait)
        .ok()
        .and_then(|d| chrono::Local::now().checked_add_signed(d))
        .map(|t| format!(" (around {})", t.format("%Y-%m-%d %H:%M")))
        .unwrap_or_default();
    format!(
        "{provider} {what} ({reason}) and asked to wait {} before trying again (Retry-After), \
         longer than the {} claw-tui waits on its own, so it did not retry. Send a message \
         again after that time{at}.",
        human(wait),
        human(cap)
    )
}

/// What the user reads when the server refused the request as too long for the model's
/// context window: only what happened. What to do depends on what the loop did next
/// (it compacts and retries on its own when it may), so the loop adds that advice.
pub(crate) fn overflow_message(status: u16, server: &str, target: &Target) -> String {
    let Target {
        provider, model, ..
    } = target;
    format!(
        "{provider} rejected the request because the conversation no longer fits the context \
         window of model \"{model}\" (HTTP {status}: {server})."
    )
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
            "{provider} answered HTTP 404 for model \"{model}\" at {}: {server}. Check the \
             model name and the base URL.",
            super::tap::redact_url(url)
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
        assert_eq!(human(Duration::from_secs(30 * 60)), "30 min");
        assert_eq!(human(Duration::from_secs(185)), "3 min 5 s");
        assert_eq!(human(Duration::from_secs(3600)), "1 h");
        assert_eq!(human(Duration::from_secs(4 * 3600 + 300)), "4 h 5 min");
        assert_eq!(human(Duration::from_secs(86_400)), "24 h");
    }

    #[test]
    fn html_pages_are_summed_up_by_their_title() {
        assert_eq!(
            html_summary(
                "<html><HEAD><Title>
  Sign in
</TITLE></head>"
            ),
            "a page titled \"Sign in\""
        );
        assert_eq!(html_summary("<p>Bad\n  gateway</p>"), "<p>Bad gateway</p>");
    }
}
