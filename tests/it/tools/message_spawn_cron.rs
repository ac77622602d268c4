#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The `message` tool's callback, and the argument checking of the `spawn` and `cron`
//! tool shells over small recording backends.

use async_trait::async_trait;
use claw_tui::agent::{Tool, ToolResult, ToolUpdates};
use claw_tui::tools::cron::{CronBackend, CronSchedule, CronTool};
use claw_tui::tools::message::{MessageTool, OutboundMessage};
use claw_tui::tools::spawn::{SpawnBackend, SpawnTool};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

async fn call(tool: &dyn Tool, args: Value) -> ToolResult {
    let args = match crate::support::check(tool, args) {
        Ok(args) => args,
        Err(refused) => return refused,
    };
    tool.execute(
        "call-7",
        args,
        CancellationToken::new(),
        ToolUpdates::discard(),
    )
    .await
}

// ---------------------------------------------------------------------------------------
// message
// ---------------------------------------------------------------------------------------

fn recording_message_tool() -> (MessageTool, Arc<Mutex<Vec<OutboundMessage>>>) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let log = sent.clone();
    let tool = MessageTool::new(Arc::new(move |m| log.lock().unwrap().push(m)));
    (tool, sent)
}

#[tokio::test]
async fn message_goes_through_the_callback_with_defaults() {
    let (tool, sent) = recording_message_tool();
    let r = call(&tool, json!({"content": "Halfway there."})).await;
    assert!(!r.is_error);
    assert_eq!(r.content, "Message sent to cli:direct");
    assert_eq!(
        *sent.lock().unwrap(),
        [OutboundMessage {
            channel: "cli".into(),
            chat_id: "direct".into(),
            content: "Halfway there.".into(),
        }]
    );
    assert_eq!(r.details["content"], "Halfway there.");
}

#[tokio::test]
async fn message_honours_channel_and_chat_id() {
    let (tool, sent) = recording_message_tool();
    let r = call(
        &tool,
        json!({"content": "hi", "channel": "telegram", "chat_id": "42"}),
    )
    .await;
    assert_eq!(r.content, "Message sent to telegram:42");
    // Blank or null targets fall back to the defaults.
    let r = call(
        &tool,
        json!({"content": "x", "channel": "", "chat_id": null}),
    )
    .await;
    assert_eq!(r.content, "Message sent to cli:direct");
    {
        let sent = sent.lock().unwrap();
        assert_eq!(sent.len(), 2);
        assert_eq!(
            (sent[0].channel.as_str(), sent[0].chat_id.as_str()),
            ("telegram", "42")
        );
    }

    let custom = MessageTool::with_defaults(Arc::new(|_| {}), "tui", "session-1");
    assert_eq!(
        call(&custom, json!({"content": "x"})).await.content,
        "Message sent to tui:session-1"
    );
}

