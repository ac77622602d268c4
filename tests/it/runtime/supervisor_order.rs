#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Messages sent in a burst run in the order they were sent, however the runs' ends
//! fall between them: a message queued in the moment between a run's last look at its
//! queue and that run's end is never overtaken by one sent later.

use crate::support::reading::user_messages_in_history;
use crate::support::{Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::{Agent, AgentEvent, EventKind, QueueKind};
use claw_tui::runtime::{MessageBus, Supervisor, runtime_channel};
use tokio::sync::mpsc;

const COUNT: usize = 400;

struct Burst {
    supervisor: Supervisor,
    ends: mpsc::UnboundedReceiver<AgentEvent>,
    _bus: MessageBus,
}

fn burst(max_turns: u32) -> Burst {
    let replies = (0..COUNT).map(|_| Reply::text(&["ok"])).collect();
    let agent = Agent::new(ScriptedProvider::new(replies), "scripted");
    agent.set_max_turns(max_turns);
    let ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
    let bus = MessageBus::new();
    let (tx, _events) = runtime_channel();
    let supervisor = Supervisor::start(agent, &bus, tx).unwrap();
    Burst {
        supervisor,
        ends,
        _bus: bus,
    }
}

/// Sends the burst, yielding now and then so runs start and end between the messages,
/// then waits until nothing runs and nothing is queued; returns the user messages in
/// the order they went into the history.
async fn send_and_settle(b: &mut Burst) -> Vec<String> {
    for i in 0..COUNT {
        b.supervisor.submit(format!("message {i}"));
        if i % 3 == 0 {
            tokio::task::yield_now().await;
        }
    }
    loop {
        let agent = b.supervisor.agent();
        if !agent.state().is_streaming && agent.queued(QueueKind::FollowUp).is_empty() {
            break;
        }
        until_agent_end(&mut b.ends).await;
    }
    user_messages_in_history(b.supervisor.agent())
}

fn sent() -> Vec<String> {
    (0..COUNT).map(|i| format!("message {i}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_sent_in_a_burst_run_in_the_order_they_were_sent() {
    let mut b = burst(1000);
    assert_eq!(send_and_settle(&mut b).await, sent());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_keeps_its_order_when_runs_keep_stopping_at_the_turn_limit() {
    // A run that stops at its limit leaves follow-ups queued: they were sent before
    // anything that arrives while it ends, and go first.
    let mut b = burst(2);
    assert_eq!(send_and_settle(&mut b).await, sent());
}
