//! A replay on screen: the client's own `App`, driven by recorded steps through the same
//! `update` as live events, a [`Player`] for the transport, and the timeline bar drawn
//! where the composer is. Going back builds the app again from the start: a position
//! always shows the same screen.

use super::player::{PlayOptions, Player, clock, speed_label};
use super::timeline::{Step, Timeline};
use crate::agent::NoticeLevel;
use crate::keymap::Action;
use crate::theme::{Theme, Token};
use crate::tui::sessions::{self, LoadedSession};
use crate::tui::{App, AppConfig, Effect, Msg, view};
use crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::sync::Arc;
use tokio::time::Instant;

/// What a key did to the replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Nothing the runner must do (the screen may have changed).
    Continue,
    /// The user quits.
    Quit,
}

/// One replay: the app as it is at the player's position.
#[derive(Clone)]
pub struct Replay {
    timeline: Arc<Timeline>,
    player: Player,
    app: App,
    config: AppConfig,
    theme: Theme,
    size: (u16, u16),
    /// The app's clock at the start of the recording: each step is applied at this
    /// plus its recorded time, so the app's timers read as they did live.
    base: std::time::Instant,
    /// Effects of the steps applied since they were last taken (highlighting).
    effects: Vec<Effect>,
    /// The inspector paused a playing replay: closing it plays on.
    resume_after_inspector: bool,
}

impl Replay {
    /// A replay of `timeline` on a `size` screen, at its start.
    pub fn new(
        timeline: Arc<Timeline>,
        config: AppConfig,
        options: PlayOptions,
        size: (u16, u16),
        now: Instant,
    ) -> Self {
        let player = Player::new(&timeline, options, now);
        let base = now.into_std();
        let theme = config.theme.clone();
        let app = fresh_app(&timeline, &config, size, base);
        Self {
            timeline,
            player,
            app,
            config,
            theme,
            size,
            base,
            effects: Vec::new(),
            resume_after_inspector: false,
        }
    }

    /// Starts over with the app's clock at the recording's start set to `base` (so
    /// its timers can be compared with a live app's that started at `base`).
    pub fn rebase(&mut self, base: std::time::Instant, now: Instant) {
        self.base = base;
        self.app = fresh_app(&self.timeline, &self.config, self.size, base);
        self.effects.clear();
        self.player.moved_to(0, now);
    }

    /// The app as the replay has it.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The transport.
    pub fn player(&self) -> &Player {
        &self.player
    }

    /// The recording.
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// What the app asked for since the last call (the runner carries out only what
    /// shows the recording: highlighting; nothing reaches a model, a tool or a file).
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    /// Applies the next step (due now, or asked for while paused).
    pub fn step(&mut self) {
        let index = self.player.position();
        if index >= self.player.len() {
            return;
        }
        let effects = apply(&mut self.app, &self.timeline, index, self.base);
        self.effects.extend(effects);
        self.player.advanced();
    }

    /// Goes to `position` (steps applied): forward by applying the steps between,
    /// back by building the app again from the start.
    pub fn seek(&mut self, position: usize, now: Instant) {
        let position = position.min(self.player.len());
        if position < self.player.position() {
            self.app = fresh_app(&self.timeline, &self.config, self.size, self.base);
            self.effects.clear();
            self.player.moved_to(0, now);
        }
        while self.player.position() < position {
            self.step();
        }
        self.player.moved_to(position, now);
    }

    /// Goes to the beginning of the session's turn `turn` (from 1; one of the history
    /// the recording starts from: its start; past the last: the end).
    pub fn seek_turn(&mut self, turn: usize, now: Instant) {
        let position = match turn.checked_sub(self.timeline.before + 1) {
            None => 0,
            Some(i) => self
                .timeline
                .turns
                .get(i)
                .map_or(self.player.len(), |&start| start + 1),
        };
        self.seek(position, now);
    }

    /// The session's turn (from 1) the last applied step belongs to, numbered as the
    /// status bar and the request log number it.
    pub fn turn(&self) -> usize {
        self.player
            .position()
            .checked_sub(1)
            .map_or(self.timeline.before, |i| self.timeline.turn_of(i))
    }

