//! Keeping secrets out of what is shown and recorded: header values and URL parts that
//! carry credentials are replaced by [`REDACTED`].

use reqwest::header::HeaderMap;

/// What replaces a secret header value or URL parameter in the record.
pub const REDACTED: &str = "[redacted]";

/// Headers as recorded: a value the client marked sensitive, or whose name says it
/// carries a credential, is replaced by [`REDACTED`].
pub fn redact_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_owned();
            let shown = if value.is_sensitive() || is_secret_name(&name) {
                REDACTED.to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, shown)
        })
        .collect()
}

fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "authorization",
        "auth",
        "cookie",
        "key",
        "token",
        "secret",
        "signature",
        "sig",
        "pass",
        "credential",
        "code",
        "session",
        "jwt",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// `url` with its credentials redacted: the user name and password of
/// `user:password@host`, and the values of query parameters named like credentials
/// (`?key=`, `api_key=`, `token=`: some gateways take the key there). Wherever a base
/// URL is shown (the request log, errors, `/status`, the log file) it goes through here.
pub fn redact_url(url: &str) -> String {
    let (rest, fragment) = match url.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (url, None),
    };
    let (base, query) = match rest.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (rest, None),
    };
    let mut out = redact_userinfo(base);
    if let Some(query) = query {
        let parts: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if is_secret_name(name) => format!("{name}={REDACTED}"),
                _ => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&parts.join("&"));
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// `base` (a URL without query) with the `user:password@` of its authority redacted.
fn redact_userinfo(base: &str) -> String {
    let start = base.find("://").map_or(0, |i| i + 3);
    let authority_end = base[start..].find('/').map_or(base.len(), |i| start + i);
    match base[start..authority_end].rfind('@') {
        Some(at) => format!("{}{REDACTED}{}", &base[..start], &base[start + at..]),
        None => base.to_owned(),
    }
}

/// `text` (an error's words) with `url`, wherever it appears, redacted.
pub fn redact_url_in(text: &str, url: &str) -> String {
    let shown = redact_url(url);
    if shown == url || url.is_empty() {
        return text.to_owned();
    }
    text.replace(url, &shown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{AUTHORIZATION, HeaderValue};

    #[test]
    fn secrets_are_redacted() {
        let mut headers = HeaderMap::new();
        let mut auth = HeaderValue::from_static("Bearer sk-live-1");
        auth.set_sensitive(true);
        headers.insert(AUTHORIZATION, auth);
        headers.insert("x-api-key", HeaderValue::from_static("sk-ant-2"));
        headers.insert("x-goog-token", HeaderValue::from_static("t-3"));
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        let shown = format!("{:?}", redact_headers(&headers));
        for secret in ["sk-live-1", "sk-ant-2", "t-3"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(shown.contains("text/event-stream"), "{shown}");
        assert_eq!(
            redact_url("https://h/v1?alt=sse&key=abc&api_key=d"),
            "https://h/v1?alt=sse&key=[redacted]&api_key=[redacted]"
        );
        assert_eq!(redact_url("https://h/v1/messages"), "https://h/v1/messages");
        assert_eq!(
            redact_url("http://user:pa@ss@gw.example:8080/v1?token=t&model=m#top"),
            "http://[redacted]@gw.example:8080/v1?token=[redacted]&model=m#top"
        );
        assert_eq!(
            redact_url("https://h/v1?sig=s&x=1&password=p"),
            "https://h/v1?sig=[redacted]&x=1&password=[redacted]"
        );
        assert_eq!(
            redact_url("https://h/v1?pass=p&code=c&session=s&api-version=2024"),
            "https://h/v1?pass=[redacted]&code=[redacted]&session=[redacted]&api-version=2024"
        );
        assert_eq!(
            redact_url_in("error for url (http://u:p@h/v1)", "http://u:p@h/v1"),
            "error for url (http://[redacted]@h/v1)"
        );
    }
}
