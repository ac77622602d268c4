//! Local HTTP servers for the web tool tests: a page server and a fake Brave Search API.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use axum::Router;
use axum::extract::{Query, Request};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use claw_tui::agent::{Tool, ToolResult};
use claw_tui::tools::web::{WebConfig, WebFetchTool, WebSearchTool};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// Upper bound for a call that must finish; a failure guard, never a synchronisation.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// Paths the server was asked for, in order.
pub type HitLog = Arc<Mutex<Vec<String>>>;

/// A running server: its address, what it was asked for, and hang notifications.
pub struct Server {
    pub addr: SocketAddr,
    pub hits: HitLog,
    /// Receives one message each time a request reaches `/hang`.
    pub hung: mpsc::UnboundedReceiver<()>,
}

impl Server {
    /// `http://<addr><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The paths requested so far.
    pub fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap().clone()
    }
}

/// Serves `router` on `listener`, logging every requested path.
fn spawn(listener: TcpListener, router: Router, hits: HitLog) {
    let router = router.layer(middleware::from_fn(move |req: Request, next: Next| {
        let hits = hits.clone();
        async move {
            hits.lock().unwrap().push(req.uri().path().to_owned());
            next.run(req).await
        }
    }));
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
}

/// Calls `tool` with no cancellation, failing the test if it does not finish.
pub async fn call(tool: &dyn Tool, args: Value) -> ToolResult {
    tokio::time::timeout(DEADLINE, super::call(tool, args))
        .await
        .expect("the tool call did not finish")
}

/// A fetch tool allowed to reach `allow`.
pub fn fetch_tool(allow: &[&str]) -> WebFetchTool {
    WebFetchTool::new(WebConfig {
        allow_hosts: allow.iter().map(|h| h.to_string()).collect(),
        ..WebConfig::default()
    })
}

/// A fetch tool allowed to reach 127.0.0.1.
pub fn local_fetch() -> WebFetchTool {
    fetch_tool(&["127.0.0.1"])
}

/// A search tool on `base` whose only key is `key` (the environment is ignored).
pub fn search_tool(base: &str, key: Option<&str>) -> WebSearchTool {
    WebSearchTool::with_env_key(
        WebConfig {
            brave_api_key: key.map(str::to_owned),
            search_base_url: Some(base.to_owned()),
            ..WebConfig::default()
        },
        None,
    )
}

/// Bytes of the "large" response: more than web_fetch's 5 MB cap.
pub const BIG_BYTES: usize = 6 * 1024 * 1024;

/// The text `/long` serves: numbered lines, so any cut position is recognisable.
pub fn long_text() -> String {
    (1..=3000).map(|i| format!("line {i:05}\n")).collect()
}

pub const MAIN_PAGE: &str = r#"<!DOCTYPE html>
<html><head><title>Fixture &amp; Page</title>
<script>var leaked = "HEAD_SCRIPT";</script>
<style>.x { color: STYLE_RULE; }</style></head>
<body>
<header>SITE_HEADER</header>
<nav><a href="/home">NAV_LINK</a></nav>
<div class="wrap">
<main>
  <header><h1>Main heading</h1></header>
  <p>Body paragraph with a <a href="/docs/page">documentation link</a> and <a href="javascript:void(0)">JS_LINK</a>.</p>
  <script>MAIN_SCRIPT</script>
  <nav>INNER_NAV</nav>
  <ul><li>first item</li><li>second item</li></ul>
</main>
<aside>SIDEBAR</aside>
</div>
<footer>SITE_FOOTER</footer>
</body></html>"#;

pub const ARTICLE_PAGE: &str = r#"<html><body>
<nav>MENU</nav>
<div>BANNER_TEXT</div>
<article><header>Article title</header><p>First article text.</p></article>
<article><p>Second article text.</p><footer>Article footer note</footer></article>
<script>ARTICLE_SCRIPT</script>
<footer>PAGE_FOOTER</footer>
</body></html>"#;

pub const ROLE_PAGE: &str = r#"<html><body>
<div role="navigation">ROLE_NAV</div>
<div>OUTSIDE_TEXT</div>
<div role="main"><p>Role main text.</p><div hidden>HIDDEN_TEXT</div></div>
</body></html>"#;

pub const PLAIN_PAGE: &str = r#"<html><body><h2>No landmarks</h2><p>Just a body.</p><script>BODY_SCRIPT</script><footer>BODY_FOOTER</footer></body></html>"#;

pub const JSON_BODY: &str =
    r#"{"name":"claw","items":[1,2.50,{"deep":true}],"empty":{},"text":"a, {b}: \"c\""}"#;

fn typed(content_type: &'static str, body: impl Into<axum::body::Body>) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body.into()).into_response()
}

fn redirect(location: String) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

