//! Where each running call's progress notifications go, including those that arrive
//! before the call has registered.

use super::connection::{Progress, ProgressFn};
use std::collections::HashMap;

/// Progress notifications kept for calls not registered yet (see [`Routes`]).
const EARLY_PROGRESS_KEPT: usize = 256;

/// One call's progress route and the progress it last passed on.
pub(super) struct Route {
    deliver: ProgressFn,
    last: f64,
}

impl Route {
    /// Passes `progress` on unless it does not go beyond what was passed on already (the
    /// protocol says progress only grows; a server repeating itself is not news).
    pub(super) fn offer(&mut self, progress: Progress) {
        if progress.progress > self.last {
            self.last = progress.progress;
            (self.deliver)(progress);
        }
    }
}

/// Where each call's progress goes. rmcp picks a request's progress token while sending
/// it, so the server's first notification can come in before the call has registered
/// its route: such notifications wait in `early` and are handed over on registration.
#[derive(Default)]
pub(super) struct Routes {
    pub(super) calls: HashMap<String, Route>,
    pub(super) early: std::collections::VecDeque<(String, Progress)>,
}

impl Routes {
    /// Hands `progress` to its call, or keeps it until the call registers.
    pub(super) fn deliver(&mut self, token: String, progress: Progress) {
        match self.calls.get_mut(&token) {
            Some(route) => route.offer(progress),
            None => {
                if self.early.len() == EARLY_PROGRESS_KEPT {
                    self.early.pop_front();
                }
                self.early.push_back((token, progress));
            }
        }
    }

    pub(super) fn register(&mut self, token: String, deliver: ProgressFn) {
        let (mut mine, rest): (Vec<_>, Vec<_>) =
            self.early.drain(..).partition(|(t, _)| *t == token);
        self.early = rest.into();
        mine.sort_by(|a, b| a.1.progress.total_cmp(&b.1.progress));
        let mut route = Route {
            deliver,
            last: f64::NEG_INFINITY,
        };
        for (_, progress) in mine {
            route.offer(progress);
        }
        self.calls.insert(token, route);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn progress(step: f64) -> Progress {
        Progress {
            progress: step,
            total: Some(3.0),
            message: None,
        }
    }

    #[test]
    fn early_progress_is_handed_over_and_stale_progress_dropped() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let deliver: ProgressFn = Arc::new(move |p: Progress| {
            sink.lock().expect("lock").push(p.progress);
        });
        let mut routes = Routes::default();
        // Before the call registered: kept, in whatever order they came.
        routes.early.push_back(("7".into(), progress(2.0)));
        routes.early.push_back(("other".into(), progress(1.0)));
        routes.early.push_back(("7".into(), progress(1.0)));
        routes.register("7".into(), deliver);
        assert_eq!(*seen.lock().expect("lock"), [1.0, 2.0]);
        assert_eq!(routes.early.len(), 1, "another call's stays");
        let route = routes.calls.get_mut("7").expect("registered");
        route.offer(progress(1.5));
        route.offer(progress(3.0));
        assert_eq!(*seen.lock().expect("lock"), [1.0, 2.0, 3.0]);
    }
}
