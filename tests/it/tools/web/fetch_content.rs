//! `web_fetch`: what it makes of HTML, JSON, text and binary bodies, and its size limits.

use crate::support::web::*;
use serde_json::json;

#[tokio::test]
async fn fetch_html_keeps_main_content_and_links() {
    let server = page_server().await;
    let result = call(&local_fetch(), json!({"url": server.url("/page.html")})).await;
    assert!(!result.is_error, "{}", result.content);
    let text = &result.content;
    assert!(
        text.starts_with(&format!(
            "URL: {}\nTitle: Fixture & Page\n\n",
            server.url("/page.html")
        )),
        "{text}"
    );
    for kept in [
        "Main heading",
        "Body paragraph",
        "documentation link",
        "first item",
        "second item",
        "JS_LINK",
    ] {
        assert!(text.contains(kept), "{kept} missing from:\n{text}");
    }
    // Relative links are listed as absolute URLs.
    assert!(text.contains(&server.url("/docs/page")), "{text}");
    for dropped in [
        "HEAD_SCRIPT",
        "STYLE_RULE",
        "MAIN_SCRIPT",
        "INNER_NAV",
        "NAV_LINK",
        "SITE_HEADER",
        "SITE_FOOTER",
        "SIDEBAR",
        "javascript:",
    ] {
        assert!(
            !text.contains(dropped),
            "{dropped} should be dropped:\n{text}"
        );
    }
    assert_eq!(result.details["kind"], "html");
    assert_eq!(result.details["status"], 200);
    assert_eq!(result.details["content_type"], "text/html; charset=utf-8");
    assert_eq!(result.details["final_url"], server.url("/page.html"));
    assert_eq!(result.details["bytes"], MAIN_PAGE.len());
}

#[tokio::test]
async fn fetch_html_uses_articles_or_role_main_or_the_body() {
    let server = page_server().await;
    let tool = local_fetch();

    let text = call(&tool, json!({"url": server.url("/article.html")}))
        .await
        .content;
    for kept in [
        "Article title",
        "First article text.",
        "Second article text.",
        "Article footer note",
    ] {
        assert!(text.contains(kept), "{kept} missing from:\n{text}");
    }
    for dropped in ["MENU", "BANNER_TEXT", "ARTICLE_SCRIPT", "PAGE_FOOTER"] {
        assert!(
            !text.contains(dropped),
            "{dropped} should be dropped:\n{text}"
        );
    }

    let text = call(&tool, json!({"url": server.url("/role.html")}))
        .await
        .content;
    assert!(text.contains("Role main text."), "{text}");
    for dropped in ["ROLE_NAV", "OUTSIDE_TEXT", "HIDDEN_TEXT"] {
        assert!(
            !text.contains(dropped),
            "{dropped} should be dropped:\n{text}"
        );
    }

    let text = call(&tool, json!({"url": server.url("/body.html")}))
        .await
        .content;
    assert!(
        text.contains("No landmarks") && text.contains("Just a body."),
        "{text}"
    );
    assert!(
        !text.contains("BODY_SCRIPT") && !text.contains("BODY_FOOTER"),
        "{text}"
    );
}

const PRETTY_JSON: &str = "{\n  \"name\": \"claw\",\n  \"items\": [\n    1,\n    2.50,\n    {\n      \"deep\": true\n    }\n  ],\n  \"empty\": {},\n  \"text\": \"a, {b}: \\\"c\\\"\"\n}";

#[tokio::test]
async fn fetch_pretty_prints_json() {
    let server = page_server().await;
    let result = call(&local_fetch(), json!({"url": server.url("/data.json")})).await;
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(
        result.content,
        format!("URL: {}\n\n{PRETTY_JSON}", server.url("/data.json"))
    );
    assert_eq!(result.details["kind"], "json");

    // Without a Content-Type the body is recognised as JSON.
    let result = call(&local_fetch(), json!({"url": server.url("/untyped")})).await;
    assert!(!result.is_error, "{}", result.content);
    assert!(result.content.ends_with(PRETTY_JSON), "{}", result.content);
}