#[tokio::test]
async fn message_without_content_is_refused_and_nothing_is_sent() {
    let (tool, sent) = recording_message_tool();
    for args in [json!({}), json!({"content": "  "}), json!({"content": 3})] {
        let r = call(&tool, args).await;
        assert!(r.is_error, "{r:?}");
        assert!(r.content.contains("\"content\""), "{}", r.content);
    }
    let r = call(&tool, json!({"content": "ok", "channel": 1})).await;
    assert!(r.is_error);
    assert!(sent.lock().unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------
// spawn
// ---------------------------------------------------------------------------------------

type SpawnCall = (String, String, Option<String>);

/// What the recording backends refuse with; the tools hand its text to the model as is.
#[derive(Clone, Debug, thiserror::Error)]
enum Refused {
    #[error("Too many subagents are running (4 of 4); wait for one to finish.")]
    Full,
    #[error("No job with id \"{0}\"; action \"list\" shows the ids.")]
    NoJob(String),
}

#[derive(Default)]
struct RecordingSpawn {
    calls: Mutex<Vec<SpawnCall>>,
    fail: Option<Refused>,
}

#[async_trait]
impl SpawnBackend for RecordingSpawn {
    type Error = Refused;

    async fn spawn(
        &self,
        parent_call_id: &str,
        task: String,
        label: Option<String>,
    ) -> Result<String, Refused> {
        let n = {
            let mut calls = self.calls.lock().unwrap();
            calls.push((parent_call_id.to_owned(), task, label));
            calls.len()
        };
        match &self.fail {
            Some(e) => Err(e.clone()),
            None => Ok(format!("Subagent sub-{n} started.")),
        }
    }
}

#[tokio::test]
async fn spawn_passes_task_label_and_call_id_to_the_backend() {
    let backend = Arc::new(RecordingSpawn::default());
    let tool = SpawnTool::new(backend.clone());
    let r = call(
        &tool,
        json!({"task": "Summarise README.md", "label": " docs "}),
    )
    .await;
    assert!(!r.is_error);
    assert_eq!(r.content, "Subagent sub-1 started.");
    let r = call(&tool, json!({"task": "Count files", "label": ""})).await;
    assert_eq!(r.content, "Subagent sub-2 started.");
    assert_eq!(
        *backend.calls.lock().unwrap(),
        [
            (
                "call-7".to_owned(),
                "Summarise README.md".to_owned(),
                Some("docs".to_owned())
            ),
            ("call-7".to_owned(), "Count files".to_owned(), None),
        ]
    );
}

#[tokio::test]
async fn spawn_checks_its_arguments_and_reports_backend_errors() {
    let backend = Arc::new(RecordingSpawn::default());
    let tool = SpawnTool::new(backend.clone());
    for args in [json!({}), json!({"task": ""}), json!({"task": ["x"]})] {
        let r = call(&tool, args).await;
        assert!(r.is_error);
        assert!(r.content.contains("\"task\""), "{}", r.content);
    }
    assert!(backend.calls.lock().unwrap().is_empty());

    let failing = SpawnTool::new(Arc::new(RecordingSpawn {
        fail: Some(Refused::Full),
        ..RecordingSpawn::default()
    }));
    let r = call(&failing, json!({"task": "t"})).await;
    assert!(r.is_error);
    assert_eq!(
        r.content,
        "Too many subagents are running (4 of 4); wait for one to finish."
    );
}

struct NeverSpawns;

#[async_trait]
impl SpawnBackend for NeverSpawns {
    type Error = Refused;

    async fn spawn(&self, _: &str, _: String, _: Option<String>) -> Result<String, Refused> {
        std::future::pending().await
    }
}

#[tokio::test]
async fn spawn_returns_when_cancelled() {
    let tool = SpawnTool::new(Arc::new(NeverSpawns));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let r = tool
        .execute(
            "c",
            crate::support::checked(&tool, json!({"task": "t"})),
            cancel,
            ToolUpdates::discard(),
        )
        .await;
    assert!(r.is_error);
    assert!(r.content.starts_with("Cancelled"), "{}", r.content);
}

// ---------------------------------------------------------------------------------------
// cron
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum CronCall {
    Add(Option<String>, String, CronSchedule),
    List,
    Remove(String),
    Pause(String),
    Resume(String),
}

#[derive(Default)]
struct RecordingCron {
    calls: Mutex<Vec<CronCall>>,
}

impl RecordingCron {
    fn record(&self, call: CronCall) -> Result<String, Refused> {
        let text = format!("ok: {call:?}");
        self.calls.lock().unwrap().push(call);
        Ok(text)
    }
}

#[async_trait]
impl CronBackend for RecordingCron {
    type Error = Refused;

    async fn add(
        &self,
        name: Option<String>,
        message: String,
        schedule: CronSchedule,
    ) -> Result<String, Refused> {
        self.record(CronCall::Add(name, message, schedule))
    }
    async fn list(&self) -> Result<String, Refused> {
        self.record(CronCall::List)
    }
    async fn remove(&self, id: &str) -> Result<String, Refused> {
        if id == "missing" {
            return Err(Refused::NoJob(id.to_owned()));
        }
        self.record(CronCall::Remove(id.into()))
    }
    async fn pause(&self, id: &str) -> Result<String, Refused> {
        self.record(CronCall::Pause(id.into()))
    }
    async fn resume(&self, id: &str) -> Result<String, Refused> {
        self.record(CronCall::Resume(id.into()))
    }
}

fn cron() -> (CronTool<RecordingCron>, Arc<RecordingCron>) {
    let backend = Arc::new(RecordingCron::default());
    (CronTool::new(backend.clone()), backend)
}

#[tokio::test]
async fn cron_add_turns_each_schedule_kind_into_a_typed_call() {
    let (tool, backend) = cron();
    let adds = [
        json!({"action": "add", "message": "stretch", "every_seconds": 3600, "name": "break"}),
        json!({"action": "add", "message": "standup", "cron_expr": "0 9 * * 1-5", "tz": "Europe/Berlin"}),
        json!({"action": "add", "message": "daily", "cron_expr": "0 0 * * *", "every_seconds": null}),
        json!({"action": "add", "message": "once", "at": "2030-01-01T09:00:00Z"}),
    ];
    for args in adds {
        let r = call(&tool, args).await;
        assert!(!r.is_error, "{r:?}");
        assert!(
            r.content.starts_with("ok: Add("),
            "the backend's text is returned"
        );
    }
    assert_eq!(
        *backend.calls.lock().unwrap(),
        [
            CronCall::Add(
                Some("break".into()),
                "stretch".into(),
                CronSchedule::EverySeconds(3600)
            ),
            CronCall::Add(
                None,
                "standup".into(),
                CronSchedule::Expr {
                    expr: "0 9 * * 1-5".into(),
                    tz: Some("Europe/Berlin".into())
                }
            ),
            CronCall::Add(
                None,
                "daily".into(),
                CronSchedule::Expr {
                    expr: "0 0 * * *".into(),
                    tz: None
                }
            ),
            CronCall::Add(
                None,
                "once".into(),
                CronSchedule::At("2030-01-01T09:00:00Z".into())
            ),
        ]
    );
}

#[tokio::test]
async fn cron_add_needs_exactly_one_schedule_and_a_message() {
    let (tool, backend) = cron();
    let cases = [
        (
            json!({"action": "add", "message": "m"}),
            "action \"add\" needs a schedule: give exactly one of every_seconds (repeat every \
             N seconds), cron_expr (cron expression, optional tz) or at (once, ISO 8601 \
             date-time).",
        ),
        (
            json!({"action": "add", "message": "m", "every_seconds": 60, "cron_expr": "* * * * *"}),
            "action \"add\" takes exactly one schedule, but got every_seconds and cron_expr. \
             Keep one of every_seconds, cron_expr or at.",
        ),
        (
            json!({"action": "add", "message": "m", "every_seconds": 60, "cron_expr": "* * * * *", "at": "2030-01-01T00:00:00Z"}),
            "action \"add\" takes exactly one schedule, but got every_seconds and cron_expr \
             and at. Keep one of every_seconds, cron_expr or at.",
        ),
        (
            json!({"action": "add", "message": "m", "every_seconds": 0}),
            "Argument \"every_seconds\" must be at least 1, got 0.",
        ),
        (
            json!({"action": "add", "message": "m", "every_seconds": -5}),
            "Argument \"every_seconds\" must be at least 1, got -5.",
        ),
        (
            json!({"action": "add", "every_seconds": 60}),
            "action \"add\" needs \"message\": the text delivered to you when the job fires.",
        ),
        (
            json!({"action": "add", "message": "m", "at": "2030-01-01T00:00:00Z", "tz": "UTC"}),
            "tz applies only to cron_expr. Remove tz, or schedule with cron_expr.",
        ),
    ];
    for (args, expected) in cases {
        let r = call(&tool, args.clone()).await;
        assert!(r.is_error, "{args}: {r:?}");
        // The schema's refusals come in the loop's list of problems; the tool's own alone.
        assert!(r.content.contains(expected), "{args}: {}", r.content);
    }
    let r = call(
        &tool,
        json!({"action": "add", "message": "m", "every_seconds": 1.5}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("whole number"), "{}", r.content);
    assert!(
        backend.calls.lock().unwrap().is_empty(),
        "no invalid call reached the backend"
    );
}

#[tokio::test]
async fn cron_list_remove_pause_resume() {
    let (tool, backend) = cron();
    assert_eq!(
        call(&tool, json!({"action": "list"})).await.content,
        "ok: List"
    );
    for action in ["remove", "pause", "resume"] {
        let r = call(&tool, json!({"action": action, "id": "job-1"})).await;
        assert!(!r.is_error, "{r:?}");
        let r = call(&tool, json!({"action": action})).await;
        assert!(r.is_error);
        assert_eq!(
            r.content,
            format!("action \"{action}\" needs \"id\"; action \"list\" shows the job ids.")
        );
    }
    assert_eq!(
        *backend.calls.lock().unwrap(),
        [
            CronCall::List,
            CronCall::Remove("job-1".into()),
            CronCall::Pause("job-1".into()),
            CronCall::Resume("job-1".into()),
        ]
    );
    let r = call(&tool, json!({"action": "remove", "id": "missing"})).await;
    assert!(r.is_error);
    assert_eq!(
        r.content,
        "No job with id \"missing\"; action \"list\" shows the ids."
    );
}

#[tokio::test]
async fn cron_rejects_unknown_or_missing_actions() {
    let (tool, backend) = cron();
    let r = call(&tool, json!({"action": "delete", "id": "j"})).await;
    assert!(r.is_error);
    assert!(
        r.content.contains(
            "/action: Unknown action \"delete\". Use one of: add, list, remove, pause, resume."
        ),
        "{}",
        r.content
    );
    let r = call(&tool, json!({})).await;
    assert!(r.is_error);
    assert!(r.content.contains("\"action\""), "{}", r.content);
    assert!(backend.calls.lock().unwrap().is_empty());
}

#[test]
fn the_tools_advertise_flat_schemas() {
    let (tool, _) = cron();
    let props = tool.parameters()["properties"].clone();
    let mut keys: Vec<&str> = props
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "action",
            "at",
            "cron_expr",
            "every_seconds",
            "id",
            "message",
            "name",
            "tz"
        ]
    );
    assert_eq!(tool.name(), "cron");
    let spawn = SpawnTool::new(Arc::new(NeverSpawns));
    assert_eq!(spawn.parameters()["required"], json!(["task"]));
    let message = MessageTool::new(Arc::new(|_| {}));
    assert_eq!(message.parameters()["required"], json!(["content"]));
}
