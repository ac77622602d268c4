//! `web_search` against a fake Brave Search API.

use crate::support::web::*;
use claw_tui::agent::ToolSet;
use claw_tui::tools::web::{WebConfig, WebSearchTool};
use serde_json::json;
use std::sync::Arc;

#[tokio::test]
async fn search_formats_numbered_results_and_sends_the_key() {
    let (server, requests) = search_server().await;
    let tool = search_tool(&server.url(""), Some("test-key-123"));
    let result = call(&tool, json!({"query": "rust async", "count": 3})).await;
    assert!(!result.is_error, "{}", result.content);
    let expected = "1. Result 1 & more\n   https://example.com/1\n   Snippet 1 about rust async \"quoted\"\n\n\
                    2. Result 2 & more\n   https://example.com/2\n   Snippet 2 about rust async \"quoted\"\n\n\
                    3. Result 3 & more\n   https://example.com/3\n   Snippet 3 about rust async \"quoted\"";
    assert_eq!(result.content, expected);
    assert_eq!(result.details["status"], 200);
    assert_eq!(result.details["results"].as_array().unwrap().len(), 3);

    let requests = requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    let req = &requests[0];
    assert_eq!(req.params["q"], "rust async");
    assert_eq!(req.params["count"], "3");
    assert_eq!(req.headers["x-subscription-token"], "test-key-123");
    assert_eq!(req.headers["accept"], "application/json");
    assert_eq!(server.hits(), vec!["/res/v1/web/search".to_owned()]);
}

#[tokio::test]
async fn search_count_defaults_to_five_and_more_than_ten_is_refused() {
    let (server, requests) = search_server().await;
    let tool = search_tool(&format!("{}/", server.url("")), Some("k"));

    let result = call(&tool, json!({"query": "defaults"})).await;
    assert!(!result.is_error, "{}", result.content);
    assert!(result.content.contains("\n\n5. Result 5"));
    assert!(!result.content.contains("6. Result 6"));

    let result = call(&tool, json!({"query": "ten", "count": 10})).await;
    assert!(!result.is_error, "{}", result.content);
    assert!(result.content.contains("\n\n10. Result 10"));
    assert!(!result.content.contains("11. Result"));

    // More than ten is refused before anything is sent, naming the maximum.
    let result = call(&tool, json!({"query": "too many", "count": 50})).await;
    assert!(result.is_error);
    assert!(result.content.contains("/count"), "{}", result.content);

    let counts: Vec<String> = requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.params["count"].clone())
        .collect();
    assert_eq!(counts, ["5", "10"]);

    // Through the tool set, the schema itself rejects an out-of-range count.
    let set = ToolSet::new(vec![Arc::new(search_tool("http://127.0.0.1:9", None))]);
    let err = set
        .validate("web_search", &json!({"query": "x", "count": 11}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("/count"), "{err}");
    assert!(
        set.validate("web_search", &json!({"query": "x", "count": 10}))
            .is_ok()
    );
}

#[tokio::test]
async fn search_without_a_key_says_how_to_set_one() {
    let (server, _) = search_server().await;
    let tool = search_tool(&server.url(""), None);
    let result = call(&tool, json!({"query": "anything"})).await;
    assert!(result.is_error);
    assert!(
        result.content.contains("BRAVE_API_KEY"),
        "{}",
        result.content
    );
    assert!(
        result.content.contains("brave_api_key"),
        "{}",
        result.content
    );
    assert!(result.content.contains("[web]"), "{}", result.content);
    assert!(
        server.hits().is_empty(),
        "no request may be made without a key"
    );
}

#[tokio::test]
async fn search_key_from_the_environment_wins_over_config() {
    let (server, requests) = search_server().await;
    let tool = WebSearchTool::with_env_key(
        WebConfig {
            brave_api_key: Some("from-config".into()),
            search_base_url: Some(server.url("")),
            ..WebConfig::default()
        },
        Some("from-env".into()),
    );
    let result = call(&tool, json!({"query": "which key"})).await;
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(
        requests.lock().unwrap()[0].headers["x-subscription-token"],
        "from-env"
    );
}

#[tokio::test]
async fn search_http_errors_are_clear() {
    let (server, _) = search_server().await;
    let tool = search_tool(&server.url(""), Some("k"));

    let result = call(&tool, json!({"query": "rate limited"})).await;
    assert!(result.is_error);
    assert!(result.content.contains("HTTP 429"), "{}", result.content);
    assert!(result.content.contains("rate limit"), "{}", result.content);
    assert!(
        result.content.contains("reset in 7 seconds"),
        "{}",
        result.content
    );
    assert_eq!(result.details["status"], 429);

    let result = call(&tool, json!({"query": "bad key"})).await;
    assert!(result.is_error);
    assert!(
        result.content.contains("HTTP 401") && result.content.contains("API key"),
        "{}",
        result.content
    );
    assert_eq!(result.details["status"], 401);

    let result = call(&tool, json!({"query": "server down"})).await;
    assert!(result.is_error);
    assert!(result.content.contains("HTTP 503"), "{}", result.content);
    assert_eq!(result.details["status"], 503);
}

#[tokio::test]
async fn search_with_no_results_and_bad_arguments() {
    let (server, _) = search_server().await;
    let tool = search_tool(&server.url(""), Some("k"));
    let result = call(&tool, json!({"query": "nothing"})).await;
    assert!(!result.is_error, "{}", result.content);
    assert!(
        result.content.starts_with("No results for \"nothing\""),
        "{}",
        result.content
    );

    let result = call(&tool, json!({"query": "   "})).await;
    assert!(
        result.is_error && result.content.contains("query"),
        "{}",
        result.content
    );
    let result = call(&tool, json!({"query": "x".repeat(401)})).await;
    assert!(
        result.is_error && result.content.contains("401 characters"),
        "{}",
        result.content
    );
    let result = call(&tool, json!({"query": "x", "count": "many"})).await;
    assert!(
        result.is_error && result.content.contains("count"),
        "{}",
        result.content
    );
    assert_eq!(
        server.hits().len(),
        1,
        "only the valid call reaches the server"
    );
}
