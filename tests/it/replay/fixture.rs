//! A live run recorded into a session: a scripted model whose answers stream with
//! pauses (tokio time, paused in these tests), and a client `App` fed its events as
//! the client's runtime feeds them, on the same clock the recorder stamps them with.

use crate::support::scripted::Reply;
use crate::support::tui::{config, epoch};
use claw_tui::agent::{Agent, AgentEvent, MessageDelta};
use claw_tui::llm::{LlmEvent, LlmRequest, LlmStream, Provider};
use claw_tui::runtime::{RuntimeEvent, RuntimeEventSender, runtime_channel};
use claw_tui::session::{self, EventRecording, SessionWriter};
use claw_tui::tools::message::MessageTool;
use claw_tui::tui::sessions::{self, LoadedSession};
use claw_tui::tui::{App, Msg};
use crossterm::event::Event;
use futures::StreamExt;
use serde_json::json;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tempfile::TempDir;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Pause before each streamed event.
pub const PACE: Duration = Duration::from_millis(40);
/// The user's pause between the two prompts: longer than the replay's longest gap.
pub const THINKING: Duration = Duration::from_secs(5);

/// Replies streamed one event every [`PACE`].
pub struct Paced {
    replies: Mutex<VecDeque<Vec<LlmEvent>>>,
}

impl Paced {
    pub fn new(replies: Vec<Reply>) -> Arc<Self> {
        let replies = replies
            .into_iter()
            .map(|reply| match reply {
                Reply::Events(events) => events,
                _ => panic!("only plain replies are paced"),
            })
            .collect();
        Arc::new(Self {
            replies: Mutex::new(replies),
        })
    }
}

impl Provider for Paced {
    fn stream(&self, _request: LlmRequest, _cancel: CancellationToken) -> LlmStream {
        let events = self.replies.lock().unwrap().pop_front().unwrap_or_default();
        futures::stream::iter(events)
            .then(|event| async move {
                tokio::time::sleep(PACE).await;
                event
            })
            .boxed()
    }
}

/// A recorded live run and the app it drove.
pub struct LiveRun {
    pub app: App,
    pub path: PathBuf,
    /// When the recording (and the app's clock) began.
    pub t0: Instant,
    /// The events in the order the app got them.
    pub events: Vec<AgentEvent>,
    pub _data: TempDir,
    pub _ws: TempDir,
}

/// The script: a tool call the agent does not have (an error card), then a markdown
/// answer with code; after a pause, a second prompt and a streamed answer.
pub fn script() -> Vec<Reply> {
    vec![
        Reply::tool_calls(&[("call-1", "lookup", json!({"what": "weather"}))]),
        Reply::text(&[
            "It is **sunny**.\n\n",
            "```rust\nfn main() {\n",
            "    println!(\"hi\");\n}\n```\n",
            "Anything else?",
        ]),
        Reply::text(&["Good", "bye", " for now."]),
    ]
}

/// Runs the script live (two prompts), recording the session and feeding an app.
pub async fn live_run() -> LiveRun {
    let agent = Agent::new(Paced::new(script()), "scripted");
    run_live(agent, None, &["what is the weather?", "thanks"]).await
}

/// The script with the `message` tool: a card to the user, then the answer.
pub fn message_script() -> Vec<Reply> {
    vec![
        Reply::tool_calls(&[(
            "call-1",
            "message",
            json!({"content": "Halfway through: **3** files left."}),
        )]),
        Reply::text(&["All ", "done."]),
    ]
}

/// Runs [`message_script`] live with the real `message` tool, which sends through the
/// runtime's events: the app gets them as the client's runtime forwards them, and the
/// recording logs them.
pub async fn live_run_with_message() -> LiveRun {
    let agent = Agent::new(Paced::new(message_script()), "scripted");
    let (events, runtime) = runtime_channel();
    agent.set_tools(vec![Arc::new(MessageTool::new(events.outbound_messages()))]);
    run_live(agent, Some((events, runtime)), &["tidy the files"]).await
}

