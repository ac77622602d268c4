//! `web_fetch`: reads a web page as text, refusing addresses inside the local network.

use super::extract::{self, Declared};
use super::ssrf::{self, Pin};
use super::{REQUEST_TIMEOUT, USER_AGENT, WebConfig, describe_error, read_capped, take_chars};
use crate::args;
use async_trait::async_trait;
use claw_agent::{ToolResult, ToolSpec, ToolUpdates, TypedTool};
use reqwest::header::{CONTENT_TYPE, LOCATION};
use reqwest::{StatusCode, Url};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::LazyLock;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Redirects followed before giving up.
const MAX_REDIRECTS: usize = 5;
/// Bytes of body read at most; the rest is never downloaded.
const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;
/// Characters of text returned at most.
const MAX_OUTPUT_CHARS: usize = 20_000;
/// Characters of an error page quoted in the error.
const ERROR_EXCERPT_CHARS: usize = 1_000;
/// Bytes of an error page converted to find that excerpt.
const ERROR_PAGE_BYTES: usize = 64 * 1024;

const ACCEPT: &str =
    "text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.5";

/// Fetches a URL and returns its content as readable text.
pub struct WebFetchTool {
    allow_hosts: Vec<String>,
    timeout: Duration,
}

/// A failed fetch: what the model reads and what the UI gets.
struct Failure {
    message: String,
    details: Value,
}

impl Failure {
    fn new(message: impl Into<String>, details: Value) -> Self {
        Self {
            message: message.into(),
            details,
        }
    }

    fn into_result(self) -> ToolResult {
        ToolResult::error(self.message).with_details(self.details)
    }
}

/// The last response of a fetch, its body read up to the cap.
struct Response {
    final_url: Url,
    redirects: Vec<String>,
    status: StatusCode,
    content_type: Option<String>,
    body: Vec<u8>,
    body_truncated: bool,
}

impl Response {
    fn details(&self, requested: &Url) -> Value {
        json!({
            "url": requested.as_str(),
            "final_url": self.final_url.as_str(),
            "redirects": self.redirects,
            "status": self.status.as_u16(),
            "content_type": self.content_type,
            "bytes": self.body.len(),
            "body_truncated": self.body_truncated,
        })
    }
}

impl WebFetchTool {
    /// A fetch tool that may reach the hosts in `config.allow_hosts` despite the address rule.
    pub fn new(config: WebConfig) -> Self {
        Self {
            allow_hosts: config.allow_hosts,
            timeout: REQUEST_TIMEOUT,
        }
    }

