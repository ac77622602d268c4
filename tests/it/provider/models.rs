//! `Provider::list_models` over real HTTP: the OpenAI-compatible `GET /models` against the
//! fake server, Anthropic's paged `GET /v1/models` against a small paging server, error
//! statuses and bodies that are no model list, and the providers that have no server.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::ScriptedProvider;
use crate::support::fake_llm::drive::{anthropic_config, openai_config};
use crate::support::fake_llm::{FakeLlm, Scripted, Step};
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use claw_tui::config::DEMO_MODEL;
use claw_tui::llm::demo::DemoProvider;
use claw_tui::llm::{
    AnthropicConfig, AnthropicProvider, ModelsError, OpenAiConfig, OpenAiProvider, Provider, Secret,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn openai_with_key(server: &FakeLlm, key: &str) -> OpenAiProvider {
    let mut config = openai_config(server);
    config.remote.api_key = Some(Secret::new(key));
    OpenAiProvider::new(config).unwrap()
}

#[tokio::test]
async fn openai_compatible_servers_list_their_models_with_the_bearer_key() {
    let server = FakeLlm::start(vec![Scripted::json(
        200,
        json!({"object": "list", "data": [
            {"id": "gpt-4.1", "object": "model", "owned_by": "openai"},
            {"id": "gpt-4o", "object": "model", "owned_by": "openai"},
            {"id": "gpt-4.1", "object": "model", "owned_by": "openai"},
            {"id": "o3", "object": "model", "owned_by": "openai"}
        ]}),
    )])
    .await;
    let models = openai_with_key(&server, "sk-list-1")
        .list_models()
        .await
        .unwrap();
    assert_eq!(models, ["gpt-4.1", "gpt-4o", "o3"], "in order, each once");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "GET");
    assert_eq!(requests[0].path, "/v1/models");
    assert_eq!(requests[0].headers["authorization"], "Bearer sk-list-1");
    assert_eq!(requests[0].headers["accept"], "application/json");
}

#[tokio::test]
async fn a_keyless_local_server_is_asked_without_authorization() {
    // Ollama's answer, abridged.
    let server = FakeLlm::start(vec![Scripted::json(
        200,
        json!({"object": "list", "data": [{"id": "llama3.2:latest", "object": "model", "created": 1, "owned_by": "library"}]}),
    )])
    .await;
    let provider = OpenAiProvider::new(openai_config(&server)).unwrap();
    assert_eq!(provider.list_models().await.unwrap(), ["llama3.2:latest"]);
    assert!(!server.requests()[0].headers.contains_key("authorization"));
}

#[tokio::test]
async fn error_statuses_and_other_bodies_are_errors_that_never_show_the_key() {
    let server = FakeLlm::start(vec![
        Scripted::json(
            401,
            json!({"error": {"type": "invalid_request_error", "message": "Incorrect API key provided"}}),
        ),
        Scripted {
            status: 200,
            headers: vec![("content-type".into(), "text/html".into())],
            steps: vec![Step::Chunk("<html>a login page</html>".into())],
        },
        Scripted::json(200, json!({"models": "not a list"})),
    ])
    .await;
    let provider = openai_with_key(&server, "sk-secret-777");
    let unauthorized = provider.list_models().await.unwrap_err();
    assert!(
        matches!(unauthorized, ModelsError::Refused { status: 401, .. }),
        "{unauthorized:?}"
    );
    let unauthorized = unauthorized.to_string();
    assert!(
        unauthorized.contains("401") && unauthorized.contains("Incorrect API key"),
        "{unauthorized}"
    );
    let html = provider.list_models().await.unwrap_err().to_string();
    assert!(
        html.contains("other than a model list") && html.contains("a login page"),
        "{html}"
    );
    let shape = provider.list_models().await.unwrap_err().to_string();
    assert!(shape.contains("other than a model list"), "{shape}");
    for message in [unauthorized, html, shape] {
        assert!(!message.contains("sk-secret-777"), "{message}");
    }
}

#[tokio::test]
async fn an_unreachable_server_is_an_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let provider = OpenAiProvider::new(OpenAiConfig::compatible(
        "Local",
        format!("http://{addr}/v1"),
    ))
    .unwrap();
    let err = provider.list_models().await.unwrap_err().to_string();
    assert!(
        err.contains("cannot reach") && err.contains("/v1/models"),
        "{err}"
    );
}

#[tokio::test]
async fn the_official_endpoints_are_not_asked_without_a_key() {
    let openai = OpenAiProvider::new(OpenAiConfig::openai()).unwrap();
    let err = openai.list_models().await.unwrap_err();
    assert!(matches!(err, ModelsError::NoKey { .. }), "{err:?}");
    let err = err.to_string();
    assert!(err.contains("OPENAI_API_KEY"), "{err}");
    let anthropic = AnthropicProvider::new(AnthropicConfig::default()).unwrap();
    let err = anthropic.list_models().await.unwrap_err().to_string();
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
}

/// What the paging server saw: the query and the headers of each request.
type Seen = Arc<Mutex<Vec<(HashMap<String, String>, HeaderMap)>>>;