/// Runs [`message_script`] live with a `message` tool that, instead of a message, has
/// the runtime ask the user to trust a workspace file (as a hook refused for a changed
/// script does): the live app shows the question, the recording logs it.
pub async fn live_run_with_trust_question() -> LiveRun {
    let agent = Agent::new(Paced::new(message_script()), "scripted");
    let (events, runtime) = runtime_channel();
    let asking = events.clone();
    let schema = json!({"type": "object", "properties": {"content": {"type": "string"}}});
    agent.set_tools(vec![crate::support::FnTool::new(
        "message",
        schema,
        move |_, _, _, _| {
            let request = claw_tui::trust::TrustRequest {
                files: vec![claw_tui::trust::FileQuestion {
                    file: claw_tui::trust::PinnedFile {
                        path: PathBuf::from("/w/scripts/guard.sh"),
                        sha256: Some("ab".repeat(32)),
                        size: 12,
                    },
                    run_by: vec!["the hook `sh scripts/guard.sh`".into()],
                    changed: true,
                }],
                ..Default::default()
            };
            asking.send(RuntimeEvent::TrustRequest { request });
            async { claw_tui::agent::ToolResult::text("blocked") }
        },
    )]);
    run_live(agent, Some((events, runtime)), &["tidy the files"]).await
}

async fn run_live(
    agent: Agent,
    mut runtime: Option<(RuntimeEventSender, UnboundedReceiver<RuntimeEvent>)>,
    prompts: &[&str],
) -> LiveRun {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(data.path(), ws.path(), "scripted", "scripted").unwrap();
    let path = writer.path().to_path_buf();
    let id = writer.id().to_owned();
    let mut rx = agent.subscribe(None);
    let t0 = Instant::now();
    let recording = EventRecording {
        runtime: runtime.as_ref().map(|(events, _)| events.clone()),
        ..EventRecording::agent_only(true)
    };
    let (finish, task) = session::record_events_with(&agent, writer, &recording);
    let mut app = App::new(config());
    app.set_clock(t0.into_std(), epoch());
    app.update_at(Msg::Term(Event::Resize(120, 40)), t0.into_std());
    let loaded = LoadedSession {
        id: Some(id),
        path: Some(path.clone()),
        quiet: true,
        ..LoadedSession::default()
    };
    app.update_at(
        Msg::Sessions(sessions::Msg::Loaded(Box::new(loaded))),
        t0.into_std(),
    );
    let mut events = Vec::new();
    for (i, prompt) in prompts.iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(THINKING).await;
        }
        agent.prompt(*prompt).unwrap();
        loop {
            // As the client's loop: agent events first, then what the runtime sent.
            let event = rx.recv().await.unwrap();
            let end = matches!(event, AgentEvent::AgentEnd { .. });
            events.push(event.clone());
            app.update_at(Msg::Agent(event), Instant::now().into_std());
            while let Some(event) = runtime.as_mut().and_then(|(_, rx)| rx.try_recv().ok()) {
                app.update_at(Msg::from(event), Instant::now().into_std());
            }
            if end {
                break;
            }
        }
    }
    let _ = agent.state();
    finish.send(()).unwrap();
    assert!(task.await.unwrap().is_saved());
    LiveRun {
        app,
        path,
        t0,
        events,
        _data: data,
        _ws: ws,
    }
}

/// What the app holds: transcript, tool calls, totals and the status bar's parts.
pub fn state(app: &App) -> String {
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        app.chat().transcript(),
        app.tools().calls(),
        app.status().totals(),
        app.status_parts(),
        app.state_word(),
    )
}

/// Whether an event is a streamed text delta.
pub fn is_delta(event: &AgentEvent) -> bool {
    matches!(
        event,
        AgentEvent::MessageUpdate {
            delta: MessageDelta::Text { .. }
        }
    )
}