    /// Handles terminal input: the replay's keys, and the app's own for looking around
    /// (scrolling, focus, selection); nothing typed reaches the composer.
    pub fn handle(&mut self, event: Event, now: Instant) -> Control {
        let Event::Key(key) = event else {
            if let Event::Resize(w, h) = event {
                self.size = (w, h);
            }
            self.forward(Msg::Term(event));
            return Control::Continue;
        };
        if key.kind == KeyEventKind::Release {
            return Control::Continue;
        }
        if key.code == KeyCode::Char('c') && key.modifiers == KeyModifiers::CONTROL {
            return Control::Quit;
        }
        if self.app.inspector().is_some() {
            // The inspector's own keys (Esc and `q` close it); the replay waits.
            self.forward(Msg::Term(Event::Key(key)));
            if self.app.inspector().is_none() && std::mem::take(&mut self.resume_after_inspector) {
                self.player.toggle_pause(now);
            }
            return Control::Continue;
        }
        if self.config.keymap.action(&key) == Some(Action::Inspect) {
            self.open_inspector(now);
            return Control::Continue;
        }
        match (key.code, key.modifiers) {
            (KeyCode::Char('q'), _) | (KeyCode::Char('c'), KeyModifiers::CONTROL) => {
                return Control::Quit;
            }
            (KeyCode::Char(' '), _) => self.player.toggle_pause(now),
            (KeyCode::Char('+' | '='), _) => self.player.change_speed(true, now),
            (KeyCode::Char('-'), _) => self.player.change_speed(false, now),
            (KeyCode::Right, _) if self.player.paused() => {
                self.step();
                self.player.moved_to(self.player.position(), now);
            }
            (KeyCode::Char(']'), _) => self.seek_turn(self.next_turn(), now),
            (KeyCode::Char('['), _) => self.seek_turn(self.turn().saturating_sub(1), now),
            (KeyCode::Home, _) => self.seek(0, now),
            (KeyCode::End, _) => self.seek(self.player.len(), now),
            (KeyCode::Char(_), _) => {}
            _ => self.forward(Msg::Term(Event::Key(key))),
        }
        Control::Continue
    }

    /// The turn `]` goes to: the first that begins after what is shown.
    fn next_turn(&self) -> usize {
        let position = self.player.position();
        let ahead = self.timeline.turns.partition_point(|&s| s < position);
        self.timeline.before + ahead + 1
    }

    /// Opens the inspector at the request in flight at this point, pausing the replay
    /// until it closes.
    pub fn open_inspector(&mut self, now: Instant) {
        let open = super::in_flight::request_at(&self.timeline, self.player.position());
        drop(
            self.app
                .show_inspector(Arc::clone(&self.timeline.requests), open),
        );
        if !self.player.paused() && !self.player.at_end() {
            self.player.toggle_pause(now);
            self.resume_after_inspector = true;
        }
    }

    /// Hands the app a message from the runner (a highlighted code block).
    pub fn deliver(&mut self, msg: Msg) {
        self.forward(msg);
    }

    fn forward(&mut self, msg: Msg) {
        let effects = self.app.update_at(msg, self.app.now());
        self.effects.extend(effects);
    }

    /// The frame step before drawing (the app lays out what changed).
    pub fn frame(&mut self) {
        let effects = self.app.update_at(Msg::Frame, self.app.now());
        self.effects.extend(effects);
    }

    /// The timeline bar's text: `REPLAY ×4 ▶ turn 3/12 · 00:41 / 03:10`.
    pub fn bar(&self) -> String {
        let player = &self.player;
        let state = if player.at_end() {
            "■"
        } else if player.paused() {
            "⏸"
        } else {
            "▶"
        };
        let mut text = format!(
            "REPLAY {} {state} turn {}/{} · {} / {}",
            speed_label(player.speed()),
            self.turn(),
            self.timeline.turn_count(),
            clock(player.played()),
            clock(player.total()),
        );
        if self.timeline.from_messages {
            text.push_str(" · from messages");
        }
        text
    }

