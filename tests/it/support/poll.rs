//! Waiting for state that sends no event: the process table, or a file another process
//! writes. The condition is looked at every 20 ms until it holds; the deadline is only a
//! failure bound. Everything that has an event (a channel, a pty screen, an agent event)
//! waits on that event instead.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::{Duration, Instant};

/// How often the condition is looked at.
const EVERY: Duration = Duration::from_millis(20);

/// Blocks until `found` returns a value; panics with `what` after `within`.
pub fn until<T>(what: &str, within: Duration, mut found: impl FnMut() -> Option<T>) -> T {
    let give_up = Instant::now() + within;
    loop {
        if let Some(value) = found() {
            return value;
        }
        assert!(Instant::now() < give_up, "{what}");
        std::thread::sleep(EVERY);
    }
}

/// [`until`] for async tests: yields to the runtime between looks.
pub async fn until_async<T>(
    what: &str,
    within: Duration,
    mut found: impl FnMut() -> Option<T>,
) -> T {
    let give_up = Instant::now() + within;
    loop {
        if let Some(value) = found() {
            return value;
        }
        assert!(Instant::now() < give_up, "{what}");
        tokio::time::sleep(EVERY).await;
    }
}
