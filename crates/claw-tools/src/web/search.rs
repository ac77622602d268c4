//! `web_search`: queries the Brave Search API and lists the results.

use super::{REQUEST_TIMEOUT, USER_AGENT, WebConfig, describe_error, read_capped, strip_tags};
use crate::args;
use async_trait::async_trait;
use claw_agent::{ToolResult, ToolSpec, ToolUpdates, TypedTool};
use reqwest::header::HeaderValue;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::LazyLock;
use tokio_util::sync::CancellationToken;

const DEFAULT_BASE_URL: &str = "https://api.search.brave.com";
const DEFAULT_COUNT: u64 = 5;
const MAX_COUNT: u64 = 10;
/// Brave rejects longer queries.
const MAX_QUERY_CHARS: usize = 400;
/// More than any real result page; a guard against a misbehaving server.
const MAX_RESPONSE_BYTES: usize = 5 * 1024 * 1024;
const KEY_ENV: &str = "BRAVE_API_KEY";

/// Searches the web through the Brave Search API.
pub struct WebSearchTool {
    api_key: Option<String>,
    base_url: String,
    /// The client, or why none could be made (reported on each call).
    client: Result<reqwest::Client, reqwest::Error>,
}

impl WebSearchTool {
    /// A search tool whose key comes from `BRAVE_API_KEY`, else from `config`.
    pub fn new(config: WebConfig) -> Self {
        Self::with_env_key(config, std::env::var(KEY_ENV).ok())
    }

    /// A search tool given the value of `BRAVE_API_KEY` explicitly, for embedding and tests.
    pub fn with_env_key(config: WebConfig, env_key: Option<String>) -> Self {
        let non_empty =
            |k: Option<String>| k.map(|k| k.trim().to_owned()).filter(|k| !k.is_empty());
        let api_key = non_empty(env_key).or_else(|| non_empty(config.brave_api_key));
        let base_url = config
            .search_base_url
            .filter(|u| !u.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let client = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .timeout(REQUEST_TIMEOUT)
            .build();
        Self {
            api_key,
            base_url: base_url.trim_end_matches('/').to_owned(),
            client,
        }
    }

    async fn search(&self, query: &str, count: u64, key: &str) -> ToolResult {
        let client = match &self.client {
            Ok(client) => client,
            Err(e) => {
                return ToolResult::error(format!(
                    "web_search is unavailable: could not set up the HTTP client: {e}"
                ));
            }
        };
        let Ok(mut token) = HeaderValue::from_str(key) else {
            return ToolResult::error(format!(
                "The Brave Search API key contains characters that cannot be sent in an HTTP \
                 header. Check {KEY_ENV} or brave_api_key in the [web] config section."
            ));
        };
        // Keeps the key out of any debug output of the request.
        token.set_sensitive(true);
        let endpoint = format!("{}/res/v1/web/search", self.base_url);
        let request = client
            .get(&endpoint)
            .query(&[("q", query), ("count", &count.to_string())])
            .header("Accept", "application/json")
            .header("X-Subscription-Token", token);
        let mut resp = match request.send().await {
            Ok(resp) => resp,
            Err(e) => {
                return ToolResult::error(format!(
                    "Could not reach Brave Search at {}: {}. Check the network connection or \
                     search_base_url in the [web] config section.",
                    self.base_url,
                    describe_error(&e)
                ));
            }
        };
        let status = resp.status();
        let (body, _) = match read_capped(&mut resp, MAX_RESPONSE_BYTES).await {
            Ok(body) => body,
            Err(e) => {
                return ToolResult::error(format!(
                    "Brave Search's response could not be read: {}. Try again.",
                    describe_error(&e)
                ))
                .with_details(json!({"status": status.as_u16()}));
            }
        };
        if !status.is_success() {
            return status_error(status, resp.headers(), &body);
        }
        let parsed: Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return ToolResult::error(format!(
                    "Brave Search answered with something that is not JSON ({e}); try again later."
                ))
                .with_details(json!({"status": status.as_u16()}));
            }
        };
        format_results(query, count, status.as_u16(), &parsed)
    }
}

