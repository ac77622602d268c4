//! The inspector from a replay: F3 (or the key the configuration gives it) opens it at
//! the request that was in flight at the replay's position, the replay waits while it
//! is open and plays on when Esc closes it.

use super::fixture::live_run;
use crate::support::tui::{config, scene};
use claw_tui::agent::Usage;
use claw_tui::inspect::{requests_path, write_calls};
use claw_tui::llm::{FinishedCall, SentCall};
use claw_tui::replay::{PlayOptions, Replay, Step, Timeline, play_due};
use claw_tui::tui::{AppConfig, Effect, InspectTab, Msg};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use std::sync::Arc;
use tokio::time::Instant;

fn call(id: u64, agent: &str, turn: u32, time_ms: u64, text: &str) -> (SentCall, FinishedCall) {
    let body = json!({
        "model": "scripted",
        "stream": true,
        "system": [{"type": "text", "text": "You are claw-tui."}],
        "messages": [{"role": "user", "content": text}],
    });
    let sent = SentCall {
        id,
        agent: agent.into(),
        turn,
        format: claw_tui::llm::WireFormat::Anthropic,
        provider: "Anthropic".into(),
        model: "scripted".into(),
        url: "https://api.anthropic.com/v1/messages".into(),
        headers: vec![("x-api-key".into(), "[redacted]".into())],
        body: body.to_string().into(),
        time_ms,
    };
    let finished = FinishedCall {
        id,
        status: Some(200),
        usage: Some(Usage {
            input: 100 + id * 10,
            output: 20,
            ..Usage::default()
        }),
        stop_reason: "stop".into(),
        ttft_ms: Some(300),
        duration_ms: 900,
        ..FinishedCall::default()
    };
    (sent, finished)
}

/// The step at which the recording's first tool call began.
fn first_tool_start(timeline: &Timeline) -> usize {
    timeline
        .steps
        .iter()
        .position(|s| {
            matches!(
                s,
                Step::Agent(claw_tui::agent::AgentEvent::ToolExecutionStart { .. })
            )
        })
        .unwrap()
}

/// The live run's session with a request log beside it, each request dated when the
/// recording's step that sent it happened: the main agent's at each turn's start, a
/// subagent's when turn 1's tool call began.
async fn recorded(config: AppConfig) -> (super::fixture::LiveRun, Replay) {
    let live = live_run().await;
    let timeline = Timeline::load(&live.path).unwrap();
    let tool_start = first_tool_start(&timeline);
    let turns = &timeline.turns;
    write_calls(
        &requests_path(&live.path),
        [
            call(
                0,
                "main",
                1,
                timeline.wall_ms(turns[0]),
                "what is the weather?",
            ),
            call(
                1,
                "subagent-1",
                1,
                timeline.wall_ms(tool_start),
                "look it up",
            ),
            call(
                2,
                "main",
                2,
                timeline.wall_ms(turns[1]),
                "the lookup failed",
            ),
            call(3, "main", 3, timeline.wall_ms(turns[2]), "thanks"),
        ],
    );
    let timeline = Arc::new(Timeline::load(&live.path).unwrap());
    assert_eq!(timeline.requests.len(), 4);
    let options = PlayOptions {
        speed: 1.0,
        real_time: false,
    };
    let replay = Replay::new(timeline, config, options, (120, 40), Instant::now());
    (live, replay)
}

fn press(replay: &mut Replay, code: KeyCode) {
    replay.handle(
        Event::Key(KeyEvent::new(code, KeyModifiers::NONE)),
        Instant::now(),
    );
}

fn screen(replay: &mut Replay) -> Terminal<TestBackend> {
    replay.frame();
    for effect in replay.take_effects() {
        if let Effect::Highlight(r) = effect {
            let lines = scene::sets().highlight(&r.lang, &r.code, &r.theme);
            replay.deliver(Msg::Highlighted { key: r.key, lines });
        }
    }
    replay.frame();
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    terminal.draw(|frame| replay.draw(frame)).unwrap();
    terminal
}

