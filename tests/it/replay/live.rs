//! A replay reproduces the live run it recorded: the same app state and the same frame,
//! at ×64; going back rebuilds the same screen; `--from` and the turn keys land on the
//! turns.

use super::fixture::{live_run, live_run_with_message, live_run_with_trust_question, state};
use crate::support::tui::{config, scene};
use claw_tui::replay::{PlayOptions, Replay, Timeline, play_due};
use claw_tui::tui::{Effect, Msg};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use tokio::time::Instant;

fn replay_of(path: &std::path::Path, speed: f64) -> Replay {
    let timeline = Arc::new(Timeline::load(path).unwrap());
    let options = PlayOptions {
        speed,
        real_time: false,
    };
    Replay::new(timeline, config(), options, (120, 40), Instant::now())
}

/// Plays to the end on the (paused) clock, as the runner does.
async fn play_out(replay: &mut Replay) {
    while let Some(due) = replay.player().due_at() {
        tokio::time::sleep_until(due).await;
        play_due(replay, Instant::now());
    }
}

/// The replay's own screen: the app with the timeline bar, its frame step taken and
/// code highlighted as the runner has them.
fn screen(replay: &mut Replay) -> Terminal<TestBackend> {
    for _ in 0..4 {
        replay.frame();
        let mut highlighted = false;
        for effect in replay.take_effects() {
            if let Effect::Highlight(r) = effect {
                let lines = scene::sets().highlight(&r.lang, &r.code, &r.theme);
                replay.deliver(Msg::Highlighted { key: r.key, lines });
                highlighted = true;
            }
        }
        if !highlighted {
            break;
        }
    }
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    terminal.draw(|frame| replay.draw(frame)).unwrap();
    terminal
}

fn frame_of(replay: &Replay) -> String {
    let mut app = replay.app().clone();
    let terminal = scene::draw(&mut app);
    format!("{}", terminal.backend())
}

#[tokio::test(start_paused = true)]
async fn a_replay_at_x64_ends_in_the_live_runs_state_and_frame() {
    let mut live = live_run().await;
    let mut replay = replay_of(&live.path, 64.0);
    replay.rebase(live.t0.into_std(), Instant::now());
    let started = Instant::now();
    play_out(&mut replay).await;
    assert!(replay.player().at_end());
    let recorded = replay.timeline().duration();
    let took = started.elapsed();
    // 5 s of thinking shortened to 2 s, the rest as it streamed, all over 64.
    assert!(
        took < recorded / 32,
        "×64 took {took:?} of {recorded:?} recorded"
    );
    assert_eq!(replay.timeline().turns.len(), 3, "three model calls");

    let mut replayed = replay.app().clone();
    assert_same_screen(&mut live.app, &mut replayed, "replay_final_app");
}

/// Asserts that the live app and its replay are in the same state and draw the same
/// frame, and snapshots that frame as `name`.
fn assert_same_screen(
    live: &mut claw_tui::tui::App,
    replayed: &mut claw_tui::tui::App,
    name: &str,
) {
    assert_eq!(state(live), state(replayed));
    let live_frame = scene::draw(live);
    let replay_frame = scene::draw(replayed);
    assert_eq!(
        live_frame.backend().buffer(),
        replay_frame.backend().buffer()
    );
    insta::assert_snapshot!(name, replay_frame.backend());
}

#[tokio::test(start_paused = true)]
async fn a_replay_shows_the_message_tools_card_as_the_live_run_did() {
    let mut live = live_run_with_message().await;
    let mut replay = replay_of(&live.path, 64.0);
    replay.rebase(live.t0.into_std(), Instant::now());
    play_out(&mut replay).await;
    assert!(replay.player().at_end());

    let mut replayed = replay.app().clone();
    let card = "Halfway through: **3** files left.";
    let has_card =
        |app: &claw_tui::tui::App| format!("{:?}", app.chat().transcript()).contains(card);
    assert!(has_card(&live.app), "the live run shows the card");
    assert!(has_card(&replayed), "the replay shows the card");
    assert_same_screen(&mut live.app, &mut replayed, "replay_message_card");
}

#[tokio::test(start_paused = true)]
async fn a_recorded_trust_question_is_told_in_the_replay_not_asked_again() {
    let mut live = live_run_with_trust_question().await;
    let question = "Trust what runs outside the sandbox?";
    let live_screen = scene::draw(&mut live.app).backend().to_string();
    assert!(live_screen.contains(question), "{live_screen}");
    let mut replay = replay_of(&live.path, 64.0);
    replay.rebase(live.t0.into_std(), Instant::now());
    play_out(&mut replay).await;
    assert!(replay.player().at_end());
    let replayed = screen(&mut replay).backend().to_string();
    assert!(!replayed.contains(question), "{replayed}");
    let transcript = format!("{:?}", replay.app().chat().transcript());
    assert!(
        transcript.contains("Asked whether to trust 0 server(s) and 1 file(s)"),
        "{transcript}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_timeline_bar_takes_the_composers_place() {
    let live = live_run().await;
    let mut replay = replay_of(&live.path, 4.0);
    replay.seek_turn(2, Instant::now());
    replay.handle(
        Event::Key(KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE)),
        Instant::now(),
    );
    let bar = replay.bar();
    assert!(
        bar.starts_with("REPLAY ×4 ⏸ turn 2/3 · 00:00 / 00:"),
        "{bar}"
    );
    insta::assert_snapshot!("replay_paused_in_turn_2", screen(&mut replay).backend());
}

