//! Web tools: `web_search` (Brave Search API) and `web_fetch` (a page reader guarded against SSRF).

mod extract;
mod fetch;
mod search;
mod ssrf;

pub use fetch::WebFetchTool;
pub use search::WebSearchTool;
pub use ssrf::blocked_reason;

use serde::Deserialize;
use std::error::Error as _;
use std::time::Duration;

/// Settings of the web tools, the `[web]` section of the config file.
#[derive(Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct WebConfig {
    /// Brave Search API key; the `BRAVE_API_KEY` environment variable takes precedence.
    pub brave_api_key: Option<String>,
    /// Base URL of the Brave Search API (default `https://api.search.brave.com`).
    pub search_base_url: Option<String>,
    /// Hosts `web_fetch` may reach even if they resolve to loopback or private addresses.
    pub allow_hosts: Vec<String>,
}

impl std::fmt::Debug for WebConfig {
    // Hand-written so the API key can never reach a log through `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebConfig")
            .field(
                "brave_api_key",
                &self.brave_api_key.as_ref().map(|_| "<redacted>"),
            )
            .field("search_base_url", &self.search_base_url)
            .field("allow_hosts", &self.allow_hosts)
            .finish()
    }
}

/// How long one tool call may take, redirects and body included.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The User-Agent both tools send.
pub(crate) const USER_AGENT: &str = concat!("claw-tui/", env!("CARGO_PKG_VERSION"));

/// Reads the body of `resp`, stopping at `cap` bytes; the flag says whether more was left unread.
pub(crate) async fn read_capped(
    resp: &mut reqwest::Response,
    cap: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// A transport error with its causes, which reqwest's own message leaves out.
pub(crate) fn describe_error(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        "the request timed out".to_owned()
    } else if e.is_connect() {
        "could not connect".to_owned()
    } else {
        "the request failed".to_owned()
    };
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The first `max` characters of `text`, and whether anything was cut.
pub(crate) fn take_chars(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((end, _)) => (&text[..end], true),
        None => (text, false),
    }
}

/// Plain text from an HTML fragment: tags removed, entities decoded, whitespace collapsed.
pub(crate) fn strip_tags(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    let decoded = decode_entities(&text);
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Decodes the named entities search snippets use and all numeric ones.
fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('&') {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let decoded = rest
            .find(';')
            .filter(|&end| end <= 10)
            .and_then(|end| entity(&rest[1..end]).map(|c| (c, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    let numeric = |digits: &str, radix| u32::from_str_radix(digits, radix).ok();
    let code = if let Some(hex) = name.strip_prefix("#x").or(name.strip_prefix("#X")) {
        numeric(hex, 16)?
    } else if let Some(dec) = name.strip_prefix('#') {
        numeric(dec, 10)?
    } else {
        return match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            "ndash" => Some('–'),
            "mdash" => Some('—'),
            "hellip" => Some('…'),
            "laquo" => Some('«'),
            "raquo" => Some('»'),
            "rsquo" => Some('’'),
            "lsquo" => Some('‘'),
            "rdquo" => Some('”'),
            "ldquo" => Some('“'),
            "copy" => Some('©'),
            _ => None,
        };
    };
    char::from_u32(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_tags_and_decodes_entities() {
        assert_eq!(
            strip_tags(
                "The <strong>Rust</strong> &amp; <em>Tokio</em> book&#39;s  intro &#x2014; \
                 x &bogus; a&b"
            ),
            "The Rust & Tokio book's intro — x &bogus; a&b"
        );
        assert_eq!(strip_tags("1 &lt; 2"), "1 < 2");
    }

    #[test]
    fn takes_whole_characters() {
        assert_eq!(take_chars("héllo", 2), ("hé", true));
        assert_eq!(take_chars("hé", 2), ("hé", false));
    }

    #[test]
    fn debug_hides_the_key() {
        let config = WebConfig {
            brave_api_key: Some("sk-secret".into()),
            ..WebConfig::default()
        };
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("sk-secret") && shown.contains("redacted"),
            "{shown}"
        );
    }

    #[test]
    fn deserialises_with_defaults() {
        let config: WebConfig = toml::from_str("allow_hosts = [\"127.0.0.1\"]").unwrap();
        assert_eq!(config.allow_hosts, vec!["127.0.0.1".to_owned()]);
        assert_eq!(config.brave_api_key, None);
        let empty: WebConfig = toml::from_str("").unwrap();
        assert_eq!(empty, WebConfig::default());
    }
}
