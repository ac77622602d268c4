#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The supervisor: atomic Submit/Steer decisions, notifications delivered at once when
//! idle and after the run when busy (in order, never lost), and subagent results
//! reaching the main agent through the bus.

use crate::support::gating::held;
use crate::support::runs::user_texts;
use crate::support::runtime::{RoutingProvider, is_status, until_runtime};
use crate::support::{Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::{Agent, AgentEvent, EventKind, Message, NotificationMessage, ToolExecution};
use claw_tui::runtime::{
    InboundMessage, MessageBus, RuntimeEvent, SYSTEM_CHANNEL, SubagentConfig, SubagentManager,
    SubagentStatus, Supervisor, SupervisorInput, SupervisorOutcome, runtime_channel,
};
use claw_tui::tools::spawn::SpawnTool;
use serde_json::json;
use std::sync::Arc;
use tokio::sync::{Notify, mpsc};

fn system(sender: &str, content: &str) -> InboundMessage {
    InboundMessage::new(SYSTEM_CHANNEL, sender, "direct", content)
}

struct Fixture {
    provider: Arc<ScriptedProvider>,
    bus: MessageBus,
    supervisor: Supervisor,
    agent_events: mpsc::UnboundedReceiver<AgentEvent>,
    runtime_events: mpsc::UnboundedReceiver<RuntimeEvent>,
}

fn fixture(replies: Vec<Reply>) -> Fixture {
    let provider = ScriptedProvider::new(replies);
    let agent = Agent::new(provider.clone(), "scripted");
    let agent_events = agent.subscribe(Some(&[EventKind::AgentEnd]));
    let bus = MessageBus::new();
    let (tx, runtime_events) = runtime_channel();
    let supervisor = Supervisor::start(agent, &bus, tx).unwrap();
    Fixture {
        provider,
        bus,
        supervisor,
        agent_events,
        runtime_events,
    }
}

async fn pending_reaches(rx: &mut mpsc::UnboundedReceiver<RuntimeEvent>, count: usize) {
    until_runtime(
        rx,
        |e| matches!(e, RuntimeEvent::PendingNotifications { count: c } if *c == count),
    )
    .await;
}

#[tokio::test]
async fn submit_and_steer_start_a_run_when_idle_and_queue_while_running() {
    let gate = Arc::new(Notify::new());
    let mut f = fixture(vec![
        held(Reply::text(&["first"]), &gate),
        Reply::text(&["after follow-up"]),
        Reply::text(&["steered from idle"]),
    ]);
    let sup = &f.supervisor;
    assert_eq!(
        sup.send(SupervisorInput::Submit("hello".into())),
        SupervisorOutcome::Started
    );
    // The run is active from the moment `Started` is returned: no window for a race.
    assert!(sup.agent().state().is_streaming);
    assert_eq!(
        sup.submit("and also this"),
        SupervisorOutcome::QueuedFollowUp
    );
    assert_eq!(
        sup.steer("focus on tests"),
        SupervisorOutcome::QueuedSteering
    );
    gate.notify_one();
    until_agent_end(&mut f.agent_events).await;

    let requests = f.provider.requests();
    // One run took both: the steering before its first call (the run task had not
    // polled yet), the follow-up when the model stopped.
    assert_eq!(requests.len(), 2);
    assert_eq!(user_texts(&requests[0]), ["hello", "focus on tests"]);
    assert_eq!(
        user_texts(&requests[1]),
        ["hello", "focus on tests", "and also this"]
    );

    assert_eq!(
        sup.send(SupervisorInput::Steer("now this".into())),
        SupervisorOutcome::Started
    );
    until_agent_end(&mut f.agent_events).await;
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(user_texts(&requests[2]).last().unwrap(), "now this");
}

#[tokio::test]
async fn a_notification_while_idle_starts_a_run_at_once() {
    let mut f = fixture(vec![Reply::text(&["noted"])]);
    f.bus.publish(system(
        "cron",
        "[Cron job \"standup\" (job-1) fired]\nPost the standup.",
    ));
    until_agent_end(&mut f.agent_events).await;
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        user_texts(&requests[0]),
        ["[SYSTEM NOTIFICATION]\n[Cron job \"standup\" (job-1) fired]\nPost the standup."]
    );
    let state = f.supervisor.agent().state();
    match &state.messages[0] {
        Message::Notification(NotificationMessage {
            source, content, ..
        }) => {
            assert_eq!(source, "cron");
            assert!(content.starts_with("[SYSTEM NOTIFICATION]\n[Cron job"));
        }
        other => panic!("expected a notification, got {other:?}"),
    }
    assert_eq!(f.supervisor.pending_count(), 0);
}

