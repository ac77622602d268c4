#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Notifications go back to the session that started the work: recorded in it when it
//! is not the active one and delivered when it is resumed; the active session records
//! its own pending notifications, so a restart does not lose them.

use crate::support::cron::{Env, next, recorder, t0};
use crate::support::gating::held;
use crate::support::runs::user_texts;
use crate::support::{Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::{Agent, AgentEvent, EventKind, Message};
use claw_tui::runtime::{
    InboundMessage, MessageBus, RuntimeEvent, SYSTEM_CHANNEL, Supervisor, SwitchHold,
    runtime_channel,
};
use claw_tui::session::{self, Entry, SessionData, SessionRouter, SessionWriter, record_events};
use claw_tui::tools::cron::CronSchedule;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::{Notify, mpsc};

struct Fixture {
    data: tempfile::TempDir,
    ws: tempfile::TempDir,
    provider: Arc<ScriptedProvider>,
    supervisor: Supervisor,
    ends: mpsc::UnboundedReceiver<AgentEvent>,
    events: mpsc::UnboundedReceiver<RuntimeEvent>,
    /// The holds the switches took, as the client keeps them until the chat shows the
    /// session.
    holds: std::sync::Mutex<Vec<SwitchHold>>,
}

fn fixture(replies: Vec<Reply>) -> Fixture {
    let provider = ScriptedProvider::new(replies);
    let agent = Agent::new(provider.clone(), "scripted");
    let ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
    let (tx, events) = runtime_channel();
    let supervisor = Supervisor::start(agent, &MessageBus::new(), tx).unwrap();
    Fixture {
        data: tempfile::tempdir().unwrap(),
        ws: tempfile::tempdir().unwrap(),
        provider,
        supervisor,
        ends,
        events,
        holds: std::sync::Mutex::default(),
    }
}

impl Fixture {
    fn create(&self) -> SessionWriter {
        SessionWriter::create(self.data.path(), self.ws.path(), "scripted", "m").unwrap()
    }

    /// Makes `writer`'s session the active one, as the client does on a switch
    /// (delivery starts on `release`).
    fn enter(&self, writer: &SessionWriter, resumed: Option<&SessionData>) {
        let pending = resumed.map(|d| d.pending_notifications.clone());
        let router = SessionRouter::new(
            writer.id().to_owned(),
            writer.appender(),
            self.data.path(),
            self.ws.path(),
            resumed.map_or(0, |d| d.inbox_offset),
        );
        self.hold();
        self.supervisor
            .attach(Arc::new(router), pending.unwrap_or_default());
    }

    /// Holds delivery, as a switch does.
    fn hold(&self) {
        let hold = self.supervisor.hold_for_switch();
        self.holds.lock().unwrap().push(hold);
    }

    /// The session is shown: the holds go, and what waits is delivered.
    fn release(&self) {
        self.holds.lock().unwrap().clear();
        self.supervisor.release();
    }

    fn path_of(&self, id: &str) -> std::path::PathBuf {
        session::session_path_by_id(self.data.path(), self.ws.path(), id).unwrap()
    }
}

fn for_session(id: &str, content: &str) -> InboundMessage {
    InboundMessage::new(SYSTEM_CHANNEL, "subagent", id, content)
}

fn pending_in(path: &Path) -> Vec<String> {
    session::load(path)
        .unwrap()
        .pending_notifications
        .into_iter()
        .map(|m| m.content)
        .collect()
}

#[tokio::test]
async fn a_notification_for_an_inactive_session_waits_in_it_until_it_is_resumed() {
    let mut f = fixture(vec![Reply::text(&["noted"])]);
    let earlier = f.create();
    let earlier_id = earlier.id().to_owned();
    earlier.append(&Entry::Message {
        timestamp: 1,
        message: Message::user("scan the repo in the background"),
    });
    earlier.close().await;
    let active = f.create();
    f.enter(&active, None);
    f.release();

    f.supervisor.notify(for_session(
        &earlier_id,
        "[Subagent \"scan\" (subagent-1) completed]",
    ));
    assert!(
        f.provider.requests().is_empty(),
        "the active session's agent does not see it"
    );
    assert_eq!(f.supervisor.pending_count(), 0);
    let earlier_path = f.path_of(&earlier_id);
    assert_eq!(
        pending_in(&earlier_path),
        ["[Subagent \"scan\" (subagent-1) completed]"]
    );

    // Switching back: the session's history and its undelivered notification return.
    active.close().await;
    let (writer, data) = SessionWriter::resume_file(&earlier_path).unwrap();
    let agent = f.supervisor.agent().clone();
    agent.replace_messages(data.messages.clone()).unwrap();
    f.enter(&writer, Some(&data));
    let (finish, recording) = record_events(&agent, writer);
    f.release();
    until_agent_end(&mut f.ends).await;
    // The resumed history, then the notification.
    let texts = user_texts(&f.provider.requests()[0]);
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert_eq!(texts[0], "scan the repo in the background");
    assert!(texts[1].contains("[SYSTEM NOTIFICATION]") && texts[1].contains("subagent-1"));
    let _ = agent.state();
    finish.send(()).unwrap();
    recording.await.unwrap();
    let after = session::load(&earlier_path).unwrap();
    assert!(after.pending_notifications.is_empty(), "delivered once");
    assert!(
        after
            .messages
            .iter()
            .any(|m| matches!(m, Message::Notification(n) if n.content.contains("subagent-1")))
    );
}

#[tokio::test]
async fn a_notification_for_no_known_session_goes_to_the_active_one() {
    let mut f = fixture(vec![Reply::text(&["ok"])]);
    let active = f.create();
    f.enter(&active, None);
    f.release();
    f.supervisor.notify(for_session(
        "cli:direct",
        "[Cron job \"tick\" (cron-1) fired]",
    ));
    until_agent_end(&mut f.ends).await;
    assert!(user_texts(&f.provider.requests()[0])[0].contains("cron-1"));
}

#[tokio::test]
async fn the_active_session_records_what_waits_so_a_restart_delivers_it() {
    let gate = Arc::new(Notify::new());
    let text = held(Reply::text(&["busy"]), &gate);
    let f = fixture(vec![text]);
    let active = f.create();
    let id = active.id().to_owned();
    f.enter(&active, None);
    f.supervisor.submit("work");
    f.supervisor.notify(for_session(&id, "first result"));
    f.supervisor.notify(for_session("", "second result"));
    assert_eq!(f.supervisor.pending_count(), 2);
    // The process dies here: the run never ends, nothing more is written.
    active.close().await;
    assert_eq!(
        pending_in(&f.path_of(&id)),
        ["first result", "second result"]
    );

    // A new process resumes the session: both are delivered, oldest first.
    let mut g = fixture(vec![Reply::text(&["thanks"])]);
    let (writer, data) = SessionWriter::resume_file(&f.path_of(&id)).unwrap();
    g.data = f.data;
    g.ws = f.ws;
    g.enter(&writer, Some(&data));
    g.release();
    until_agent_end(&mut g.ends).await;
    let texts = user_texts(&g.provider.requests()[0]);
    assert_eq!(texts.len(), 1, "one notification lists both: {texts:?}");
    assert!(
        texts[0].contains("1. first result\n\n2. second result"),
        "{texts:?}"
    );
    gate.notify_one();
}

#[tokio::test(start_paused = true)]
async fn cron_jobs_report_to_the_session_that_added_them() {
    let env = Env::new();
    let (service, _clock) = env.open_at(t0());
    service.set_origin(Some("session-a".into()));
    service
        .add(
            Some("a".into()),
            "from a".into(),
            CronSchedule::EverySeconds(60),
        )
        .unwrap();
    service.set_origin(None);
    service
        .add(
            Some("any".into()),
            "from nowhere".into(),
            CronSchedule::EverySeconds(90),
        )
        .unwrap();
    let (on_fire, mut fired) = recorder();
    let _scheduler = service.start_scheduler(on_fire).unwrap();
    let first = next(&mut fired).await;
    assert_eq!(
        (first.name.as_str(), first.session.as_deref()),
        ("a", Some("session-a"))
    );
    let second = next(&mut fired).await;
    assert_eq!((second.name.as_str(), second.session), ("any", None));
    // The origin is stored with the job, so it survives a restart.
    let stored = env.jobs_json(&service);
    assert_eq!(stored["jobs"][0]["session"], "session-a");
    assert!(stored["jobs"][1].get("session").is_none());
}

#[tokio::test]
async fn a_switch_leaves_the_old_sessions_notifications_with_it() {
    let mut f = fixture(vec![Reply::text(&["ok"])]);
    let old = f.create();
    let old_id = old.id().to_owned();
    f.enter(&old, None);
    f.release();

    // Mid-switch: both wait; one is the old session's, one is for whoever is active.
    f.hold();
    f.supervisor.notify(for_session(&old_id, "for the old one"));
    f.supervisor.notify(for_session("", "for anyone"));
    let new = f.create();
    let new_id = new.id().to_owned();
    f.enter(&new, None);
    old.close().await;
    assert_eq!(pending_in(&f.path_of(&old_id)), ["for the old one"]);
    f.release();
    until_agent_end(&mut f.ends).await;
    let texts = user_texts(&f.provider.requests()[0]);
    assert_eq!(texts.len(), 1);
    assert!(texts[0].contains("for anyone"), "{texts:?}");
    new.close().await;
    // Nothing waits in the new session (and with no message it was not even kept).
    let new_path = session::session_path_by_id(f.data.path(), f.ws.path(), &new_id);
    assert!(new_path.is_none_or(|p| pending_in(&p).is_empty()));
}

/// Another process (the one that fires the cron jobs) parks a notification in the inbox
/// of a session this process has open: it is picked up within a second or so and
/// delivered now, not at the next resume, and recorded as taken, so a later resume does
/// not deliver it again.
#[tokio::test]
async fn a_notification_another_process_parks_for_the_open_session_is_delivered_now() {
    let mut f = fixture(vec![Reply::text(&["on it"])]);
    let active = f.create();
    let id = active.id().to_owned();
    f.enter(&active, None);
    let agent = f.supervisor.agent().clone();
    let (finish, recording) = record_events(&agent, active);
    f.release();

    let path = f.path_of(&id);
    session::record_undelivered(
        &path,
        &for_session(&id, "[Cron job \"tick\" (cron-1) fired]"),
    )
    .unwrap();
    until_agent_end(&mut f.ends).await;
    let texts = user_texts(&f.provider.requests()[0]);
    assert!(texts[0].contains("cron-1"), "{texts:?}");

    let _ = agent.state();
    finish.send(()).unwrap();
    recording.await.unwrap();
    let data = session::load(&path).unwrap();
    assert!(
        data.pending_notifications.is_empty(),
        "taken, not left for a resume"
    );
    assert_eq!(
        data.inbox_offset,
        std::fs::metadata(session::inbox_path(&path)).unwrap().len()
    );
    assert!(
        data.messages
            .iter()
            .any(|m| matches!(m, Message::Notification(n) if n.content.contains("cron-1")))
    );
}

/// Parked while a run is active: it waits like any notification and starts the next run.
#[tokio::test]
async fn a_notification_parked_during_a_run_is_delivered_after_it() {
    let gate = Arc::new(Notify::new());
    let busy = held(Reply::text(&["busy"]), &gate);
    let mut f = fixture(vec![busy, Reply::text(&["thanks"])]);
    let active = f.create();
    let id = active.id().to_owned();
    f.enter(&active, None);
    f.release();
    f.supervisor.submit("work");
    session::record_undelivered(&f.path_of(&id), &for_session(&id, "parked result")).unwrap();
    // Picked up while the run waits at its gate: it is pending.
    loop {
        let event = tokio::time::timeout(crate::support::DEADLINE, f.events.recv())
            .await
            .expect("never picked up")
            .unwrap();
        if event == (RuntimeEvent::PendingNotifications { count: 1 }) {
            break;
        }
    }
    gate.notify_one();
    until_agent_end(&mut f.ends).await;
    until_agent_end(&mut f.ends).await;
    let requests = f.provider.requests();
    let texts = user_texts(&requests[1]);
    assert!(texts.last().unwrap().contains("parked result"), "{texts:?}");
    active.close().await;
}

/// Many notifications arriving while a run is busy (cron jobs firing together) each add
/// one line of their own to the session: what the file gains is proportional to what
/// arrived (appending the whole list on each arrival grew it quadratically), and a
/// restart still finds every one, in order.
#[tokio::test]
async fn notifications_that_pile_up_add_to_the_session_what_arrived_and_no_more() {
    let gate = Arc::new(Notify::new());
    let f = fixture(vec![held(Reply::text(&["busy"]), &gate)]);
    let active = f.create();
    let id = active.id().to_owned();
    f.enter(&active, None);
    f.release();
    f.supervisor.submit("work");
    let arrived: Vec<InboundMessage> = (0..300)
        .map(|i| for_session(&id, &format!("[Cron job \"job {i}\" (cron-{i}) fired]")))
        .collect();
    for message in &arrived {
        f.supervisor.notify(message.clone());
    }
    assert_eq!(f.supervisor.pending_count(), 300);
    // The process dies here, the run still busy.
    active.close().await;
    let path = f.path_of(&id);
    let text = std::fs::read_to_string(&path).unwrap();
    let written: usize = text
        .lines()
        .filter(|l| l.contains("\"type\":\"pending_"))
        .map(|l| l.len() + 1)
        .sum();
    let each = serde_json::to_string(&arrived[0]).unwrap().len();
    // One line per arrival: the message and a line's few fields.
    assert!(
        written <= arrived.len() * (each + 100),
        "{written} bytes of pending notifications for {} arrivals of {each} bytes",
        arrived.len()
    );
    let restored = session::load(&path).unwrap().pending_notifications;
    assert_eq!(restored, arrived);
    gate.notify_one();
}