    /// The same tool with another limit on the whole call (30 s by default).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Follows redirects by hand so each hop passes the address rule before any connection.
    async fn fetch(&self, start: &Url, updates: &ToolUpdates) -> Result<Response, Failure> {
        let mut url = start.clone();
        let mut redirects: Vec<String> = Vec::new();
        loop {
            let hop_details = || {
                json!({
                    "url": start.as_str(),
                    "final_url": url.as_str(),
                    "redirects": redirects,
                })
            };
            check_scheme(&url).map_err(|m| Failure::new(m.to_string(), hop_details()))?;
            let pin = ssrf::check(&url, &self.allow_hosts).await.map_err(|r| {
                let mut details = hop_details();
                details["blocked_address"] = json!(r.address.map(|a| a.to_string()));
                let mut message = r.message;
                if !redirects.is_empty() {
                    message.push_str(&format!(" (Reached by a redirect from {start}.)"));
                }
                Failure::new(message, details)
            })?;
            let client = self
                .client(pin)
                .map_err(|m| Failure::new(m.to_string(), hop_details()))?;
            updates.send(json!({"status": "requesting", "url": url.as_str()}));
            let mut resp = client
                .get(url.clone())
                .header("Accept", ACCEPT)
                .send()
                .await
                .map_err(|e| {
                    Failure::new(
                        format!("Could not fetch {url}: {}.", describe_error(&e)),
                        hop_details(),
                    )
                })?;
            let status = resp.status();
            if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
                let next = redirect_target(&url, status, resp.headers())
                    .map_err(|m| Failure::new(m.to_string(), hop_details()))?;
                if redirects.len() == MAX_REDIRECTS {
                    return Err(Failure::new(
                        format!(
                            "Stopped at {url}: it redirects again after {MAX_REDIRECTS} redirects \
                             (next: {next}). The page is probably stuck in a redirect loop; try \
                             the final address directly if you know it."
                        ),
                        hop_details(),
                    ));
                }
                redirects.push(next.to_string());
                url = next;
                continue;
            }
            let content_type = resp
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let mut response = Response {
                final_url: url.clone(),
                redirects,
                status,
                content_type,
                body: Vec::new(),
                body_truncated: false,
            };
            // Binary content is refused on its headers, without downloading it.
            if status.is_success()
                && extract::declared(response.content_type.as_deref()) == Declared::Binary
            {
                return Ok(response);
            }
            updates.send(
                json!({"status": "reading", "url": url.as_str(), "http_status": status.as_u16()}),
            );
            let (body, truncated) = read_capped(&mut resp, MAX_BODY_BYTES).await.map_err(|e| {
                Failure::new(
                    format!("Reading the body of {url} failed: {}.", describe_error(&e)),
                    response.details(start),
                )
            })?;
            response.body = body;
            response.body_truncated = truncated;
            return Ok(response);
        }
    }

    /// A client for one hop, connecting only to the checked addresses.
    fn client(&self, pin: Option<Pin>) -> Result<reqwest::Client, FetchRefusal> {
        // No proxy: a proxy would resolve the name itself and undo the address check. No
        // timeout either: the one around the whole call covers redirects and the body too.
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .user_agent(USER_AGENT);
        if let Some(pin) = pin {
            builder = builder.resolve_to_addrs(&pin.host, &pin.addrs);
        }
        builder.build().map_err(FetchRefusal::Client)
    }

    async fn fetch_and_render(
        &self,
        url: Url,
        max_chars: usize,
        updates: &ToolUpdates,
    ) -> ToolResult {
        let response = match self.fetch(&url, updates).await {
            Ok(r) => r,
            Err(failure) => return failure.into_result(),
        };
        let details = response.details(&url);
        let declared = extract::declared(response.content_type.as_deref());
        if !response.status.is_success() {
            return http_error(&response, declared, details);
        }
        let Response {
            final_url,
            body,
            body_truncated,
            content_type,
            ..
        } = response;
        let base = final_url.clone();
        let rendered =
            tokio::task::spawn_blocking(move || extract::render(declared, &body, &base)).await;
        let rendered = match rendered {
            Ok(Ok(r)) => r,
            Ok(Err(why)) => {
                let ct = content_type.as_deref().unwrap_or("none given");
                return ToolResult::error(format!(
                    "Refused to return {final_url}: {why} (Content-Type: {ct}). web_fetch only \
                     reads HTML, JSON and text, not binary data."
                ))
                .with_details(details);
            }
            Err(e) => {
                return ToolResult::error(format!(
                    "Converting {final_url} to text failed unexpectedly ({e}); the page may be \
                     malformed."
                ))
                .with_details(details);
            }
        };
        let total_chars = rendered.text.chars().count();
        let (shown, cut) = take_chars(&rendered.text, max_chars);
        let mut content = format!("URL: {final_url}\n");
        if let Some(title) = &rendered.title {
            content.push_str(&format!("Title: {title}\n"));
        }
        content.push('\n');
        content.push_str(shown);
        let mut notes = Vec::new();
        if let Some(note) = &rendered.note {
            notes.push(note.clone());
        }
        if body_truncated {
            notes.push(format!(
                "The response was larger than {} MB; only the first {MAX_BODY_BYTES} bytes \
                 were read.",
                MAX_BODY_BYTES / (1024 * 1024)
            ));
        }
        if cut {
            notes.push(format!(
                "Output truncated: showing the first {max_chars} of {total_chars} characters."
            ));
        }
        for note in notes {
            content.push_str(&format!("\n\n[{note}]"));
        }
        let mut details = details;
        details["kind"] = json!(rendered.kind);
        details["chars"] = json!(total_chars);
        details["output_truncated"] = json!(cut);
        ToolResult::text(content).with_details(details)
    }
}

/// Why a fetch stops before or between requests; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
enum FetchRefusal {
    /// Neither http nor https.
    #[error(
        "Refused to fetch {url}: the {scheme}: scheme is not supported; web_fetch only \
         fetches http:// and https:// URLs."
    )]
    Scheme {
        /// The URL asked for.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// A redirect without a Location to follow.
    #[error(
        "{url} answered HTTP {status} (a redirect) without a usable Location header, so there \
         is nothing to follow."
    )]
    NoLocation {
        /// The redirecting URL.
        url: String,
        /// Its status.
        status: StatusCode,
    },
    /// A redirect to something that is not a URL.
    #[error("{url} redirects to an invalid address {location:?} ({reason}).")]
    BadLocation {
        /// The redirecting URL.
        url: String,
        /// Its Location header.
        location: String,
        /// Why it does not parse (the url crate's words).
        reason: String,
    },
    /// The HTTP client cannot be built.
    #[error("web_fetch could not set up its HTTP client: {0}")]
    Client(reqwest::Error),
}