#[tokio::test]
async fn notifications_during_a_run_wait_and_follow_it_in_order() {
    let gate = Arc::new(Notify::new());
    let mut f = fixture(vec![
        held(Reply::text(&["busy answer"]), &gate),
        Reply::text(&["handled both"]),
    ]);
    assert_eq!(f.supervisor.submit("work"), SupervisorOutcome::Started);
    f.bus.publish(system("subagent", "first result"));
    f.bus.publish(system("cron", "second result"));
    pending_reaches(&mut f.runtime_events, 1).await;
    pending_reaches(&mut f.runtime_events, 2).await;
    assert_eq!(f.supervisor.pending_count(), 2);
    assert_eq!(
        f.supervisor
            .pending()
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>(),
        ["first result", "second result"]
    );

    gate.notify_one();
    until_agent_end(&mut f.agent_events).await;
    until_agent_end(&mut f.agent_events).await;
    pending_reaches(&mut f.runtime_events, 0).await;
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(user_texts(&requests[0]), ["work"]);
    // The backlog is one notification listing each result, in order: one message.
    assert_eq!(
        user_texts(&requests[1]),
        [
            "work",
            "[SYSTEM NOTIFICATION]\n2 background results arrived; each is listed below, oldest \
             first.\n\n1. first result\n\n2. second result"
        ]
    );
    assert_eq!(f.supervisor.pending_count(), 0);
    let json = serde_json::to_value(RuntimeEvent::PendingNotifications { count: 2 }).unwrap();
    assert_eq!(json, json!({"type": "pending_notifications", "count": 2}));
}

#[tokio::test]
async fn after_an_abort_waiting_notifications_ride_along_with_the_next_input() {
    let mut f = fixture(vec![
        Reply::Hang(vec![claw_tui::llm::LlmEvent::Start]),
        Reply::text(&["hi back"]),
    ]);
    assert_eq!(f.supervisor.submit("long task"), SupervisorOutcome::Started);
    f.bus.publish(system("subagent", "result while busy"));
    pending_reaches(&mut f.runtime_events, 1).await;
    f.supervisor.abort();
    until_agent_end(&mut f.agent_events).await;
    // Held: the user just stopped the agent, so it does not restart on its own.
    assert_eq!(f.supervisor.pending_count(), 1);
    assert_eq!(f.provider.requests().len(), 1);

    assert_eq!(f.supervisor.submit("hi"), SupervisorOutcome::Started);
    until_agent_end(&mut f.agent_events).await;
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        user_texts(&requests[1]),
        [
            "long task",
            // The aborted answer is not sent; the model is told it is missing.
            "[The previous message got no complete answer: Aborted by the user.]\n\n\
             [SYSTEM NOTIFICATION]\nresult while busy",
            "hi"
        ]
    );
    assert_eq!(f.supervisor.pending_count(), 0);
}

#[tokio::test]
async fn a_new_notification_releases_the_hold_after_an_abort() {
    let mut f = fixture(vec![
        Reply::Hang(vec![claw_tui::llm::LlmEvent::Start]),
        Reply::text(&["both handled"]),
    ]);
    f.supervisor.submit("long task");
    f.bus.publish(system("cron", "one"));
    pending_reaches(&mut f.runtime_events, 1).await;
    f.supervisor.abort();
    until_agent_end(&mut f.agent_events).await;
    f.bus.publish(system("cron", "two"));
    until_agent_end(&mut f.agent_events).await;
    let requests = f.provider.requests();
    assert_eq!(
        user_texts(&requests[1]),
        [
            "long task",
            "[The previous message got no complete answer: Aborted by the user.]\n\n\
             [SYSTEM NOTIFICATION]\n2 background results arrived; each is listed below, \
             oldest first.\n\n1. one\n\n2. two"
        ]
    );
}

