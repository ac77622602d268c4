//! The session service over the real runtime: a switch that fails changes nothing and
//! leaves nothing held; one that succeeds holds deliveries until the session is shown,
//! then records into the new file; the session a headless run resumes gets its queued
//! messages back in the agent.

use crate::support::control::Rig;
use crate::support::gating::held;
use crate::support::runs::user_texts;
use crate::support::runtime::subagent_result;
use crate::support::{Reply, until_agent_end};
use claw_tui::agent::{EventKind, Message, QueueKind};
use claw_tui::session::{
    self, Entry, OpenedSession, Resume, SessionService, SessionTarget, SessionWriter, SwitchError,
};
use std::sync::Arc;
use tokio::sync::Notify;

fn service(rig: &Rig) -> SessionService {
    SessionService::new(
        rig.main.agent.clone(),
        Some(rig.main.session_binding(&rig.settings)),
        &rig.settings,
        true,
    )
}

fn writer(rig: &Rig) -> SessionWriter {
    SessionWriter::create(&rig.settings.data_dir, rig.ws(), "demo", "scripted").unwrap()
}

#[tokio::test]
async fn a_switch_that_fails_leaves_the_supervisor_unheld() {
    let rig = Rig::start("", &[], vec![Reply::text(&["noted"])]);
    let mut sessions = service(&rig);
    let supervisor = &rig.main.supervisor;
    let in_use = writer(&rig);
    let locked = sessions
        .switch(SessionTarget::Resume(in_use.path().to_path_buf()))
        .await
        .unwrap_err();
    assert!(
        matches!(&locked, SwitchError::Locked { id, .. } if id == in_use.id()),
        "{locked}"
    );
    assert!(!supervisor.held_for_switch());
    let missing = rig.settings.data_dir.join("no-such-session.jsonl");
    let gone = sessions
        .switch(SessionTarget::Fork(missing))
        .await
        .unwrap_err();
    assert!(matches!(gone, SwitchError::Session(_)), "{gone}");
    assert!(!supervisor.held_for_switch());
    // Nothing waits for a `ready` that will never come: a result goes in at once.
    let mut ends = rig.main.agent.subscribe(Some(&[EventKind::AgentEnd]));
    supervisor.notify(subagent_result("scan finished"));
    until_agent_end(&mut ends).await;
    assert!(user_texts(&rig.provider.requests()[0])[0].contains("scan finished"));
    in_use.close().await;
}

#[tokio::test]
async fn a_switch_during_a_run_is_refused_and_leaves_nothing_held() {
    let gate = Arc::new(Notify::new());
    let busy = held(Reply::text(&["done"]), &gate);
    let rig = Rig::start("", &[], vec![busy]);
    let mut sessions = service(&rig);
    let mut starts = rig.main.agent.subscribe(Some(&[EventKind::AgentStart]));
    let mut ends = rig.main.agent.subscribe(Some(&[EventKind::AgentEnd]));
    rig.main.supervisor.submit("long task");
    starts.recv().await.unwrap();
    let refused = sessions.switch(SessionTarget::New).await.unwrap_err();
    assert!(matches!(refused, SwitchError::Busy), "{refused}");
    assert!(!rig.main.supervisor.held_for_switch());
    gate.notify_one();
    until_agent_end(&mut ends).await;
}

#[tokio::test]
async fn a_switch_holds_deliveries_until_the_session_is_shown() {
    let rig = Rig::start("", &[], vec![Reply::text(&["noted"])]);
    let mut sessions = service(&rig);
    let supervisor = &rig.main.supervisor;
    let entered = sessions.switch(SessionTarget::New).await.unwrap().unwrap();
    assert!(supervisor.held_for_switch());
    supervisor.notify(subagent_result("arrived during the switch"));
    assert!(rig.provider.requests().is_empty());
    assert_eq!(supervisor.pending_count(), 1);
    let mut ends = rig.main.agent.subscribe(Some(&[EventKind::AgentEnd]));
    sessions.ready();
    assert!(!supervisor.held_for_switch());
    until_agent_end(&mut ends).await;
    let status = sessions.close().await.expect("a session was recorded");
    assert!(status.is_saved(), "{status:?}");
    let data = session::load(&entered.path).unwrap();
    assert_eq!(data.id(), entered.id);
    assert!(data.messages.iter().any(
        |m| matches!(m, Message::Notification(n) if n.content.contains("arrived during the switch"))
    ));
}

#[tokio::test]
async fn a_session_resumed_headless_gets_its_queued_messages_back_in_the_agent() {
    let rig = Rig::start("", &[], vec![]);
    let earlier = writer(&rig);
    let path = earlier.path().to_path_buf();
    earlier.append(&Entry::Message {
        timestamp: 1,
        message: Message::user("first question"),
    });
    earlier.append(&Entry::Queue {
        timestamp: 2,
        steering: vec!["look at the tests too".into()],
        follow_up: vec!["then summarize".into()],
    });
    earlier.close().await;
    let (writer, data) = SessionWriter::resume_file(&path).unwrap();
    let opened = OpenedSession {
        writer,
        resumed: Some(data),
        notes: Vec::new(),
    };
    let mut sessions = service(&rig);
    let entered = sessions.record(opened, Resume::IntoAgent);
    let agent = &rig.main.agent;
    assert_eq!(agent.state().messages.len(), 1);
    assert!(
        entered.resumed.unwrap().messages.is_empty(),
        "moved into the agent, not copied"
    );
    assert_eq!(agent.queued(QueueKind::Steering).len(), 1);
    assert_eq!(agent.queued(QueueKind::FollowUp).len(), 1);
    assert!(
        !rig.main.supervisor.held_for_switch(),
        "nothing is held headless"
    );
    sessions.close().await;
}
