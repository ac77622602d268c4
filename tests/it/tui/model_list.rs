//! `/model` completion from the server's model list: `update` asks for it once, when
//! `/model` is typed; the list that comes back feeds the completion, which keeps the
//! configured names until then or when the fetch fails; the fetch itself over real HTTP;
//! and the real binary completing from the fake server's list.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::ScriptedProvider;
use crate::support::fake_llm::drive::openai_config;
use crate::support::fake_llm::{FakeLlm, Scripted};
use crate::support::pty::{Tui, status_line};
use crate::support::tui::key;
use claw_tui::llm::{OpenAiProvider, Provider};
use claw_tui::tui::host::model_list;
use claw_tui::tui::{App, Effect, Msg};
use crossterm::event::{Event, KeyCode};
use serde_json::json;
use std::sync::Arc;

/// An app whose configured models are `static-a` and `static-b`; the current model is
/// `demo (offline)`.
fn app() -> App {
    let mut config = crate::support::tui::config();
    config.models = vec!["static-a".into(), "static-b".into()];
    let mut app = App::new(config);
    app.update(Msg::Term(Event::Resize(120, 40)));
    app
}

/// Types `text` and returns every effect the keys produced.
fn type_text(app: &mut App, text: &str) -> Vec<Effect> {
    text.chars()
        .flat_map(|c| app.update(key(KeyCode::Char(c))))
        .collect()
}

fn items(app: &App) -> Vec<String> {
    app.composer()
        .completion()
        .map(|c| c.items.clone())
        .unwrap_or_default()
}

#[test]
fn typing_model_asks_for_the_list_once_and_nothing_else_does() {
    let mut app = app();
    assert_eq!(
        type_text(&mut app, "hello /model"),
        [],
        "only a leading /model"
    );
    app.update(key(KeyCode::Enter));
    assert_eq!(
        type_text(&mut app, "/"),
        [],
        "a bare slash could be any command"
    );
    assert_eq!(type_text(&mut app, "m"), [Effect::ListModels]);
    assert_eq!(type_text(&mut app, "odel gpt"), [], "asked for once");
    app.update(key(KeyCode::Enter));
    assert_eq!(type_text(&mut app, "/model "), [], "not asked again later");
}

#[test]
fn the_configured_names_complete_until_the_servers_list_arrives() {
    let mut app = app();
    type_text(&mut app, "/model ");
    assert_eq!(items(&app), ["demo (offline)", "static-a", "static-b"]);
    app.update(Msg::ModelsListed(vec![
        "gpt-4.1".into(),
        "gpt-4o".into(),
        "o3".into(),
    ]));
    assert_eq!(
        items(&app),
        ["demo (offline)", "gpt-4.1", "gpt-4o", "o3"],
        "the open popup switches to the server's list"
    );
    type_text(&mut app, "gpt-4");
    assert_eq!(items(&app), ["gpt-4.1", "gpt-4o"]);
    app.update(key(KeyCode::Down));
    app.update(key(KeyCode::Tab));
    assert_eq!(app.composer().text(), "/model gpt-4o ");
}

#[test]
fn an_empty_list_keeps_the_configured_names() {
    let mut app = app();
    type_text(&mut app, "/model s");
    app.update(Msg::ModelsListed(Vec::new()));
    assert_eq!(items(&app), ["static-a", "static-b"]);
}

#[tokio::test]
async fn the_fetch_answers_with_the_servers_list_or_nothing() {
    let server = FakeLlm::start(vec![
        Scripted::json(
            200,
            json!({"data": [{"id": "qwen2.5-coder"}, {"id": "llama3.2"}]}),
        ),
        Scripted::json(401, json!({"error": {"message": "bad key"}})),
    ])
    .await;
    let provider: Arc<dyn Provider> =
        Arc::new(OpenAiProvider::new(openai_config(&server)).unwrap());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();

    model_list::fetch(provider.clone(), tx.clone())
        .await
        .unwrap();
    let msg = rx.try_recv().expect("the list came back");
    let mut app = app();
    type_text(&mut app, "/model ");
    app.update(msg);
    assert_eq!(items(&app), ["demo (offline)", "qwen2.5-coder", "llama3.2"]);

    // A failure sends nothing: completion stays as it was.
    model_list::fetch(provider, tx.clone()).await.unwrap();
    assert!(rx.try_recv().is_err());
    // So does a provider without a list.
    model_list::fetch(ScriptedProvider::new(Vec::new()), tx)
        .await
        .unwrap();
    assert!(rx.try_recv().is_err());
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn the_binary_completes_model_names_from_the_server_and_asks_only_when_needed() {
    let sandbox = crate::support::bin::Sandbox::new();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeLlm::start(vec![Scripted::json(
        200,
        json!({"object": "list", "data": [
            {"id": "server-model-alpha", "object": "model"},
            {"id": "server-model-beta", "object": "model"}
        ]}),
    )]));
    let mut tui = Tui::openai_at(sandbox.dir.path(), &server.url(), &[]);
    tui.wait_for("the ready screen", |s| {
        status_line(s).contains("openai · gpt-test")
    });
    assert!(
        server.requests().is_empty(),
        "start-up asks the server nothing"
    );

    tui.send("/model server-model-");
    let screen = tui.wait_text("server-model-beta");
    assert!(screen.contains("server-model-alpha"), "{screen}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("GET", "/v1/models")
    );

    // Ctrl+C clears the composer, Ctrl+D on an empty one quits.
    tui.send("\x03");
    tui.wait_for("an empty composer", |s| {
        !s.contents().contains("/model server")
    });
    tui.send("\x04");
    let (code, alternate, _) = tui.wait_exit();
    assert_eq!(code, 0);
    assert!(!alternate, "the terminal is restored");
}