#[tokio::test]
async fn after_stop_the_bus_keeps_messages_for_later() {
    let f = fixture(vec![]);
    f.supervisor.stop().await;
    assert!(!f.bus.has_subscriber(SYSTEM_CHANNEL));
    f.bus.publish(system("cron", "while stopped"));
    assert_eq!(f.bus.backlog_len(SYSTEM_CHANNEL), 1);
    assert!(f.provider.requests().is_empty());
}

#[tokio::test]
async fn a_backlog_published_before_the_supervisor_starts_is_delivered() {
    let provider = ScriptedProvider::new(vec![Reply::text(&["caught up"])]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
    let bus = MessageBus::new();
    bus.publish(system("cron", "fired while starting up"));
    let _sup = Supervisor::start(
        agent,
        &bus,
        claw_tui::runtime::RuntimeEventSender::discard(),
    )
    .unwrap();
    until_agent_end(&mut ends).await;
    assert_eq!(
        user_texts(&provider.requests()[0]),
        ["[SYSTEM NOTIFICATION]\nfired while starting up"]
    );
}

#[tokio::test]
async fn subagent_results_reach_the_main_agent_after_its_run_in_order() {
    let main_gate = Arc::new(Notify::new());
    let main_provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[
            ("call-a", "spawn", json!({"task": "task A", "label": "A"})),
            ("call-b", "spawn", json!({"task": "task B", "label": "B"})),
        ]),
        held(Reply::text(&["Both are running."]), &main_gate),
        Reply::text(&["Got both results."]),
    ]);
    let sub_provider = RoutingProvider::new();
    let b_gate = Arc::new(Notify::new());
    sub_provider.route("task A", vec![Reply::text(&["A result"])]);
    sub_provider.route("task B", vec![held(Reply::text(&["B result"]), &b_gate)]);

    let bus = MessageBus::new();
    let (tx, mut runtime_events) = runtime_channel();
    let policy = claw_tui::tools::policy::ToolPolicy::new(
        claw_tui::tools::ToolRegistry::new(),
        claw_tui::tools::policy::PolicyConfig::default(),
        claw_tui::tools::exec::Approver::Nobody,
    );
    let manager = SubagentManager::new(
        sub_provider.clone(),
        policy,
        bus.clone(),
        tx.clone(),
        SubagentConfig::new("scripted"),
    );
    let agent = Agent::new(main_provider.clone(), "scripted");
    agent.set_tool_execution(ToolExecution::Sequential);
    agent.set_tools(vec![Arc::new(SpawnTool::new(Arc::new(manager.clone())))]);
    let mut ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
    let sup = Supervisor::start(agent, &bus, tx).unwrap();

    assert_eq!(
        sup.submit("run A and B in the background"),
        SupervisorOutcome::Started
    );
    until_runtime(&mut runtime_events, |e| {
        is_status(e, "subagent-1", SubagentStatus::Done)
    })
    .await;
    pending_reaches(&mut runtime_events, 1).await;
    b_gate.notify_one();
    until_runtime(&mut runtime_events, |e| {
        is_status(e, "subagent-2", SubagentStatus::Done)
    })
    .await;
    pending_reaches(&mut runtime_events, 2).await;
    assert_eq!(
        main_provider.requests().len(),
        2,
        "the main run is still busy"
    );

    main_gate.notify_one();
    until_agent_end(&mut ends).await;
    until_agent_end(&mut ends).await;
    let requests = main_provider.requests();
    assert_eq!(requests.len(), 3);
    let users = user_texts(&requests[2]);
    assert_eq!(
        users[1..],
        [
            "[SYSTEM NOTIFICATION]\n2 background results arrived; each is listed below, oldest \
          first.\n\n1. [Subagent \"A\" (subagent-1) completed]\nA result\n\n\
          2. [Subagent \"B\" (subagent-2) completed]\nB result"
        ]
    );
    let history = sup.agent().state().messages.clone();
    let tail: Vec<String> = history
        .iter_from(history.len() - 2)
        .map(|m| match m {
            Message::Notification(n) => {
                format!("{}: {}", n.source, n.content.lines().nth(1).unwrap())
            }
            other => other.preview_text(),
        })
        .collect();
    assert_eq!(
        tail,
        [
            "subagent: 2 background results arrived; each is listed below, oldest first.",
            "Got both results.",
        ]
    );
    let infos = manager.list();
    assert_eq!(
        infos
            .iter()
            .map(|i| (i.parent_tool_call_id.as_str(), i.label.as_str()))
            .collect::<Vec<_>>(),
        [("call-a", "A"), ("call-b", "B")]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keypress_racing_a_notification_is_neither_lost_nor_duplicated() {
    for round in 0..40 {
        let replies = (0..4).map(|_| Reply::text(&["ok"])).collect();
        let mut f = fixture(replies);
        f.bus.publish(system("cron", "tick"));
        let outcome = f.supervisor.submit("typed");
        assert_ne!(outcome, SupervisorOutcome::QueuedSteering);
        loop {
            until_agent_end(&mut f.agent_events).await;
            let state = f.supervisor.agent().state();
            let users = state
                .messages
                .iter()
                .filter(|m| matches!(m, Message::User(u) if u.content == "typed"))
                .count();
            let notes = state
                .messages
                .iter()
                .filter(|m| matches!(m, Message::Notification(_)))
                .count();
            assert!(users <= 1 && notes <= 1, "round {round}: duplicated");
            if users == 1 && notes == 1 {
                break;
            }
        }
        assert!(
            f.supervisor
                .agent()
                .queued(claw_tui::agent::QueueKind::FollowUp)
                .is_empty()
        );
    }
}

#[tokio::test]
async fn a_follow_up_left_queued_when_a_run_fails_starts_the_next_run() {
    let gate = Arc::new(Notify::new());
    let failing = held(Reply::error("overloaded"), &gate);
    let mut f = fixture(vec![failing, Reply::text(&["answering the follow-up"])]);
    assert_eq!(f.supervisor.submit("first"), SupervisorOutcome::Started);
    assert_eq!(
        f.supervisor.submit("later"),
        SupervisorOutcome::QueuedFollowUp
    );
    // A failed run stops without taking follow-ups; the supervisor sends it on its own.
    gate.notify_one();
    until_agent_end(&mut f.agent_events).await;
    until_agent_end(&mut f.agent_events).await;
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        user_texts(&requests[1]),
        [
            "first",
            "[The previous message got no complete answer: overloaded.]\n\nlater"
        ]
    );
    assert!(
        f.supervisor
            .agent()
            .queued(claw_tui::agent::QueueKind::FollowUp)
            .is_empty()
    );
}