#[tokio::test(start_paused = true)]
async fn f3_in_a_replay_opens_the_request_in_flight_and_the_replay_waits() {
    let (_live, mut replay) = recorded(config()).await;
    // Playing, in the middle of turn 2 (its answer streaming).
    let turn_2 = replay.timeline().turns[1];
    replay.seek(turn_2 + 3, Instant::now());
    assert_eq!(replay.turn(), 2);
    assert!(!replay.player().paused());
    press(&mut replay, KeyCode::F(3));
    let inspector = replay.app().inspector().expect("the inspector is open");
    assert_eq!(inspector.opened(), Some(2), "turn 2's request");
    assert_eq!(inspector.tab(), Some(InspectTab::Breakdown));
    assert!(replay.player().paused(), "the replay waits");
    insta::assert_snapshot!("replay_inspector_turn_2", screen(&mut replay).backend());

    // Nothing plays while it is open, whatever the time.
    let position = replay.player().position();
    tokio::time::advance(std::time::Duration::from_secs(30)).await;
    play_due(&mut replay, Instant::now());
    assert_eq!(replay.player().position(), position);
    // Its keys are its own: `2` is the Body view, not a replay key.
    press(&mut replay, KeyCode::Char('2'));
    let inspector = replay.app().inspector().unwrap();
    assert_eq!(inspector.tab(), Some(InspectTab::Body));

    // Esc back to the list, Esc again closes it: the replay plays on.
    press(&mut replay, KeyCode::Esc);
    assert_eq!(replay.app().inspector().unwrap().opened(), None);
    press(&mut replay, KeyCode::Esc);
    assert!(replay.app().inspector().is_none());
    assert!(!replay.player().paused(), "playing again");
    let due = replay.player().due_at().expect("a next step");
    tokio::time::sleep_until(due).await;
    play_due(&mut replay, Instant::now());
    assert!(replay.player().position() > position, "it went on");
    assert!(
        !screen(&mut replay)
            .backend()
            .to_string()
            .contains("Requests (")
    );
}

#[tokio::test(start_paused = true)]
async fn the_request_in_flight_follows_the_position() {
    let (_live, mut replay) = recorded(config()).await;
    let now = Instant::now();
    // Paused before it opens: still paused after.
    press(&mut replay, KeyCode::Char(' '));
    // At the start nothing was sent yet: the list.
    press(&mut replay, KeyCode::F(3));
    let inspector = replay.app().inspector().unwrap();
    assert_eq!(inspector.opened(), None);
    press(&mut replay, KeyCode::Esc);
    assert!(replay.app().inspector().is_none());
    assert!(replay.player().paused(), "it was paused before");

    // Turn 1 before its tool call: the main agent's request; after: the subagent's.
    replay.seek_turn(1, now);
    press(&mut replay, KeyCode::F(3));
    assert_eq!(replay.app().inspector().unwrap().opened(), Some(0));
    press(&mut replay, KeyCode::Esc);
    press(&mut replay, KeyCode::Esc);
    let tool_start = first_tool_start(replay.timeline());
    replay.seek(tool_start + 1, now);
    assert_eq!(replay.turn(), 1);
    press(&mut replay, KeyCode::F(3));
    assert_eq!(replay.app().inspector().unwrap().opened(), Some(1));
    press(&mut replay, KeyCode::Esc);
    press(&mut replay, KeyCode::Esc);

    // At the end: the last request; `q` closes the inspector, not the replay.
    press(&mut replay, KeyCode::End);
    press(&mut replay, KeyCode::F(3));
    assert_eq!(replay.app().inspector().unwrap().opened(), Some(3));
    press(&mut replay, KeyCode::Char('q'));
    press(&mut replay, KeyCode::Char('q'));
    assert!(replay.app().inspector().is_none());
    assert_eq!(
        replay.handle(
            Event::Key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE)),
            now
        ),
        claw_tui::replay::Control::Quit
    );
}

#[tokio::test(start_paused = true)]
async fn the_configured_inspector_key_opens_it_in_a_replay() {
    let mut config = config();
    let table: toml::Table = toml::from_str(r#"inspect = "f9""#).unwrap();
    config.keymap = claw_tui::keymap::KeyMap::from_table(&table).unwrap();
    let (_live, mut replay) = recorded(config).await;
    replay.seek_turn(3, Instant::now());
    press(&mut replay, KeyCode::F(3));
    assert!(replay.app().inspector().is_none(), "F3 is not the key now");
    press(&mut replay, KeyCode::F(9));
    assert_eq!(replay.app().inspector().unwrap().opened(), Some(3));
    assert!(
        screen(&mut replay)
            .backend()
            .to_string()
            .contains("Request 4 · turn 3")
    );
}
