//! The replay keeps the recording's pace, divided by the speed, with long pauses
//! shortened to 2 s (kept with `--real-time`); checked on tokio's paused clock.

use super::fixture::{PACE, THINKING, live_run};
use crate::support::tui::config;
use claw_tui::replay::{PlayOptions, Replay, Timeline, play_due};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// When each step was applied, from the start of the replay.
async fn step_times(timeline: &Arc<Timeline>, options: PlayOptions) -> Vec<Duration> {
    let start = Instant::now();
    let mut replay = Replay::new(timeline.clone(), config(), options, (120, 40), start);
    let mut times = Vec::new();
    while let Some(due) = replay.player().due_at() {
        tokio::time::sleep_until(due).await;
        let before = replay.player().position();
        play_due(&mut replay, Instant::now());
        for _ in before..replay.player().position() {
            times.push(start.elapsed());
        }
    }
    times
}

/// The recording's times with gaps over `longest` cut to it, divided by `speed`.
fn expected(timeline: &Timeline, longest: Option<Duration>, speed: f64) -> Vec<Duration> {
    let mut previous = Duration::ZERO;
    let mut played = Duration::ZERO;
    timeline
        .at
        .iter()
        .map(|&at| {
            let gap = at - previous;
            previous = at;
            played += longest.map_or(gap, |l| gap.min(l));
            played.div_f64(speed)
        })
        .collect()
}

/// Each step came at its time, give or take the timer's millisecond.
fn assert_paced(times: &[Duration], expected: &[Duration]) {
    assert_eq!(times.len(), expected.len());
    for (i, (got, want)) in times.iter().zip(expected).enumerate() {
        let late = got.checked_sub(*want);
        assert!(
            late.is_some_and(|l| l <= Duration::from_millis(1)),
            "step {i}: at {got:?}, due at {want:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn steps_keep_their_spacing_at_x1_and_x4() {
    let live = live_run().await;
    let timeline = Arc::new(Timeline::load(&live.path).unwrap());
    // The recording has the model's pace between deltas and the user's long pause.
    let gaps: Vec<Duration> = timeline.at.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.contains(&PACE), "{gaps:?}");
    assert!(gaps.iter().any(|g| *g >= THINKING), "{gaps:?}");

    let longest = Some(Duration::from_secs(2));
    for speed in [1.0, 4.0] {
        let options = PlayOptions {
            speed,
            real_time: false,
        };
        let times = step_times(&timeline, options).await;
        assert_paced(&times, &expected(&timeline, longest, speed));
    }
    let real = PlayOptions {
        speed: 4.0,
        real_time: true,
    };
    let times = step_times(&timeline, real).await;
    assert_paced(&times, &expected(&timeline, None, 4.0));
    assert!(*times.last().unwrap() >= THINKING / 4);
}

#[tokio::test(start_paused = true)]
async fn a_pause_stops_the_clock_and_a_new_speed_applies_from_then_on() {
    let live = live_run().await;
    let timeline = Arc::new(Timeline::load(&live.path).unwrap());
    let start = Instant::now();
    let options = PlayOptions::default();
    let mut replay = Replay::new(timeline.clone(), config(), options, (120, 40), start);
    let key = |c| Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    // Play the first few steps, then pause for a minute: nothing moves.
    let mut done = 0;
    while done < 5 {
        tokio::time::sleep_until(replay.player().due_at().unwrap()).await;
        play_due(&mut replay, Instant::now());
        done = replay.player().position();
    }
    replay.handle(key(' '), Instant::now());
    assert_eq!(replay.player().due_at(), None);
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(replay.player().position(), done);
    // Resume at ×4: the next gap takes a quarter of its time.
    replay.handle(key('+'), Instant::now());
    replay.handle(key('+'), Instant::now());
    replay.handle(key(' '), Instant::now());
    let resumed = Instant::now();
    let due = replay.player().due_at().unwrap();
    let gap = expected(&timeline, Some(Duration::from_secs(2)), 1.0);
    assert_eq!(due - resumed, (gap[done] - gap[done - 1]).div_f64(4.0));
}