#[tokio::test]
async fn a_message_sent_after_a_run_stopped_at_its_turn_limit_waits_behind_its_follow_ups() {
    let gate = Arc::new(Notify::new());
    let mut f = fixture(vec![
        held(Reply::text(&["first answer"]), &gate),
        Reply::text(&["answer to the follow-up"]),
        Reply::text(&["answer to the newest"]),
    ]);
    f.supervisor.agent().set_max_turns(1);
    assert_eq!(f.supervisor.submit("first"), SupervisorOutcome::Started);
    assert_eq!(
        f.supervisor.submit("queued during the run"),
        SupervisorOutcome::QueuedFollowUp
    );
    // Delivery is frozen, so the state after the run's end stays as it is: idle, with
    // the follow-up the run left at its turn limit (the moment before the supervisor
    // starts it on its own, in which a new message used to jump ahead).
    let hold = f.supervisor.hold_for_switch();
    gate.notify_one();
    until_agent_end(&mut f.agent_events).await;
    assert_eq!(
        f.supervisor.submit("newest"),
        SupervisorOutcome::QueuedFollowUp,
        "it waits behind the follow-up"
    );
    assert!(!f.supervisor.agent().state().is_streaming);
    drop(hold);
    for _ in 0..2 {
        until_agent_end(&mut f.agent_events).await;
    }
    let requests = f.provider.requests();
    let last_users: Vec<String> = requests
        .iter()
        .map(|r| user_texts(r).last().cloned().unwrap())
        .collect();
    assert_eq!(last_users, ["first", "queued during the run", "newest"]);
}
