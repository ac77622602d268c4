//! The pump's two audiences: a joined client gets every line (the agent's events and
//! the hub's own); a watcher (the hosting terminal, which has the events first hand)
//! gets the hub's own lines only, so an unattached session writes no event as JSON.

use crate::support::{Reply, agent_with, run};
use claw_tui::attach::PumpHandle;
use claw_tui::attach::pump::Line;
use tokio::sync::broadcast::Receiver;
use tokio::sync::mpsc;

fn drain(lines: &mut Receiver<Line>) -> Vec<String> {
    std::iter::from_fn(|| lines.try_recv().ok().map(|l| l.to_string())).collect()
}

#[tokio::test]
async fn a_watcher_gets_the_hubs_own_lines_and_a_client_gets_the_events_too() {
    let (agent, _) = agent_with(
        vec![Reply::text(&["Hello."]), Reply::text(&["Hello ", "there."])],
        Vec::new(),
    );
    let (_runtime, runtime_events) = mpsc::unbounded_channel();
    let pump = PumpHandle::start(&agent, runtime_events, None);
    let mut watcher = pump.watch().await.expect("the pump runs");

    // Only a watcher: the run's events are not made into lines for it.
    run(&agent, "hi").await;
    pump.say(Line::from(
        r#"{"type":"client_attached","client":{"id":2}}"#,
    ));
    let joined = pump.join().await.expect("the pump runs");
    let mut client = joined.lines;
    run(&agent, "again").await;
    pump.say(Line::from(
        r#"{"type":"client_detached","client":{"id":2}}"#,
    ));
    // One more join: the pump has handled every request before it answers.
    let _ = pump.join().await;

    let watched = drain(&mut watcher);
    assert_eq!(
        watched,
        [
            r#"{"type":"client_attached","client":{"id":2}}"#,
            r#"{"type":"client_detached","client":{"id":2}}"#
        ],
        "the watcher sees the hub's lines only"
    );
    let seen = drain(&mut client);
    assert!(
        seen.iter().any(|l| l.contains(r#""type":"agent_start""#))
            && seen.iter().any(|l| l.contains("there."))
            && seen.iter().any(|l| l.contains("client_detached")),
        "the joined client sees the second run and the hub's line: {seen:#?}"
    );
    assert!(
        !seen.iter().any(|l| l.contains("client_attached")),
        "nothing from before it joined: {seen:#?}"
    );
}