    /// Draws the app with the timeline bar in place of the composer.
    pub fn draw(&self, frame: &mut Frame<'_>) {
        view(&self.app, frame);
        let area = frame.area();
        let composer = self.app.areas_in(area).composer;
        draw_bar(self, composer, frame.buffer_mut());
    }
}

fn draw_bar(replay: &Replay, area: Rect, buf: &mut Buffer) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let theme = &replay.theme;
    buf.set_style(area, theme.fg(Token::Text));
    for y in area.y..area.y + area.height {
        for x in area.x..area.x + area.width {
            if let Some(cell) = buf.cell_mut((x, y)) {
                cell.set_symbol(" ");
            }
        }
    }
    let width = usize::from(area.width);
    let mut y = area.y;
    if area.height > 1 {
        buf.set_stringn(area.x, y, "─".repeat(width), width, theme.fg(Token::Border));
        y += 1;
    }
    let bar = format!(" {}", replay.bar());
    let used = bar.chars().count();
    buf.set_stringn(area.x, y, &bar, width, theme.fg(Token::Accent));
    let inspect = replay.config.keymap.label(Action::Inspect);
    let keys = format!(
        "   Space pause · +/- speed · → step · [ ] turns · Home/End · {inspect} inspect · q quit"
    );
    if used + keys.chars().count() <= width
        && let Ok(x) = u16::try_from(used)
    {
        buf.set_stringn(area.x + x, y, keys, width - used, theme.fg(Token::Dim));
    }
}

/// The app before any step: the configuration, the screen size, the history the
/// session had before its events were recorded, and what the user should know.
fn fresh_app(
    timeline: &Timeline,
    config: &AppConfig,
    (width, height): (u16, u16),
    base: std::time::Instant,
) -> App {
    let mut app = App::new(config.clone());
    app.set_clock(base, timeline.wall_start);
    app.update_at(Msg::Term(Event::Resize(width, height)), base);
    app.update_at(
        Msg::Sessions(sessions::Msg::Loaded(Box::new(loaded(
            timeline,
            timeline.initial,
        )))),
        base,
    );
    for note in &timeline.notes {
        app.update_at(Msg::Notice(NoticeLevel::Info, note.clone()), base);
    }
    app
}

/// The session as it was after its first `count` messages.
fn loaded(timeline: &Timeline, count: usize) -> LoadedSession {
    let messages = timeline.messages[..count.min(timeline.messages.len())].to_vec();
    LoadedSession {
        id: Some(timeline.id.clone()),
        compactions: timeline
            .compactions
            .iter()
            .filter(|c| c.history_len <= messages.len())
            .cloned()
            .collect(),
        resumed: !messages.is_empty(),
        quiet: true,
        path: Some(timeline.path.clone()),
        messages: messages.into(),
        ..LoadedSession::default()
    }
}

/// Applies step `index` to the app at the time it happened.
fn apply(
    app: &mut App,
    timeline: &Timeline,
    index: usize,
    base: std::time::Instant,
) -> Vec<Effect> {
    let at = base + timeline.at[index];
    let msg = match &timeline.steps[index] {
        Step::Agent(event) => Msg::Agent(event.clone()),
        // A question the recording's user answered then: told, not asked again.
        Step::Runtime(crate::runtime::RuntimeEvent::TrustRequest { request }) => Msg::Notice(
            NoticeLevel::Info,
            format!(
                "Asked whether to trust {} server(s) and {} file(s) that run outside the \
                 sandbox.",
                request.servers.len(),
                request.files.len()
            ),
        ),
        Step::Runtime(event) => Msg::from(event.clone()),
        Step::CronJobs(jobs) => crate::tui::adapt::cron_rows(jobs),
        Step::CronChanges(changes) => Msg::CronChanges {
            changed: changes
                .changed
                .iter()
                .map(crate::tui::CronRow::from)
                .collect(),
            removed: changes.removed.clone(),
        },
        Step::History(count) => {
            Msg::Sessions(sessions::Msg::Loaded(Box::new(loaded(timeline, *count))))
        }
    };
    app.update_at(msg, at)
}
