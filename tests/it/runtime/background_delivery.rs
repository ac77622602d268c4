#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Background results and the runs they cost: a backlog that waited in a session is
//! one notification (one run) listing each result; one recorded for another session is
//! announced; a subagent the user cancelled is reported but starts no run by itself.

use crate::support::runs::user_texts;
use crate::support::runtime::{RoutingProvider, is_status, until_runtime};
use crate::support::{Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::{Agent, EventKind, Message};
use claw_tui::runtime::{
    InboundMessage, MessageBus, RuntimeEvent, SYSTEM_CHANNEL, SubagentConfig, SubagentManager,
    SubagentStatus, Supervisor, runtime_channel,
};
use claw_tui::session::{self, SessionRouter, SessionWriter};
use claw_tui::tools::ToolRegistry;
use claw_tui::tools::exec::Approver;
use claw_tui::tools::policy::{PolicyConfig, ToolPolicy};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;

fn for_session(id: &str, content: &str) -> InboundMessage {
    InboundMessage::new(SYSTEM_CHANNEL, "cron", id, content)
}

/// Counts `agent_start`s: each is one run (one or more paid model calls).
fn count_runs(agent: &Agent) -> Arc<AtomicUsize> {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut starts = agent.subscribe(Some(&[EventKind::AgentStart]));
    let counter = runs.clone();
    tokio::spawn(async move {
        while starts.recv().await.is_some() {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    runs
}

#[tokio::test]
async fn a_backlog_waiting_in_a_session_is_one_notification_and_one_run_on_resume() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["Caught up on all three."])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let runs = count_runs(&agent);
    let mut ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
    let (tx, mut events) = runtime_channel();
    let supervisor = Supervisor::start(agent.clone(), &MessageBus::new(), tx).unwrap();
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    // Returns the switch's hold; dropping it delivers what waits, as the client does
    // once the chat shows the session.
    let enter = |writer: &SessionWriter, resumed: Option<&session::SessionData>| {
        let router = SessionRouter::new(
            writer.id().to_owned(),
            writer.appender(),
            data.path(),
            ws.path(),
            resumed.map_or(0, |d| d.inbox_offset),
        );
        let hold = supervisor.hold_for_switch();
        supervisor.attach(
            Arc::new(router),
            resumed
                .map(|d| d.pending_notifications.clone())
                .unwrap_or_default(),
        );
        hold
    };

    let earlier = SessionWriter::create(data.path(), ws.path(), "scripted", "m").unwrap();
    let earlier_id = earlier.id().to_owned();
    earlier.append(&session::Entry::Message {
        timestamp: 1,
        message: Message::user("add a cron job that checks the build"),
    });
    earlier.close().await;
    // `/new`: another session is active while the cron job keeps firing for the first.
    let active = SessionWriter::create(data.path(), ws.path(), "scripted", "m").unwrap();
    drop(enter(&active, None));
    for n in 1..=3 {
        supervisor.notify(for_session(
            &earlier_id,
            &format!("[Cron job \"build-check\" (cron-1) fired]\nrun {n}"),
        ));
        let parked = until_runtime(&mut events, |e| {
            matches!(e, RuntimeEvent::NotificationParked { .. })
        })
        .await;
        let Some(RuntimeEvent::NotificationParked {
            session_id,
            summary,
        }) = parked.last()
        else {
            unreachable!()
        };
        assert_eq!(session_id, &earlier_id);
        assert_eq!(summary, "Cron job \"build-check\" (cron-1) fired");
    }
    assert!(
        provider.requests().is_empty(),
        "nothing ran for the active session"
    );
    let path = session::session_path_by_id(data.path(), ws.path(), &earlier_id).unwrap();
    let listed = session::list_sessions(data.path(), ws.path());
    let waiting = listed.iter().find(|s| s.id == earlier_id).unwrap().waiting;
    assert_eq!(waiting, 3, "the session list says what waits in it");

    // Resuming it: the three arrive as one notification, in one run.
    active.close().await;
    let (writer, resumed) = SessionWriter::resume_file(&path).unwrap();
    drop(enter(&writer, Some(&resumed)));
    until_agent_end(&mut ends).await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 1, "one model call for the whole backlog");
    let texts = user_texts(&requests[0]);
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert!(texts[0].starts_with(
        "[SYSTEM NOTIFICATION]\n3 background results arrived; each is listed below, oldest first."
    ));
    for n in 1..=3 {
        assert!(texts[0].contains(&format!(
            "{n}. [Cron job \"build-check\" (cron-1) fired]\nrun {n}"
        )));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let history = agent.state().messages.clone();
    let notifications = history
        .iter()
        .filter(|m| matches!(m, Message::Notification(_)))
        .count();
    assert_eq!(notifications, 1, "the chat shows one notification, too");
    writer.close().await;
}

#[tokio::test]
async fn a_cancelled_subagent_is_reported_but_waits_for_the_next_prompt() {
    let main = ScriptedProvider::new(vec![Reply::text(&["Noted that it was cancelled."])]);
    let agent = Agent::new(main.clone(), "scripted");
    let runs = count_runs(&agent);
    let mut ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
    let bus = MessageBus::new();
    let (tx, mut events) = runtime_channel();
    let supervisor = Supervisor::start(agent.clone(), &bus, tx.clone()).unwrap();
    let sub = RoutingProvider::new();
    let gate = Arc::new(Notify::new());
    sub.route(
        "watch the logs",
        vec![Reply::Gated(Vec::new(), gate.clone(), Vec::new())],
    );
    let policy = ToolPolicy::new(
        ToolRegistry::new(),
        PolicyConfig::default(),
        Approver::Nobody,
    );
    let manager = SubagentManager::new(
        sub,
        policy,
        bus.clone(),
        tx,
        SubagentConfig::new("scripted"),
    );
    manager
        .spawn_task("call-1", "watch the logs".into(), Some("watcher".into()))
        .unwrap();
    until_runtime(&mut events, |e| {
        is_status(e, "subagent-1", SubagentStatus::Running)
    })
    .await;

    manager.cancel("subagent-1").unwrap();
    let seen = until_runtime(&mut events, |e| {
        matches!(e, RuntimeEvent::NotificationDeferred { .. })
    })
    .await;
    let Some(RuntimeEvent::NotificationDeferred { summary }) = seen.last() else {
        unreachable!()
    };
    assert_eq!(summary, "Subagent \"watcher\" (subagent-1) cancelled");
    until_runtime(&mut events, |e| {
        matches!(e, RuntimeEvent::PendingNotifications { count: 1 })
    })
    .await;
    // The supervisor decided before it said so: nothing started, and nothing else can
    // start a run until the user writes.
    assert!(!agent.state().is_streaming);
    assert!(
        main.requests().is_empty(),
        "a cancelled subagent costs no run by itself"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(supervisor.pending_count(), 1);

    supervisor.submit("what next?");
    until_agent_end(&mut ends).await;
    let texts = user_texts(&main.requests()[0]);
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains("[Subagent \"watcher\" (subagent-1) cancelled]"));
    assert_eq!(texts[1], "what next?");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    gate.notify_waiters();
}

#[tokio::test]
async fn a_deferred_result_goes_with_a_follow_up_that_starts_a_run() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["ok"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
    let supervisor =
        Supervisor::start(agent.clone(), &MessageBus::new(), runtime_channel().0).unwrap();
    supervisor.notify(
        InboundMessage::new(
            SYSTEM_CHANNEL,
            "subagent",
            "",
            "[Subagent \"x\" (subagent-1) cancelled]",
        )
        .deferred(),
    );
    assert_eq!(supervisor.pending_count(), 1);
    assert!(provider.requests().is_empty());
    // A message queued as the agent went idle starts the run; the result rides along.
    agent.follow_up("carry on");
    supervisor.release();
    until_agent_end(&mut ends).await;
    let texts = user_texts(&provider.requests()[0]);
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains("cancelled") && texts[1] == "carry on");
    assert_eq!(supervisor.pending_count(), 0);
}
