//! Holding delivery while the active session is switched: a guard, so that no path
//! (an error, an early return, a panic) can leave the supervisor held.

use super::Supervisor;

/// While alive, the supervisor delivers nothing (notifications and parked messages
/// keep arriving and wait); dropping the last one delivers what waits, as
/// [`Supervisor::release`] does. A supervisor already stopped starts nothing on drop.
#[must_use = "delivery resumes as soon as the hold is dropped"]
pub struct SwitchHold {
    supervisor: Supervisor,
}

impl Supervisor {
    /// Stops delivering notifications until the returned guard (and every other one
    /// alive) is dropped. Take it before replacing the agent's history with another
    /// session's, and keep it until that session is in place.
    pub fn hold_for_switch(&self) -> SwitchHold {
        self.inner.lock().switch_holds += 1;
        SwitchHold {
            supervisor: self.clone(),
        }
    }

    /// Whether a [`SwitchHold`] is alive (nothing is delivered meanwhile).
    pub fn held_for_switch(&self) -> bool {
        self.inner.lock().switch_holds > 0
    }
}

impl Drop for SwitchHold {
    fn drop(&mut self) {
        let supervisor = &self.supervisor;
        let inner = &supervisor.inner;
        let mut state = inner.lock();
        state.switch_holds = state.switch_holds.saturating_sub(1);
        if state.switch_holds > 0 {
            return;
        }
        state.held = false;
        // Quitting holds until after `stop`: nothing may start then.
        if supervisor.stop.is_cancelled() {
            return;
        }
        // Runs may start from here, which needs the runtime the supervisor lives on
        // (the guard may be dropped outside it).
        let _runtime = inner.runtime.enter();
        inner.pump(&mut state);
    }
}

impl std::fmt::Debug for SwitchHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwitchHold").finish_non_exhaustive()
    }
}