/// Refuses anything but http and https.
fn check_scheme(url: &Url) -> Result<(), FetchRefusal> {
    match url.scheme() {
        "http" | "https" => Ok(()),
        other => Err(FetchRefusal::Scheme {
            url: url.to_string(),
            scheme: other.to_owned(),
        }),
    }
}

/// Where a redirect points, resolved against the current URL.
fn redirect_target(
    url: &Url,
    status: StatusCode,
    headers: &reqwest::header::HeaderMap,
) -> Result<Url, FetchRefusal> {
    let Some(location) = headers.get(LOCATION).and_then(|v| v.to_str().ok()) else {
        return Err(FetchRefusal::NoLocation {
            url: url.to_string(),
            status,
        });
    };
    url.join(location.trim())
        .map_err(|e| FetchRefusal::BadLocation {
            url: url.to_string(),
            location: location.to_owned(),
            reason: e.to_string(),
        })
}

/// An error result for a non-2xx response, quoting the start of its text when it has any.
fn http_error(response: &Response, declared: Declared, details: Value) -> ToolResult {
    let url = &response.final_url;
    let status = response.status;
    // The excerpt needs only the start of the page; converting megabytes here would stall the
    // async thread.
    let head = &response.body[..response.body.len().min(ERROR_PAGE_BYTES)];
    let excerpt = extract::render(declared, head, url)
        .ok()
        .map(|r| take_chars(r.text.trim(), ERROR_EXCERPT_CHARS).0.to_owned())
        .filter(|t| !t.is_empty());
    let advice = match status.as_u16() {
        404 | 410 => "Check the URL; the page may have moved.",
        401 | 403 => "The page needs authorisation web_fetch cannot give.",
        429 => "The site is rate limiting; wait before trying again.",
        500..=599 => "The server failed; try again later.",
        _ => "The server refused the request.",
    };
    let mut message = format!("HTTP {status} from {url}. {advice}");
    if let Some(excerpt) = excerpt {
        message.push_str("\n\nResponse body:\n");
        message.push_str(&excerpt);
    }
    ToolResult::error(message).with_details(details)
}

/// The arguments of `web_fetch`.
#[derive(Deserialize, JsonSchema)]
pub struct WebFetchArgs {
    /// The http:// or https:// URL to fetch
    url: String,
    /// Return at most this many characters of content (default and maximum 20000)
    #[schemars(range(min = 1, max = MAX_OUTPUT_CHARS))]
    max_chars: Option<u64>,
}

#[async_trait]
impl TypedTool for WebFetchTool {
    type Args = WebFetchArgs;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new(
                "web_fetch",
                "Fetch web page",
                "Fetch an http(s) URL and return its content as text: HTML is reduced to the main \
         content with links listed, JSON is pretty-printed. Output is capped at 20000 characters. \
         Addresses inside the local network are refused.",
                args::schema::<WebFetchArgs>(),
            )
            .read_only()
        });
        &SPEC
    }

    async fn run(
        &self,
        _call_id: &str,
        args: WebFetchArgs,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> ToolResult {
        let WebFetchArgs { url, max_chars } = args;
        let raw = url.trim();
        // Above the maximum is capped (the agent loop's validation refuses it first).
        let max_chars = max_chars.map_or(MAX_OUTPUT_CHARS, |n| {
            usize::try_from(n)
                .unwrap_or(usize::MAX)
                .min(MAX_OUTPUT_CHARS)
        });
        let url = match Url::parse(raw) {
            Ok(url) => url,
            Err(e) => {
                return ToolResult::error(format!(
                    "{raw:?} is not a valid URL ({e}). Give a full address such as \
                     https://example.com/page."
                ));
            }
        };
        if let Err(refusal) = check_scheme(&url) {
            return ToolResult::error(refusal.to_string())
                .with_details(json!({"url": url.as_str()}));
        }
        let timeout = self.timeout;
        tokio::select! {
            biased;
            () = cancel.cancelled() => ToolResult::error(format!("Fetching {url} was cancelled."))
                .with_details(json!({"url": url.as_str(), "cancelled": true})),
            result = tokio::time::timeout(timeout, self.fetch_and_render(url.clone(), max_chars, &updates)) => {
                result.unwrap_or_else(|_| {
                    ToolResult::error(format!(
                        "Fetching {url} timed out after {} s. The server is slow or unreachable; \
                         try again later or another source.",
                        timeout.as_secs_f32()
                    ))
                    .with_details(json!({"url": url.as_str(), "timed_out": true}))
                })
            }
        }
    }
}
