//! The replay on the terminal: one `select!` loop over input, the next step's due time,
//! the highlighter's answers and the frame scheduler (at most 30 frames a second, none
//! while nothing changed). Everything due is applied before a frame is drawn, so a
//! fast replay draws as often as a live stream, not once per event.

use super::screen::{Control, Replay};
use crate::signals::StopSignals;
use crate::tui::highlight::Highlighter;
use crate::tui::host::input::TermInput;
use crate::tui::terminal::Term;
use crate::tui::{Effect, Msg};
use crossterm::event::Event;
use crossterm::execute;
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Shortest time between two frames.
const FRAME: Duration = Duration::from_micros(33_333);

/// Plays `replay` on the terminal until the user quits (`None`) or one of the `stop`
/// signals arrives (`Some` exit code).
pub async fn serve(
    replay: &mut Replay,
    term: &mut Term,
    stop: &mut StopSignals,
) -> std::io::Result<Option<i32>> {
    let mut input = TermInput::open()?;
    let (tx, mut highlighted) = mpsc::unbounded_channel::<Msg>();
    let mut highlighter = Highlighter::default();
    let mut dirty = true;
    let mut last_draw = Instant::now();
    loop {
        if dirty && Instant::now() >= last_draw + FRAME {
            draw(replay, term, &mut highlighter, &tx)?;
            last_draw = Instant::now();
            dirty = false;
        }
        let draw_at = dirty.then_some(last_draw + FRAME);
        tokio::select! {
            biased;
            event = input.next() => match event {
                Some(Ok(event)) => {
                    if let Event::Resize(..) = event {
                        term.autoresize()?;
                    }
                    if replay.handle(event, Instant::now()) == Control::Quit {
                        return Ok(None);
                    }
                    dirty = true;
                }
                Some(Err(e)) => return Err(e),
                None => return Ok(None),
            },
            code = stop.recv() => return Ok(Some(code)),
            Some(msg) = highlighted.recv() => {
                replay.deliver(msg);
                dirty = true;
            }
            () = sleep_until(replay.player().due_at()) => {
                play_due(replay, Instant::now());
                dirty = true;
            }
            () = sleep_until(draw_at) => {}
        }
    }
}

/// Applies every step due by `now`.
pub fn play_due(replay: &mut Replay, now: Instant) {
    while replay.player().due_at().is_some_and(|due| due <= now) {
        replay.step();
    }
}

fn draw(
    replay: &mut Replay,
    term: &mut Term,
    highlighter: &mut Highlighter,
    tx: &mpsc::UnboundedSender<Msg>,
) -> std::io::Result<()> {
    replay.frame();
    for effect in replay.take_effects() {
        // Only what shows the recording is carried out; a replay never prompts a
        // model, runs a tool or writes the session.
        if let Effect::Highlight(request) = effect {
            highlighter.request(request, tx);
        }
    }
    execute!(term.backend_mut(), BeginSynchronizedUpdate)?;
    term.draw(|frame| replay.draw(frame))?;
    execute!(term.backend_mut(), EndSynchronizedUpdate)?;
    Ok(())
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