/// The page server for `web_fetch`, on 127.0.0.1.
pub async fn page_server() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let port = addr.port();
    let hits = HitLog::default();
    let (hung_tx, hung) = mpsc::unbounded_channel();
    let router = Router::new()
        .route(
            "/page.html",
            get(|| async { typed("text/html; charset=utf-8", MAIN_PAGE) }),
        )
        .route(
            "/article.html",
            get(|| async { typed("text/html", ARTICLE_PAGE) }),
        )
        .route(
            "/role.html",
            get(|| async { typed("text/html", ROLE_PAGE) }),
        )
        .route(
            "/body.html",
            get(|| async { typed("text/html", PLAIN_PAGE) }),
        )
        .route(
            "/data.json",
            get(|| async { typed("application/json", JSON_BODY) }),
        )
        .route(
            "/untyped",
            get(|| async { Response::new(axum::body::Body::from(JSON_BODY)) }),
        )
        .route(
            "/plain.txt",
            get(|| async { typed("text/plain; charset=utf-8", "hello\nworld") }),
        )
        .route(
            "/image.png",
            get(|| async { typed("image/png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec()) }),
        )
        .route(
            "/download",
            get(|| async { typed("application/octet-stream", b"plain-looking bytes".to_vec()) }),
        )
        .route(
            "/nul.txt",
            get(|| async { typed("text/plain", b"text\0with NUL".to_vec()) }),
        )
        .route(
            "/redirect/{n}",
            get(
                |axum::extract::Path(n): axum::extract::Path<u32>| async move {
                    if n == 0 {
                        typed("text/plain", "landed after redirects")
                    } else {
                        redirect(format!("/redirect/{}", n - 1))
                    }
                },
            ),
        )
        .route(
            "/to-localhost",
            get(move || async move { redirect(format!("http://localhost:{port}/secret")) }),
        )
        .route(
            "/to-private",
            get(|| async { redirect("http://10.0.0.1/".into()) }),
        )
        .route(
            "/to-file",
            get(|| async { redirect("file:///etc/passwd".into()) }),
        )
        .route("/secret", get(|| async { "SECRET" }))
        .route("/hit", get(|| async { "hit" }))
        .route(
            "/big",
            get(|| async { typed("text/plain", "0123456789abcdef".repeat(BIG_BYTES / 16)) }),
        )
        .route("/long", get(|| async { typed("text/plain", long_text()) }))
        .route(
            "/missing",
            get(|| async {
                (
                    StatusCode::NOT_FOUND,
                    [(header::CONTENT_TYPE, "text/html")],
                    "<html><body><p>No such page here.</p></body></html>",
                )
                    .into_response()
            }),
        )
        .route(
            "/hang",
            get(move || {
                let hung_tx = hung_tx.clone();
                async move {
                    let _ = hung_tx.send(());
                    std::future::pending::<Response>().await
                }
            }),
        );
    spawn(listener, router, hits.clone());
    Server { addr, hits, hung }
}

/// A server on `[::1]` that only logs hits, or `None` where IPv6 loopback is unavailable.
pub async fn ipv6_server() -> Option<Server> {
    let listener = TcpListener::bind("[::1]:0").await.ok()?;
    let addr = listener.local_addr().unwrap();
    let hits = HitLog::default();
    let (_tx, hung) = mpsc::unbounded_channel();
    spawn(
        listener,
        Router::new().route("/hit", get(|| async { "hit" })),
        hits.clone(),
    );
    Some(Server { addr, hits, hung })
}

/// One request the fake Brave API received.
#[derive(Clone, Debug)]
pub struct SearchRequest {
    pub params: HashMap<String, String>,
    pub headers: HeaderMap,
}

/// A fake Brave Search API; the query selects the answer.
pub async fn search_server() -> (Server, Arc<Mutex<Vec<SearchRequest>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = HitLog::default();
    let requests: Arc<Mutex<Vec<SearchRequest>>> = Arc::default();
    let log = requests.clone();
    let router = Router::new().route(
        "/res/v1/web/search",
        get(
            move |Query(params): Query<HashMap<String, String>>, headers: HeaderMap| {
                let log = log.clone();
                async move {
                    log.lock().unwrap().push(SearchRequest {
                        params: params.clone(),
                        headers,
                    });
                    search_answer(&params)
                }
            },
        ),
    );
    spawn(listener, router, hits.clone());
    let (_tx, hung) = mpsc::unbounded_channel();
    (Server { addr, hits, hung }, requests)
}

fn search_answer(params: &HashMap<String, String>) -> Response {
    let query = params.get("q").cloned().unwrap_or_default();
    match query.as_str() {
        "rate limited" => (
            StatusCode::TOO_MANY_REQUESTS,
            [("X-RateLimit-Reset", "7")],
            r#"{"type":"ErrorResponse","error":{"code":"RATE_LIMITED"}}"#,
        )
            .into_response(),
        "bad key" => (StatusCode::UNAUTHORIZED, "{}").into_response(),
        "server down" => (StatusCode::SERVICE_UNAVAILABLE, "busy").into_response(),
        "nothing" => axum::Json(json!({"type": "search", "web": {"results": []}})).into_response(),
        _ => {
            // Always twelve results, as a misbehaving server might; the tool keeps `count`.
            let results: Vec<Value> = (1..=12)
                .map(|i| {
                    json!({
                        "title": format!("Result <strong>{i}</strong> &amp; more"),
                        "url": format!("https://example.com/{i}"),
                        "description": format!("Snippet <strong>{i}</strong> about {query} &quot;quoted&quot;"),
                        "age": "1 day ago"
                    })
                })
                .collect();
            axum::Json(json!({"type": "search", "web": {"type": "search", "results": results}}))
                .into_response()
        }
    }
}
