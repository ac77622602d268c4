//! `claw-tui replay` and the event log it plays: recording, the player's pace and seeks,
//! a replay against the live run it recorded, the JSON lines, sessions from before the
//! log, and the real binary.

mod cron_log;
mod e2e;
mod fixture;
mod inspect;
mod json;
mod live;
mod pace;
mod recording;
mod turns;
