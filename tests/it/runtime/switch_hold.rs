//! The supervisor's switch hold is a guard: nothing is delivered while one is alive, and
//! no path (an early return, an error, a panic) can leave the supervisor held.

use crate::support::runs::user_texts;
use crate::support::runtime::subagent_result;
use crate::support::{Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::{Agent, AgentEvent, EventKind};
use claw_tui::runtime::{MessageBus, Supervisor, runtime_channel};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;

fn start(
    replies: Vec<Reply>,
) -> (
    Arc<ScriptedProvider>,
    Supervisor,
    UnboundedReceiver<AgentEvent>,
) {
    let provider = ScriptedProvider::new(replies);
    let agent = Agent::new(provider.clone(), "scripted");
    let ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
    let supervisor = Supervisor::start(agent, &MessageBus::new(), runtime_channel().0).unwrap();
    (provider, supervisor, ends)
}

/// A switch that takes the hold and then fails half-way, as opening a file does.
fn switch_that_fails(supervisor: &Supervisor, missing: &std::path::Path) -> std::io::Result<()> {
    let _hold = supervisor.hold_for_switch();
    std::fs::read(missing)?;
    unreachable!("the file does not exist");
}

#[tokio::test]
async fn nothing_is_delivered_until_the_last_hold_is_dropped() {
    let (provider, supervisor, mut ends) = start(vec![Reply::text(&["noted"])]);
    let first = supervisor.hold_for_switch();
    let second = supervisor.hold_for_switch();
    supervisor.notify(subagent_result("scan finished"));
    drop(first);
    // Delivery happens under the supervisor's lock, in the call that allows it: had the
    // first drop released the hold, the run would have started by now.
    assert!(supervisor.held_for_switch());
    assert_eq!(supervisor.pending_count(), 1);
    assert!(provider.requests().is_empty());
    drop(second);
    assert!(!supervisor.held_for_switch());
    until_agent_end(&mut ends).await;
    let texts = user_texts(&provider.requests()[0]);
    assert!(texts[0].contains("scan finished"), "{texts:?}");
}

#[tokio::test]
async fn a_switch_that_returns_early_with_an_error_leaves_the_supervisor_unheld() {
    let (provider, supervisor, mut ends) = start(vec![Reply::text(&["noted"])]);
    let missing = tempfile::tempdir().unwrap().path().join("gone.jsonl");
    let hold = supervisor.hold_for_switch();
    supervisor.notify(subagent_result("arrived mid-switch"));
    let failed = switch_that_fails(&supervisor, &missing);
    assert!(failed.is_err());
    // The outer hold still stands; once it goes too, what waited is delivered.
    assert!(supervisor.held_for_switch());
    drop(hold);
    assert!(!supervisor.held_for_switch());
    until_agent_end(&mut ends).await;
    assert!(user_texts(&provider.requests()[0])[0].contains("arrived mid-switch"));
    // On its own, the failed switch leaves nothing held either.
    assert!(switch_that_fails(&supervisor, &missing).is_err());
    assert!(!supervisor.held_for_switch());
}

#[tokio::test]
async fn a_switch_that_panics_leaves_the_supervisor_unheld() {
    let (provider, supervisor, mut ends) = start(vec![Reply::text(&["noted"])]);
    let switching = supervisor.clone();
    let joined = tokio::spawn(async move {
        let _hold = switching.hold_for_switch();
        switching.notify(subagent_result("arrived before the panic"));
        panic!("the switch broke down");
    })
    .await;
    assert!(joined.unwrap_err().is_panic());
    assert!(!supervisor.held_for_switch());
    until_agent_end(&mut ends).await;
    assert!(user_texts(&provider.requests()[0])[0].contains("arrived before the panic"));
}

#[tokio::test]
async fn a_hold_dropped_after_stop_starts_nothing() {
    let (provider, supervisor, _ends) = start(vec![Reply::text(&["too late"])]);
    let quitting = supervisor.hold_for_switch();
    supervisor.notify(subagent_result("arrived while quitting"));
    supervisor.stop().await;
    drop(quitting);
    assert!(!supervisor.held_for_switch());
    assert!(!supervisor.agent().state().is_streaming);
    assert!(provider.requests().is_empty());
    assert_eq!(supervisor.pending_count(), 1, "kept, not delivered");
}