#[tokio::test(start_paused = true)]
async fn going_back_rebuilds_the_same_screen() {
    let live = live_run().await;
    let mut replay = replay_of(&live.path, 1.0);
    let now = Instant::now();
    let middle = replay.player().len() / 2;
    replay.seek(middle, now);
    let at_middle = frame_of(&replay);
    let state_at_middle = state(replay.app());
    replay.seek(replay.player().len(), now);
    assert_ne!(frame_of(&replay), at_middle, "the end looks different");
    replay.seek(middle, now);
    assert_eq!(frame_of(&replay), at_middle);
    assert_eq!(state(replay.app()), state_at_middle);
    // Home, then forward again, step by step while paused.
    replay.handle(
        Event::Key(KeyEvent::new(KeyCode::Home, KeyModifiers::NONE)),
        now,
    );
    assert_eq!(replay.player().position(), 0);
    replay.handle(
        Event::Key(KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE)),
        now,
    );
    for _ in 0..middle {
        replay.handle(
            Event::Key(KeyEvent::new(KeyCode::Right, KeyModifiers::NONE)),
            now,
        );
    }
    assert_eq!(replay.player().position(), middle);
    assert_eq!(frame_of(&replay), at_middle);
}

#[tokio::test(start_paused = true)]
async fn the_turn_keys_move_between_turns() {
    let live = live_run().await;
    let mut replay = replay_of(&live.path, 1.0);
    let now = Instant::now();
    let press = |replay: &mut Replay, code| {
        replay.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)), now)
    };
    assert_eq!(replay.turn(), 0);
    press(&mut replay, KeyCode::Char(']'));
    assert_eq!(replay.turn(), 1);
    press(&mut replay, KeyCode::Char(']'));
    press(&mut replay, KeyCode::Char(']'));
    assert_eq!(replay.turn(), 3);
    assert!(replay.bar().contains("turn 3/3"), "{}", replay.bar());
    press(&mut replay, KeyCode::Char('['));
    assert_eq!(replay.turn(), 2);
    press(&mut replay, KeyCode::End);
    assert!(replay.player().at_end());
    assert!(replay.bar().contains('■'), "{}", replay.bar());
    // Speed steps stop at the ends.
    for _ in 0..10 {
        press(&mut replay, KeyCode::Char('+'));
    }
    assert_eq!(replay.player().speed(), 64.0);
    for _ in 0..10 {
        press(&mut replay, KeyCode::Char('-'));
    }
    assert_eq!(replay.player().speed(), 0.25);
    // Typing reaches nothing: the composer stays empty, no effect is asked for.
    replay.take_effects();
    for c in "hello".chars() {
        press(&mut replay, KeyCode::Char(c));
    }
    press(&mut replay, KeyCode::Enter);
    assert!(replay.app().composer().text().is_empty());
    assert!(
        replay
            .take_effects()
            .iter()
            .all(|e| !matches!(e, claw_tui::tui::Effect::Prompt(_))),
    );
    assert_eq!(
        press(&mut replay, KeyCode::Char('q')),
        claw_tui::replay::Control::Quit
    );
}

#[tokio::test(start_paused = true)]
async fn the_replay_prices_the_session_as_the_live_run_did() {
    let live = live_run().await;
    let timeline = Timeline::load(&live.path).unwrap();
    // `claw-tui replay` run without an API key resolves to the offline demo; the
    // session's model has no known prices, so live said `cost n/a`, not `$0.0000`.
    let (_home, settings) = crate::support::runtime::settings("");
    let config = claw_tui::replay::app_config(&settings, &timeline).unwrap();
    assert!(!config.offline);
    let options = PlayOptions {
        speed: 64.0,
        real_time: false,
    };
    let mut replay = Replay::new(
        Arc::new(timeline.clone()),
        config,
        options,
        (120, 40),
        Instant::now(),
    );
    play_out(&mut replay).await;
    assert_eq!(live.app.status().cost_text(), "cost n/a");
    assert_eq!(
        replay.app().status().cost_text(),
        live.app.status().cost_text()
    );
    assert!(
        replay.app().status_parts().iter().any(|p| p == "cost n/a"),
        "{:?}",
        replay.app().status_parts()
    );
    // A session of the offline demo was free live, and is in its replay.
    let mut demo = timeline;
    demo.model = claw_tui::config::DEMO_MODEL.to_owned();
    assert!(
        claw_tui::replay::app_config(&settings, &demo)
            .unwrap()
            .offline
    );
}
