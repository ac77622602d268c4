//! The replay's transport: where it is, how fast it plays, whether it is paused, and
//! when the next step is due. Pure apart from reading the clock it is handed.

use super::timeline::Timeline;
use std::time::Duration;
use tokio::time::Instant;

/// The speeds `+` and `-` step through.
pub const SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

/// Gaps between events longer than this are shortened to it, unless in real time.
pub const LONGEST_GAP: Duration = Duration::from_secs(2);

/// How a replay plays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayOptions {
    /// Speed factor (the nearest of [`SPEEDS`] is used).
    pub speed: f64,
    /// Keep gaps longer than [`LONGEST_GAP`] as they were.
    pub real_time: bool,
}

impl Default for PlayOptions {
    fn default() -> Self {
        Self {
            speed: 1.0,
            real_time: false,
        }
    }
}

/// The transport of one replay.
#[derive(Clone, Debug)]
pub struct Player {
    /// When each step is played at ×1, from the start (gaps shortened).
    play_at: Vec<Duration>,
    /// Steps applied so far.
    position: usize,
    speed: usize,
    paused: bool,
    /// A moment of the clock and the play time it corresponds to: play time runs on
    /// from it at the speed (restarted at each change, so nothing drifts).
    anchor: (Instant, Duration),
}

impl Player {
    /// A player over `timeline`'s steps, at its start, playing.
    pub fn new(timeline: &Timeline, options: PlayOptions, now: Instant) -> Self {
        let mut play_at = Vec::with_capacity(timeline.at.len());
        let mut previous = Duration::ZERO;
        let mut played = Duration::ZERO;
        for &at in &timeline.at {
            let gap = at.saturating_sub(previous);
            played += if options.real_time {
                gap
            } else {
                gap.min(LONGEST_GAP)
            };
            previous = at;
            play_at.push(played);
        }
        Self {
            play_at,
            position: 0,
            speed: nearest_speed(options.speed),
            paused: false,
            anchor: (now, Duration::ZERO),
        }
    }

    /// Steps applied so far.
    pub fn position(&self) -> usize {
        self.position
    }

    /// How many steps there are.
    pub fn len(&self) -> usize {
        self.play_at.len()
    }

    /// Whether there is nothing to play.
    pub fn is_empty(&self) -> bool {
        self.play_at.is_empty()
    }

    /// Whether every step was applied.
    pub fn at_end(&self) -> bool {
        self.position >= self.play_at.len()
    }

    /// The speed factor.
    pub fn speed(&self) -> f64 {
        SPEEDS[self.speed]
    }

    /// Whether it is paused.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The play time (at ×1) of the last step applied.
    pub fn played(&self) -> Duration {
        self.position
            .checked_sub(1)
            .map_or(Duration::ZERO, |i| self.play_at[i])
    }

    /// The play time (at ×1) of the whole replay.
    pub fn total(&self) -> Duration {
        self.play_at.last().copied().unwrap_or_default()
    }

    /// When the next step is due; `None` while paused or at the end.
    pub fn due_at(&self) -> Option<Instant> {
        if self.paused || self.at_end() {
            return None;
        }
        let (since, from) = self.anchor;
        let ahead = self.play_at[self.position].saturating_sub(from);
        Some(since + ahead.div_f64(self.speed()))
    }

    /// The next step was applied (at its due time, so play time runs on from it).
    pub fn advanced(&mut self) {
        if self.at_end() {
            return;
        }
        self.position += 1;
    }

    /// Jumped to `position` (steps applied); play resumes from there at `now`.
    pub fn moved_to(&mut self, position: usize, now: Instant) {
        self.position = position.min(self.len());
        self.anchor = (now, self.played());
    }

    /// Pauses or resumes at `now`.
    pub fn toggle_pause(&mut self, now: Instant) {
        self.paused = !self.paused;
        self.anchor = (now, self.played());
    }

    /// One speed faster (`up`) or slower, from `now` on.
    pub fn change_speed(&mut self, up: bool, now: Instant) {
        self.speed = if up {
            (self.speed + 1).min(SPEEDS.len() - 1)
        } else {
            self.speed.saturating_sub(1)
        };
        self.anchor = (now, self.played());
    }
}

/// The index of the speed nearest to `speed`.
fn nearest_speed(speed: f64) -> usize {
    let mut best = 2;
    for (i, s) in SPEEDS.iter().enumerate() {
        if (s.log2() - speed.log2()).abs() < (SPEEDS[best].log2() - speed.log2()).abs() {
            best = i;
        }
    }
    best
}

/// `×4`, `×0.25`.
pub fn speed_label(speed: f64) -> String {
    format!("×{speed}")
}

/// `mm:ss`, or `h:mm:ss` past an hour.
pub fn clock(time: Duration) -> String {
    let secs = time.as_secs();
    if secs >= 3600 {
        format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
    } else {
        format!("{:02}:{:02}", secs / 60, secs % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_snap_to_the_nearest_step() {
        assert_eq!(SPEEDS[nearest_speed(4.0)], 4.0);
        assert_eq!(SPEEDS[nearest_speed(3.0)], 4.0);
        assert_eq!(SPEEDS[nearest_speed(1000.0)], 64.0);
        assert_eq!(SPEEDS[nearest_speed(0.01)], 0.25);
    }

    #[test]
    fn clocks_read_as_minutes_and_seconds() {
        assert_eq!(clock(Duration::from_secs(41)), "00:41");
        assert_eq!(clock(Duration::from_secs(190)), "03:10");
        assert_eq!(clock(Duration::from_secs(3723)), "1:02:03");
    }
}
