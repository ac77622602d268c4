//! `web_fetch`: redirects, the address rule, schemes, cancellation and timeout.

use crate::support::web::*;
use claw_tui::agent::{Tool, ToolUpdates};
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn fetch_reaches_an_allowed_host_name_through_its_pinned_addresses() {
    let server = page_server().await;
    let url = server.url("/plain.txt").replace("127.0.0.1", "localhost");
    let result = call(&fetch_tool(&["localhost"]), json!({"url": url})).await;
    assert!(!result.is_error, "{}", result.content);
    assert!(
        result.content.ends_with("hello\nworld"),
        "{}",
        result.content
    );
    assert_eq!(server.hits(), ["/plain.txt"]);
}

#[tokio::test]
async fn fetch_follows_up_to_five_redirects() {
    let server = page_server().await;
    let result = call(&local_fetch(), json!({"url": server.url("/redirect/5")})).await;
    assert!(!result.is_error, "{}", result.content);
    assert!(
        result.content.ends_with("landed after redirects"),
        "{}",
        result.content
    );
    assert_eq!(result.details["final_url"], server.url("/redirect/0"));
    assert_eq!(result.details["redirects"].as_array().unwrap().len(), 5);
    assert_eq!(server.hits().len(), 6);
}

#[tokio::test]
async fn fetch_refuses_a_sixth_redirect() {
    let server = page_server().await;
    let result = call(&local_fetch(), json!({"url": server.url("/redirect/6")})).await;
    assert!(result.is_error, "{}", result.content);
    assert!(
        result.content.contains("after 5 redirects"),
        "{}",
        result.content
    );
    assert!(
        !server.hits().contains(&"/redirect/0".to_owned()),
        "the sixth target must not be requested"
    );
    assert_eq!(server.hits().len(), 6);
}

#[tokio::test]
async fn fetch_refuses_redirects_into_the_private_network() {
    let server = page_server().await;
    let tool = local_fetch();

    // localhost is not on the allow-list, and it resolves to a loopback address.
    let result = call(&tool, json!({"url": server.url("/to-localhost")})).await;
    assert!(result.is_error, "{}", result.content);
    assert!(
        result.content.contains("localhost") && result.content.contains("loopback"),
        "{}",
        result.content
    );
    assert_eq!(
        server.hits(),
        vec!["/to-localhost".to_owned()],
        "/secret must never be requested"
    );

    let result = call(&tool, json!({"url": server.url("/to-private")})).await;
    assert!(result.is_error, "{}", result.content);
    assert!(
        result.content.contains("10.0.0.1") && result.content.contains("private"),
        "{}",
        result.content
    );
    assert_eq!(result.details["blocked_address"], "10.0.0.1");
    assert_eq!(result.details["final_url"], "http://10.0.0.1/");

    let result = call(&tool, json!({"url": server.url("/to-file")})).await;
    assert!(result.is_error, "{}", result.content);
    assert!(
        result.content.contains("file: scheme"),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn fetch_refuses_internal_addresses_before_connecting() {
    let server = page_server().await;
    let tool = fetch_tool(&[]);
    let cases = [
        (server.url("/hit"), "127.0.0.1", "loopback"),
        ("http://10.0.0.1/".to_owned(), "10.0.0.1", "private"),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "169.254.169.254",
            "metadata",
        ),
        ("http://[::1]:9/hit".to_owned(), "::1", "loopback"),
        (
            "http://[fd00:ec2::254]/".to_owned(),
            "fd00:ec2::254",
            "metadata",
        ),
        (
            "http://100.64.1.1/".to_owned(),
            "100.64.1.1",
            "carrier-grade NAT",
        ),
        ("http://0x7f.1:9/".to_owned(), "127.0.0.1", "loopback"),
    ];
    for (url, address, reason) in cases {
        let result = call(&tool, json!({"url": url})).await;
        assert!(result.is_error, "{url}: {}", result.content);
        assert!(
            result.content.starts_with("Refused to fetch"),
            "{url}: {}",
            result.content
        );
        assert!(result.content.contains(reason), "{url}: {}", result.content);
        assert!(
            result.content.contains("allow_hosts"),
            "{url}: {}",
            result.content
        );
        assert_eq!(result.details["blocked_address"], address, "{url}");
    }
    let result = call(
        &tool,
        json!({"url": server.url("/hit").replace("127.0.0.1", "localhost")}),
    )
    .await;
    assert!(
        result.is_error && result.content.contains("resolves to"),
        "{}",
        result.content
    );
    let result = call(
        &tool,
        json!({"url": "http://metadata.google.internal/computeMetadata/v1/"}),
    )
    .await;
    assert!(
        result.is_error && result.content.contains("metadata"),
        "{}",
        result.content
    );
    assert!(
        server.hits().is_empty(),
        "no request may reach the server: {:?}",
        server.hits()
    );
}

#[tokio::test]
async fn fetch_refuses_ipv6_loopback_unless_allowed() {
    let Some(server) = ipv6_server().await else {
        // Without IPv6 loopback only the refusal can be checked (done above with port 9).
        return;
    };
    let url = format!("http://[::1]:{}/hit", server.addr.port());
    let result = call(&fetch_tool(&[]), json!({"url": url})).await;
    assert!(
        result.is_error && result.content.contains("loopback"),
        "{}",
        result.content
    );
    assert!(server.hits().is_empty());

    let result = call(&fetch_tool(&["[::1]"]), json!({"url": url})).await;
    assert!(!result.is_error, "{}", result.content);
    assert!(result.content.ends_with("hit"), "{}", result.content);
    assert_eq!(server.hits(), ["/hit"]);
}

#[tokio::test]
async fn fetch_refuses_other_schemes_and_bad_urls() {
    let tool = local_fetch();
    for url in [
        "file:///etc/passwd",
        "ftp://example.com/file",
        "data:text/plain,hello",
        "gopher://127.0.0.1/",
    ] {
        let result = call(&tool, json!({"url": url})).await;
        assert!(result.is_error, "{url}");
        assert!(
            result.content.contains("only fetches http:// and https://"),
            "{url}: {}",
            result.content
        );
    }
    let result = call(&tool, json!({"url": "not a url"})).await;
    assert!(
        result.is_error && result.content.contains("not a valid URL"),
        "{}",
        result.content
    );
    let result = call(&tool, json!({})).await;
    assert!(
        result.is_error && result.content.contains("Missing required argument \"url\""),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn fetch_stops_at_once_when_cancelled() {
    let mut server = page_server().await;
    let cancel = CancellationToken::new();
    let url = server.url("/hang");
    let call = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            let tool = local_fetch();
            let args = crate::support::checked(&tool, json!({"url": url}));
            tool.execute("c", args, cancel, ToolUpdates::discard())
                .await
        }
    });
    tokio::time::timeout(DEADLINE, server.hung.recv())
        .await
        .expect("the request never reached the server")
        .unwrap();
    cancel.cancel();
    let result = tokio::time::timeout(DEADLINE, call)
        .await
        .expect("cancel was not honoured")
        .unwrap();
    assert!(result.is_error);
    assert!(result.content.contains("cancelled"), "{}", result.content);
    assert_eq!(result.details["cancelled"], true);
}

#[tokio::test]
async fn fetch_times_out() {
    let server = page_server().await;
    let tool = local_fetch().with_timeout(Duration::from_millis(300));
    let result = call(&tool, json!({"url": server.url("/hang")})).await;
    assert!(result.is_error);
    assert!(result.content.contains("timed out"), "{}", result.content);
    assert_eq!(result.details["timed_out"], true);
}