/// The numbered list the model reads, from `web.results` of a Brave response.
fn format_results(query: &str, count: u64, status: u16, response: &Value) -> ToolResult {
    let results: Vec<Value> = response
        .pointer("/web/results")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .take(usize::try_from(count).unwrap_or(usize::MAX))
                .map(|item| {
                    let field = |name| item.get(name).and_then(Value::as_str).unwrap_or_default();
                    json!({
                        "title": strip_tags(field("title")),
                        "url": field("url"),
                        "description": strip_tags(field("description")),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    if results.is_empty() {
        return ToolResult::text(format!(
            "No results for \"{query}\". Try different or fewer keywords."
        ))
        .with_details(json!({"query": query, "count": count, "status": status, "results": []}));
    }
    let text = results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut entry = format!(
                "{}. {}\n   {}",
                i + 1,
                r["title"].as_str().unwrap_or_default(),
                r["url"].as_str().unwrap_or_default()
            );
            let snippet = r["description"].as_str().unwrap_or_default();
            if !snippet.is_empty() {
                entry.push_str("\n   ");
                entry.push_str(snippet);
            }
            entry
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    ToolResult::text(text).with_details(json!({
        "query": query,
        "count": count,
        "status": status,
        "results": results,
    }))
}

/// An error result for a non-2xx answer, saying what the user or model can do about it.
fn status_error(
    status: reqwest::StatusCode,
    headers: &reqwest::header::HeaderMap,
    body: &[u8],
) -> ToolResult {
    let code = status.as_u16();
    let message = match code {
        401 | 403 => format!(
            "Brave Search rejected the API key (HTTP {code}). Check the key in the {KEY_ENV} \
             environment variable or brave_api_key in the [web] config section."
        ),
        429 => {
            let reset = headers
                .get("X-RateLimit-Reset")
                .or_else(|| headers.get("Retry-After"))
                .and_then(|v| v.to_str().ok())
                // Brave lists one value per window (per second, per month), in seconds.
                .map(|v| format!(" (limits reset in {v} seconds)"))
                .unwrap_or_default();
            format!(
                "Brave Search rate limit or quota exceeded (HTTP 429){reset}. Wait before \
                 searching again, or check the plan of the API key."
            )
        }
        500..=599 => {
            format!("Brave Search had a server error (HTTP {code}). Try again in a moment.")
        }
        _ => {
            let excerpt: String = String::from_utf8_lossy(body).chars().take(300).collect();
            format!("Brave Search refused the request (HTTP {code}): {excerpt}")
        }
    };
    ToolResult::error(message).with_details(json!({"status": code}))
}

/// The arguments of `web_search`.
#[derive(Deserialize, JsonSchema)]
pub struct WebSearchArgs {
    /// Search query
    query: String,
    /// Number of results (default 5, at most 10)
    #[schemars(range(min = 1, max = MAX_COUNT))]
    count: Option<u64>,
}

#[async_trait]
impl TypedTool for WebSearchTool {
    type Args = WebSearchArgs;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new(
                "web_search",
                "Web search",
                "Search the web (Brave Search). Returns a numbered list of results with title, URL and \
         snippet. Use web_fetch to read a result.",
                args::schema::<WebSearchArgs>(),
            ).read_only()
        });
        &SPEC
    }

    async fn run(
        &self,
        _call_id: &str,
        args: WebSearchArgs,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        if let Err(e) = args::non_blank("query", &args.query) {
            return ToolResult::error(e.to_string());
        }
        let WebSearchArgs { query, count } = args;
        let query = query.trim();
        let query_chars = query.chars().count();
        if query_chars > MAX_QUERY_CHARS {
            return ToolResult::error(format!(
                "The query is {query_chars} characters long; Brave Search accepts at most \
                 {MAX_QUERY_CHARS}. Shorten it."
            ));
        }
        // Above the maximum is capped (the agent loop's validation refuses it first).
        let count = count.unwrap_or(DEFAULT_COUNT).min(MAX_COUNT);
        let Some(key) = self.api_key.as_deref() else {
            return ToolResult::error(format!(
                "web_search needs a Brave Search API key. Set the {KEY_ENV} environment variable, \
                 or add brave_api_key = \"...\" to the [web] section of the config file. \
                 Keys are available at https://brave.com/search/api/."
            ));
        };
        tokio::select! {
            biased;
            () = cancel.cancelled() => ToolResult::error("web_search was cancelled."),
            result = self.search(query, count, key) => result,
        }
    }
}