/// Anthropic's `GET /v1/models`: pages chosen by `after_id`, as the real API pages them.
async fn paging_server(pages: HashMap<Option<String>, Value>) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let pages = Arc::new(pages);
    let handler = {
        let seen = seen.clone();
        move |Query(query): Query<HashMap<String, String>>, headers: HeaderMap| {
            let seen = seen.clone();
            let pages = pages.clone();
            async move {
                seen.lock().unwrap().push((query.clone(), headers));
                match pages.get(&query.get("after_id").cloned()) {
                    Some(page) => axum::Json(page.clone()).into_response(),
                    None => (
                        StatusCode::BAD_REQUEST,
                        axum::Json(json!({"type": "error", "error": {"type": "invalid_request_error", "message": "unknown after_id"}})),
                    )
                        .into_response(),
                }
            }
        }
    };
    let url = serve(Router::new().route("/v1/models", get(handler))).await;
    (url, seen)
}

async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

fn model(id: &str) -> Value {
    json!({"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"})
}

fn anthropic_at(url: &str) -> AnthropicProvider {
    let mut config = AnthropicConfig::with_key(Secret::new("sk-ant-models"), "TEST_KEY");
    config.remote.base_url = url.to_owned();
    AnthropicProvider::new(config).unwrap()
}

#[tokio::test]
async fn anthropic_follows_its_pages_with_the_key_and_version_headers() {
    let pages = HashMap::from([
        (
            None,
            json!({"data": [model("claude-opus-4-1"), model("claude-sonnet-4-5")],
                   "has_more": true, "first_id": "claude-opus-4-1", "last_id": "claude-sonnet-4-5"}),
        ),
        (
            Some("claude-sonnet-4-5".to_owned()),
            json!({"data": [model("claude-haiku-4-5")],
                   "has_more": false, "first_id": "claude-haiku-4-5", "last_id": "claude-haiku-4-5"}),
        ),
    ]);
    let (url, seen) = paging_server(pages).await;
    let models = anthropic_at(&url).list_models().await.unwrap();
    assert_eq!(
        models,
        ["claude-opus-4-1", "claude-sonnet-4-5", "claude-haiku-4-5"]
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].0.get("after_id"), None);
    assert_eq!(seen[0].0["limit"], "1000");
    assert_eq!(seen[1].0["after_id"], "claude-sonnet-4-5");
    for (_, headers) in seen.iter() {
        assert_eq!(headers["x-api-key"], "sk-ant-models");
        assert_eq!(headers["anthropic-version"], "2023-06-01");
    }
}

#[tokio::test]
async fn anthropic_stops_following_a_list_that_never_ends() {
    // Every page says there is more, with a new cursor each time.
    let counter = Arc::new(Mutex::new(0u32));
    let router = Router::new().route(
        "/v1/models",
        get(move |State(counter): State<Arc<Mutex<u32>>>| async move {
            let mut n = counter.lock().unwrap();
            *n += 1;
            let id = format!("model-{n}");
            axum::Json(json!({"data": [model(&id)], "has_more": true, "last_id": id}))
        })
        .with_state(counter.clone()),
    );
    let url = serve(router).await;
    let models = tokio::time::timeout(Duration::from_secs(10), anthropic_at(&url).list_models())
        .await
        .expect("the fetch ends by itself")
        .unwrap();
    // The provider's page cap is 10 pages.
    assert_eq!(*counter.lock().unwrap(), 10);
    assert_eq!(models.len(), 10);
    assert_eq!(models[0], "model-1");
}

#[tokio::test]
async fn anthropic_error_statuses_are_errors() {
    let server = FakeLlm::start(vec![Scripted::json(
        403,
        json!({"type": "error", "error": {"type": "permission_error", "message": "Your key cannot list models"}}),
    )])
    .await;
    let provider = AnthropicProvider::new(anthropic_config(&server)).unwrap();
    let err = provider.list_models().await.unwrap_err().to_string();
    assert!(
        err.contains("403") && err.contains("cannot list models"),
        "{err}"
    );
    assert_eq!(server.requests()[0].path, "/v1/models");
    assert!(!err.contains("test-key"), "{err}");
}

#[tokio::test]
async fn the_demo_lists_its_one_model_and_other_providers_none() {
    let demo = DemoProvider::new(Duration::ZERO, "/x/config.toml").unwrap();
    assert_eq!(demo.list_models().await.unwrap(), [DEMO_MODEL]);
    let scripted = ScriptedProvider::new(Vec::new());
    assert_eq!(scripted.list_models().await.unwrap(), Vec::<String>::new());
}

#[tokio::test]
async fn a_failed_page_after_the_first_fails_the_whole_list() {
    let pages = HashMap::from([(
        None,
        json!({"data": [model("claude-a")], "has_more": true, "last_id": "gone"}),
    )]);
    let (url, seen) = paging_server(pages).await;
    let err = anthropic_at(&url)
        .list_models()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("400") && err.contains("unknown after_id"),
        "{err}"
    );
    assert_eq!(seen.lock().unwrap().len(), 2);
}
