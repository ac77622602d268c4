//! What is recorded: the event log beside the session, private, with every event the
//! agent sent in order; none with `record_events` off; a session from before the log
//! replays from its messages and says so.

use super::fixture::{is_delta, live_run};
use crate::support::scripted::{Reply, ScriptedProvider};
use crate::support::tui::config;
use claw_tui::agent::{Agent, AgentEvent};
use claw_tui::replay::log::{LogLine, LogText, Source};
use claw_tui::replay::{PlayOptions, Replay, Step, Timeline, play_due};
use claw_tui::session::{self, EventRecording, SessionWriter, events_path};
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use tokio::time::Instant;

#[tokio::test(start_paused = true)]
async fn every_agent_event_is_logged_in_order_with_rising_times() {
    let live = live_run().await;
    let log_path = events_path(&live.path);
    let mode = std::fs::metadata(&log_path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "private like the session file");
    let log = LogText::read(&log_path).unwrap().unwrap();
    assert_eq!(log.damaged, 0);
    let mut last = 0;
    let mut logged = Vec::new();
    for line in log.parsed() {
        match line {
            LogLine::Start(start) => assert_eq!(start.messages, 0),
            LogLine::Event { us, source, json } => {
                assert_eq!(source, Source::Agent);
                assert!(us >= last, "monotonic: {us} after {last}");
                last = us;
                logged.push(serde_json::from_str::<AgentEvent>(json).unwrap());
            }
        }
    }
    assert_eq!(logged, live.events, "the same events, in the same order");
    assert!(
        logged.iter().filter(|e| is_delta(e)).count() >= 7,
        "deltas too"
    );
    // The listing still sees one session, not its log.
    let sessions = session::list_sessions(live._data.path(), live._ws.path());
    assert_eq!(sessions.len(), 1, "{sessions:?}");
}

#[tokio::test(start_paused = true)]
async fn a_session_without_a_log_replays_from_its_messages() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let provider = ScriptedProvider::new(vec![
        Reply::text(&["first answer"]),
        Reply::text(&["second answer"]),
    ]);
    let agent = Agent::new(provider, "scripted");
    let writer = SessionWriter::create(data.path(), ws.path(), "scripted", "scripted").unwrap();
    let path = writer.path().to_path_buf();
    let off = EventRecording::agent_only(false);
    let (finish, task) = session::record_events_with(&agent, writer, &off);
    let mut rx = agent.subscribe(None);
    for prompt in ["one", "two"] {
        agent.prompt(prompt).unwrap();
        crate::support::until_agent_end(&mut rx).await;
    }
    let _ = agent.state();
    finish.send(()).unwrap();
    task.await.unwrap();
    assert!(!events_path(&path).exists(), "record_events off: no log");
    assert_eq!(session::list_sessions(data.path(), ws.path()).len(), 1);

    let timeline = Arc::new(Timeline::load(&path).unwrap());
    assert!(timeline.from_messages);
    assert_eq!(
        timeline.steps,
        (1..=4).map(Step::History).collect::<Vec<_>>()
    );
    assert_eq!(timeline.turns.len(), 2, "one turn per answer");
    let now = Instant::now();
    let mut replay = Replay::new(timeline, config(), PlayOptions::default(), (120, 40), now);
    assert!(
        replay.bar().ends_with("· from messages"),
        "{}",
        replay.bar()
    );
    let text = |replay: &Replay| format!("{:?}", replay.app().chat().transcript());
    assert!(text(&replay).contains("recorded before claw-tui logged events"));
    assert!(!text(&replay).contains("first answer"));
    replay.seek(2, now);
    assert!(text(&replay).contains("first answer"));
    assert!(!text(&replay).contains("second answer"));
    while let Some(due) = replay.player().due_at() {
        tokio::time::sleep_until(due).await;
        play_due(&mut replay, Instant::now());
    }
    assert!(text(&replay).contains("second answer"));
}

#[tokio::test(start_paused = true)]
async fn a_resumed_session_logs_a_new_segment_that_starts_from_its_history() {
    let live = live_run().await;
    let loaded = session::load(&live.path).unwrap();
    let count = loaded.messages.len();
    let (writer, data) = SessionWriter::resume_file(&live.path).unwrap();
    let agent = Agent::new(
        ScriptedProvider::new(vec![Reply::text(&["third answer"])]),
        "scripted",
    );
    agent.replace_messages(data.messages).unwrap();
    let (finish, task) = session::record_events(&agent, writer);
    let mut rx = agent.subscribe(None);
    agent.prompt("again").unwrap();
    crate::support::until_agent_end(&mut rx).await;
    let _ = agent.state();
    finish.send(()).unwrap();
    task.await.unwrap();

    let log = LogText::read(&events_path(&live.path)).unwrap().unwrap();
    let starts: Vec<usize> = log
        .parsed()
        .filter_map(|l| match l {
            LogLine::Start(s) => Some(s.messages),
            LogLine::Event { .. } => None,
        })
        .collect();
    assert_eq!(starts, [0, count]);
    let timeline = Timeline::load(&live.path).unwrap();
    assert_eq!(timeline.initial, 0, "the first segment starts the session");
    assert_eq!(timeline.turns.len(), 4);
    assert!(timeline.at.windows(2).all(|w| w[0] <= w[1]));
}