#[tokio::test]
async fn fetch_passes_plain_text_through() {
    let server = page_server().await;
    let result = call(&local_fetch(), json!({"url": server.url("/plain.txt")})).await;
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(
        result.content,
        format!("URL: {}\n\nhello\nworld", server.url("/plain.txt"))
    );
    assert_eq!(result.details["kind"], "text");
    assert_eq!(result.details["bytes"], 11);
    assert_eq!(result.details["output_truncated"], false);
}

#[tokio::test]
async fn fetch_refuses_binary() {
    let server = page_server().await;
    let tool = local_fetch();
    for (path, mention) in [
        ("/image.png", "image/png"),
        ("/download", "application/octet-stream"),
        ("/nul.txt", "NUL"),
    ] {
        let result = call(&tool, json!({"url": server.url(path)})).await;
        assert!(result.is_error, "{path}: {}", result.content);
        assert!(
            result.content.contains("binary"),
            "{path}: {}",
            result.content
        );
        assert!(
            result.content.contains(mention),
            "{path}: {}",
            result.content
        );
        assert_eq!(result.details["status"], 200);
    }
}

#[tokio::test]
async fn fetch_reports_http_errors_with_the_page_text() {
    let server = page_server().await;
    let result = call(&local_fetch(), json!({"url": server.url("/missing")})).await;
    assert!(result.is_error);
    assert!(
        result.content.starts_with("HTTP 404 Not Found from"),
        "{}",
        result.content
    );
    assert!(
        result.content.contains("No such page here."),
        "{}",
        result.content
    );
    assert_eq!(result.details["status"], 404);
}

#[tokio::test]
async fn fetch_stops_reading_at_five_megabytes() {
    let server = page_server().await;
    let result = call(&local_fetch(), json!({"url": server.url("/big")})).await;
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(result.details["bytes"], 5 * 1024 * 1024);
    assert_eq!(result.details["body_truncated"], true);
    assert!(
        result.content.contains("larger than 5 MB"),
        "{}",
        &result.content[result.content.len() - 300..]
    );
    assert!(
        result
            .content
            .contains("showing the first 20000 of 5242880 characters")
    );
}

#[tokio::test]
async fn fetch_caps_output_with_a_note() {
    let server = page_server().await;
    let full = long_text();
    let prefix = format!("URL: {}\n\n", server.url("/long"));

    let result = call(&local_fetch(), json!({"url": server.url("/long")})).await;
    assert!(!result.is_error, "{}", result.content);
    let body = result.content.strip_prefix(&prefix).unwrap();
    assert_eq!(
        body,
        format!(
            "{}\n\n[Output truncated: showing the first 20000 of {} characters.]",
            &full[..20_000],
            full.len()
        )
    );
    assert_eq!(result.details["output_truncated"], true);
    assert_eq!(result.details["chars"], full.len());

    let result = call(
        &local_fetch(),
        json!({"url": server.url("/long"), "max_chars": 25}),
    )
    .await;
    let body = result.content.strip_prefix(&prefix).unwrap();
    assert_eq!(
        body,
        format!(
            "{}\n\n[Output truncated: showing the first 25 of {} characters.]",
            &full[..25],
            full.len()
        )
    );

    // Up to the cap is kept; a larger max_chars is refused, naming the argument.
    let result = call(
        &local_fetch(),
        json!({"url": server.url("/long"), "max_chars": 20_000}),
    )
    .await;
    assert!(
        result.content.contains("showing the first 20000 of"),
        "{}",
        &result.content[result.content.len().saturating_sub(200)..]
    );
    let result = call(
        &local_fetch(),
        json!({"url": server.url("/long"), "max_chars": 50_000}),
    )
    .await;
    assert!(result.is_error);
    assert!(result.content.contains("/max_chars"), "{}", result.content);

    let result = call(
        &local_fetch(),
        json!({"url": server.url("/long"), "max_chars": 0}),
    )
    .await;
    assert!(
        result.is_error && result.content.contains("max_chars"),
        "{}",
        result.content
    );
}
